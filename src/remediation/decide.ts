// The remediation's state machine as pure functions of what was observed, so
// every rule is testable without an API server:
//   stage()               which step a MasakariRemediation is at
//   notificationOutcome() what a Notification's status means for the remediation
//   waitDelayMs()         how long to wait before looking again
// The reconciler (reconciler.ts) gathers the facts and carries the verdicts out.
import {
  MEDIK8S_ANNOTATIONS,
  REMEDIATION_CONDITIONS,
  REMEDIATION_DEFAULTS,
  REMEDIATION_REASONS,
} from '../model/remediation-constants.ts';
import type { MasakariRemediation, MasakariRemediationSpec } from '../model/remediation-types.ts';
import type { Notification } from '../model/types.ts';

/** A spec with every default applied. */
export type EffectiveSpec = Required<Omit<MasakariRemediationSpec, 'selfNodeRemediationSafeTimeSeconds'>> &
  Pick<MasakariRemediationSpec, 'selfNodeRemediationSafeTimeSeconds'>;

export function effectiveSpec(spec: MasakariRemediationSpec | undefined, operatorNamespace: string): EffectiveSpec {
  return {
    fencingProof: spec?.fencingProof ?? REMEDIATION_DEFAULTS.fencingProof,
    segmentNamespace: spec?.segmentNamespace || operatorNamespace,
    recoveryTimeoutSeconds: spec?.recoveryTimeoutSeconds ?? REMEDIATION_DEFAULTS.recoveryTimeoutSeconds,
    forceDownComputeService: spec?.forceDownComputeService ?? REMEDIATION_DEFAULTS.forceDownComputeService,
    ...(spec?.selfNodeRemediationSafeTimeSeconds
      ? { selfNodeRemediationSafeTimeSeconds: spec.selfNodeRemediationSafeTimeSeconds }
      : {}),
  };
}

/** How a remediation ends: Succeeded=True|False with this reason, Processing=False. */
export interface Finish {
  succeeded: boolean;
  reason: string;
  message: string;
}

export type Stage =
  /** Being deleted: clean up and drop the finalizer. */
  | { kind: 'delete' }
  /** Succeeded is already True or False: nothing more to do. */
  | { kind: 'done' }
  /** No status yet: add the finalizer and report RemediationStarted. */
  | { kind: 'start' }
  | { kind: 'finish'; finish: Finish }
  /** Before the notification exists: lease, fencing gate, force-down, notify. */
  | { kind: 'gate' }
  /** The notification exists: follow its status. */
  | { kind: 'follow' };

const conditionStatus = (r: MasakariRemediation, type: string) =>
  r.status?.conditions?.find((c) => c.type === type)?.status;

export function isFinished(r: MasakariRemediation): boolean {
  const s = conditionStatus(r, REMEDIATION_CONDITIONS.succeeded);
  return s === 'True' || s === 'False';
}

/** When the recovery deadline passes (ms since epoch), or undefined before the start is recorded. */
export function deadlineMs(r: MasakariRemediation, spec: EffectiveSpec): number | undefined {
  const started = Date.parse(r.status?.startedAt ?? '');
  return Number.isFinite(started) ? started + spec.recoveryTimeoutSeconds * 1000 : undefined;
}

/** Reasons of Processing=True that hold the remediation back before the fencing gate is even asked. */
const HOLDING_REASONS: ReadonlySet<string> = new Set([
  REMEDIATION_REASONS.nodeLeaseHeld,
  REMEDIATION_REASONS.nodeLeaseUnreadable,
  REMEDIATION_REASONS.nodeExcluded,
]);

/**
 * Remediations held back now, by their Processing reason (every holding reason present, zeros
 * included): the gauge masakari_remediations_held, so a hold that needs a person (NodeLeaseUnreadable:
 * no lease Role) alerts.
 */
export function heldByReason(items: Iterable<MasakariRemediation>): Map<string, number> {
  const counts = new Map<string, number>([...HOLDING_REASONS].map((reason) => [reason, 0]));
  for (const r of items) {
    const processing = r.status?.conditions?.find((c) => c.type === REMEDIATION_CONDITIONS.processing);
    if (processing?.status === 'True' && HOLDING_REASONS.has(processing.reason)) {
      counts.set(processing.reason, (counts.get(processing.reason) ?? 0) + 1);
    }
  }
  return counts;
}

/** What held the remediation back when it was last looked at (its Processing message), if anything did. */
function heldBackBy(r: MasakariRemediation): string | undefined {
  const processing = r.status?.conditions?.find((c) => c.type === REMEDIATION_CONDITIONS.processing);
  return processing?.status === 'True' && HOLDING_REASONS.has(processing.reason) ? processing.message : undefined;
}

export function stage(r: MasakariRemediation, spec: EffectiveSpec, nowMs: number, hasFinalizer: boolean): Stage {
  if (r.metadata.deletionTimestamp) return { kind: 'delete' };
  if (isFinished(r)) return { kind: 'done' };
  if (!hasFinalizer || !r.status?.startedAt) return { kind: 'start' };
  const nhcTimedOut = r.metadata.annotations?.[MEDIK8S_ANNOTATIONS.nhcTimedOut];
  if (nhcTimedOut !== undefined) {
    const running = r.status.notificationUuid
      ? ` Notification ${r.status.notificationUuid} was already filed; the Masakari engine finishes it, but this remediation no longer reports on it.`
      : ' No notification was filed; nothing was evacuated.';
    return {
      kind: 'finish',
      finish: {
        succeeded: false,
        reason: REMEDIATION_REASONS.timeoutByNhc,
        message: `NodeHealthCheck timed this remediation out at ${nhcTimedOut || 'an unstated time'} (annotation ${MEDIK8S_ANNOTATIONS.nhcTimedOut}).${running}`,
      },
    };
  }
  const deadline = deadlineMs(r, spec);
  if (deadline !== undefined && nowMs >= deadline) {
    const within = `within recoveryTimeoutSeconds=${spec.recoveryTimeoutSeconds} of the start at ${r.status.startedAt}`;
    const heldBack = heldBackBy(r);
    const message = r.status.notificationUuid
      ? `Notification ${r.status.notificationUuid} did not finish ${within}`
      : heldBack
        ? `no notification was filed ${within}: ${heldBack}`
        : `${r.status.fencedAt ? 'the notification could not be filed' : 'fencing was not proven'} ${within}`;
    return { kind: 'finish', finish: { succeeded: false, reason: REMEDIATION_REASONS.timedOut, message } };
  }
  return r.status.notificationName ? { kind: 'follow' } : { kind: 'gate' };
}

/**
 * What the notification's state means: a Finish, or still running with a
 * progress message. An `error` notification is retried by the engine's
 * periodic task; once it has been run again and is still in error, the
 * recovery has failed for our purposes (NHC should escalate rather than wait
 * for the expiry that turns it `failed`).
 */
export function notificationOutcome(n: Notification | undefined, uuid: string): Finish | { running: string } {
  if (!n) {
    return {
      succeeded: false,
      reason: REMEDIATION_REASONS.notificationDeleted,
      message: `Notification ${uuid} no longer exists`,
    };
  }
  const phase = n.status?.phase ?? 'new';
  const detail = n.status?.message ? `: ${n.status.message}` : '';
  const runs = n.status?.runs ?? 0;
  switch (phase) {
    case 'finished':
      return {
        succeeded: true,
        reason: REMEDIATION_REASONS.finished,
        message: `Notification ${uuid} finished: the host's instances are recovered`,
      };
    case 'ignored':
      return {
        succeeded: false,
        reason: REMEDIATION_REASONS.notificationIgnored,
        message: `Notification ${uuid} was ignored by the engine${detail}`,
      };
    case 'failed':
      return {
        succeeded: false,
        reason: REMEDIATION_REASONS.recoveryFailed,
        message: `Notification ${uuid} failed${detail}`,
      };
    case 'error':
      if (runs >= 2) {
        return {
          succeeded: false,
          reason: REMEDIATION_REASONS.recoveryError,
          message: `Notification ${uuid} is still in error after ${runs} runs${detail}`,
        };
      }
      return { running: `Notification ${uuid} is in error; the engine retries it${detail}` };
    default:
      return { running: `Notification ${uuid} is ${phase}` };
  }
}

/**
 * Polling interval while waiting (for fencing, a lease, or the engine):
 * quick at first, then every 30 s, and never past the deadline so the
 * timeout is reported on time.
 */
export function waitDelayMs(startedAtMs: number, nowMs: number, deadline: number | undefined): number {
  const elapsed = Math.max(0, nowMs - startedAtMs);
  const delay = Math.min(30_000, Math.max(2_000, Math.round(elapsed / 10)));
  if (deadline === undefined) return delay;
  return Math.max(500, Math.min(delay, deadline - nowMs + 100));
}
