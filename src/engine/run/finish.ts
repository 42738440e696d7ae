// The end of a run: its final status in one write (an error on the
// notification's last attempt becomes `failed`, Masakari's periodic task
// rule), Masakari's log lines, the final-status metric and Events; then an
// ended notification sheds its managedFields (status/drop-managed-fields.ts).

import type { Logger } from 'pino';
import { writtenBack } from '../intake/admitted-notification.ts';
import { dropManagedFields } from '../status/drop-managed-fields.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { EVENT_REASONS, finalStatusReason, SERVICE_DISABLING_TASKS } from '../telemetry/event-reasons.ts';
import { countFinalStatus } from '../telemetry/metrics.ts';
import type { Outcome } from './outcomes.ts';
import { emitPhaseEvent } from '../telemetry/phase-events.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import { engineOf, NotOwnerError } from '../status/writer.ts';
import type { NotificationStatusWriter } from '../status/writer.ts';
import { rfc3339Seconds } from '../../time/format.ts';

/** Writes the final status of a run; false when it could not be written and the run must be taken over again. */
export async function finishRun(
  d: ProcessorDeps,
  n: AdmittedNotification,
  writer: NotificationStatusWriter,
  outcome: Outcome,
  log: Logger,
): Promise<boolean> {
  const engine = engineOf(structuredClone(writer.current().status ?? {}));
  const failed = outcome.status === 'error' && engine.finalAttempt === true;
  const status = failed ? 'failed' : outcome.status;
  const now = d.clock.now();
  let stored: AdmittedNotification;
  try {
    stored = writtenBack(
      await writer.mutate((s, e) => {
        s.phase = status;
        s.updatedAt = rfc3339Seconds(now);
        if (outcome.message !== undefined) s.message = outcome.message;
        if (outcome.status === 'error')
          e.lastError = outcome.detail ? `${outcome.reason} (${outcome.detail})` : outcome.reason;
      }),
    );
  } catch (err) {
    if (err instanceof NotOwnerError) {
      log.warn({ err }, 'final status not written: the run is no longer ours');
      return true;
    }
    log.error({ err }, 'could not write the final status; the run will be taken over again');
    return false;
  }
  const uuid = n.status.uuid;
  const fields = { status, reason: outcome.reason, ...(outcome.detail ? { detail: outcome.detail } : {}) };
  if (outcome.status === 'error')
    log.error(fields, `Failed to process notification '${uuid}'. Reason: ${outcome.reason}`);
  else log.info(fields, `notification ${status}: ${outcome.reason}`);
  if (failed)
    log.warn(`Periodic task 'process_unfinished_notifications': Notification ${uuid} exits with status: failed.`);
  const started = Date.parse(engine.firstStartedAt ?? '');
  countFinalStatus(n.spec.type, status, Number.isNaN(started) ? undefined : (now.getTime() - started) / 1000);
  const message = outcome.detail ? `${outcome.reason} (${outcome.detail})` : outcome.reason;
  emitServiceDisabled(d, stored);
  emitPhaseEvent(
    d,
    stored,
    status === 'error' || status === 'failed' ? 'Warning' : 'Normal',
    finalStatusReason(status),
    message,
  );
  await dropManagedFields(d.kube, d.namespace, stored, log);
  return true;
}

/** ServiceDisabled when the run that just ended disabled the host's compute service (its journal says so). */
function emitServiceDisabled(d: ProcessorDeps, n: AdmittedNotification): void {
  const run = (n.status.runs ?? 1) - 1;
  const disabled = n.status.recoveryWorkflowDetails?.find(
    (e) => SERVICE_DISABLING_TASKS.has(e.name) && e.state === 'SUCCESS' && (e.run ?? 0) === run,
  );
  if (!disabled) return;
  emitPhaseEvent(
    d,
    n,
    'Normal',
    EVENT_REASONS.serviceDisabled,
    `Disabled the compute service of host ${n.spec.hostname}.`,
  );
}
