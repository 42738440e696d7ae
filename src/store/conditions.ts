// The Ready condition as the store and its reconcilers write it, on the
// runtime's metav1.Condition helpers (lastTransitionTime changes only when
// the status flips).
import { CONDITIONS } from '../model/constants.ts';
import type { Condition, NotificationStatus, NotificationStatusBlock } from '../model/types.ts';
import { getCondition, removeCondition, setCondition } from '../runtime/conditions.ts';
import { systemClock } from '../time/clock.ts';

/** Ready=True for an admitted object, the same whichever path (REST or reconciler) admitted it. */
export const ADMITTED = { reason: 'Admitted', message: 'Visible through the Masakari API.' } as const;

export function withReady(
  existing: Condition[] | undefined,
  status: Condition['status'],
  reason: string,
  message: string,
  observedGeneration: number | undefined,
  now: Date = systemClock.now(),
): Condition[] {
  return setCondition(existing, { type: CONDITIONS.ready, status, reason, message, observedGeneration }, now);
}

/** Ready=True(Admitted) set on `existing`, for the object's current generation. */
export function admittedConditions(
  existing: Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  return withReady(existing, 'True', ADMITTED.reason, ADMITTED.message, generation, now);
}

/** True when writing `next` would change nothing a reader cares about (ignores lastTransitionTime). */
export function sameReady(existing: Condition[] | undefined, next: Condition[]): boolean {
  const a = getCondition(existing, CONDITIONS.ready);
  const b = getCondition(next, CONDITIONS.ready);
  if (!a || !b) return a === b;
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration
  );
}

/**
 * Conditions of an admitted Notification, derived from its phase so that
 * GitOps tools read a recovery's outcome the way they read any object's
 * health (docs/gitops.md): kstatus (Flux, cli-utils) reads Reconciling and
 * Stalled before Ready, `kubectl wait --for=condition=Ready` and Flux CEL
 * health checks read Ready.
 *
 *   new, running  Ready=Unknown, Reconciling=True  kstatus InProgress
 *   error         Ready=False,   Reconciling=True  InProgress (the engine retries it once more)
 *   finished      Ready=True                       Current
 *   ignored       Ready=True                       Current (nothing to recover)
 *   failed        Ready=False,   Stalled=True      Failed (a person must act)
 *
 * Ready=False for a recovery outcome does not hide the notification from the
 * Masakari API: only the admission refusals of REASONS do (isRefused).
 */
export const RECOVERY_REASONS = {
  pending: 'RecoveryPending',
  running: 'RecoveryRunning',
  error: 'RecoveryError',
  finished: 'RecoveryFinished',
  ignored: 'Ignored',
  failed: 'RecoveryFailed',
} as const;

const PHASE_CONDITIONS: Record<
  NotificationStatus,
  { ready: Condition['status']; reason: string; message: string; kstatus?: 'Reconciling' | 'Stalled' }
> = {
  new: {
    ready: 'Unknown',
    reason: RECOVERY_REASONS.pending,
    message: 'Waiting for the engine to start the recovery.',
    kstatus: 'Reconciling',
  },
  running: {
    ready: 'Unknown',
    reason: RECOVERY_REASONS.running,
    message: 'The engine is running the recovery.',
    kstatus: 'Reconciling',
  },
  error: {
    ready: 'False',
    reason: RECOVERY_REASONS.error,
    message: 'The recovery ended in error; the engine retries it once more.',
    kstatus: 'Reconciling',
  },
  finished: { ready: 'True', reason: RECOVERY_REASONS.finished, message: 'The recovery finished.' },
  ignored: { ready: 'True', reason: RECOVERY_REASONS.ignored, message: 'Nothing to recover for this notification.' },
  failed: {
    ready: 'False',
    reason: RECOVERY_REASONS.failed,
    message: 'The recovery failed; the operator must act (see status.message and the events).',
    kstatus: 'Stalled',
  },
};

export function notificationConditions(
  existing: Condition[] | undefined,
  phase: NotificationStatus,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const want = PHASE_CONDITIONS[phase];
  let conditions = withReady(existing, want.ready, want.reason, want.message, generation, now);
  for (const type of [CONDITIONS.reconciling, CONDITIONS.stalled]) {
    conditions =
      type === want.kstatus
        ? setCondition(
            conditions,
            { type, status: 'True', reason: want.reason, message: want.message, observedGeneration: generation },
            now,
          )
        : removeCondition(conditions, type);
  }
  return conditions;
}

/**
 * Sets the phase's conditions on a Notification about to be written: called
 * by every status write that may change the phase (the engine's), so the
 * conditions change in the same write as the phase and never cost one of
 * their own.
 */
export function syncNotificationConditions(
  status: NotificationStatusBlock,
  now: Date,
  generation: number | undefined,
): void {
  const phase = status.phase ?? 'new';
  status.conditions = notificationConditions(status.conditions, phase, generation, now);
  // RecoveryHeld (the engine's brakes on mass failure) holds only a notification that is new or in error.
  const held = getCondition(status.conditions, CONDITIONS.recoveryHeld);
  if (held?.status === 'True' && phase !== 'new' && phase !== 'error') {
    status.conditions = setCondition(
      status.conditions,
      { type: CONDITIONS.recoveryHeld, status: 'False', reason: 'NotHeld', message: `The notification is ${phase}.` },
      now,
    );
  }
}
