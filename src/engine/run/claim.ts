// The two writes a decision makes from the cached object, each one
// resourceVersion-checked status patch (a 409 goes back to the caller, which
// decides again on the newer version): claiming a run — Masakari's "stored
// status is no longer new → skip" guard, made atomic — and finishing without
// a run when the decision needs no workflow.

import type { Plan } from '../intake/decisions.ts';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification, NotificationStatusBlock } from '../../model/types.ts';
import { syncNotificationConditions } from '../../store/index.ts';
import { setCondition } from '../../runtime/conditions.ts';
import type { ConditionInput } from '../../runtime/conditions.ts';
import { phaseOf, writtenBack } from '../intake/admitted-notification.ts';
import { dropManagedFields } from '../status/drop-managed-fields.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { EVENT_REASONS, finalStatusReason } from '../telemetry/event-reasons.ts';
import { countFinalStatus } from '../telemetry/metrics.ts';
import { emitPhaseEvent } from '../telemetry/phase-events.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import { statusPatch } from '../status/patch.ts';
import { engineOf } from '../status/writer.ts';
import type { EngineBookkeeping } from '../status/writer.ts';
import { rfc3339Seconds } from '../../time/format.ts';

/** new: the first run; retry: the periodic task's retry of an error; resume: taking over an interrupted run. */
export type RunMode = 'new' | 'retry' | 'resume';

const EXPECTED_PHASE: Record<RunMode, string> = { new: 'new', retry: 'error', resume: 'running' };

/**
 * The guarded transition into `running`: new/error → running with a new run
 * number, or a take-over of a running run (the new owner's token fences off
 * the old owner's writes). Undefined when the notification is not in the
 * expected phase any more. `condition` is set in the same write (the brakes'
 * release of a held notification).
 */
export async function claimRun(
  d: ProcessorDeps,
  n: AdmittedNotification,
  token: string,
  mode: RunMode,
  finalAttempt: boolean,
  condition?: ConditionInput,
): Promise<AdmittedNotification | undefined> {
  if (phaseOf(n) !== EXPECTED_PHASE[mode]) return undefined;
  const now = d.clock.now();
  const stored = await casStatus(d, n, (s, engine) => {
    if (condition) s.conditions = setCondition(s.conditions, condition, now);
    if (mode !== 'resume') {
      s.phase = 'running';
      s.runs = (s.runs ?? 0) + 1;
      s.updatedAt = rfc3339Seconds(now);
      engine.finalAttempt = finalAttempt;
      engine.firstStartedAt ??= now.toISOString();
    }
    engine.owner = token;
  });
  const run = (stored.status.runs ?? 1) - 1;
  const ctx = { notification: stored.status.uuid, type: n.spec.type, run, owner: token };
  if (mode === 'resume') d.log.info(ctx, 'resuming an interrupted run');
  else if (mode === 'retry') d.log.info(ctx, 'periodic retry of a notification in error (its last attempt)');
  else d.log.info({ ...ctx, lastAttempt: finalAttempt }, 'notification processing started');
  emitPhaseEvent(
    d,
    stored,
    'Normal',
    mode === 'resume' ? EVENT_REASONS.recoveryResumed : EVENT_REASONS.recoveryStarted,
    `Recovery run ${run} started by ${d.identity}`,
  );
  return stored;
}

/** A decision that needs no workflow: one write straight to the final status. */
export async function finishWithoutRun(
  d: ProcessorDeps,
  n: AdmittedNotification,
  plan: Extract<Plan, { kind: 'final' }>,
): Promise<void> {
  const stored = await casStatus(d, n, (s) => {
    s.phase = plan.status;
    if (plan.message !== undefined) s.message = plan.message;
    s.updatedAt = rfc3339Seconds(d.clock.now());
  });
  const level = plan.status === 'ignored' ? 'warn' : 'info';
  d.log[level]({ notification: stored.status.uuid, type: n.spec.type, status: plan.status }, plan.reason);
  countFinalStatus(n.spec.type, plan.status);
  emitPhaseEvent(d, stored, 'Normal', finalStatusReason(plan.status), plan.reason);
  await dropManagedFields(d.kube, d.namespace, stored, d.log);
}

/** One resourceVersion-checked status patch from the cached object; throws the 409 to the caller. */
export async function casStatus(
  d: ProcessorDeps,
  n: AdmittedNotification,
  mutate: (s: NotificationStatusBlock, e: EngineBookkeeping) => void,
): Promise<AdmittedNotification> {
  const before: NotificationStatusBlock = n.status;
  const status = structuredClone(before);
  mutate(status, engineOf(status));
  syncNotificationConditions(status, d.clock.now(), n.metadata.generation);
  const patch = statusPatch(
    before as Record<string, unknown>,
    status as Record<string, unknown>,
    n.metadata.resourceVersion,
  );
  const stored = await d.kube.jsonPatch<Notification>(RESOURCES.notifications, d.namespace, n.metadata.name, patch, {
    fieldManager: FIELD_MANAGERS.engine,
    status: true,
  });
  d.notifications.upsertLocal(stored);
  return writtenBack(stored);
}
