// Freshness of a notification: whether its generated_time still allows a
// recovery. Masakari expires a notification only in its periodic task
// (masakari/engine/manager.py _check_expired_notifications), so one that
// arrives already older than notifications_expired_interval runs first; here
// the engine applies the same bound when it first looks at a notification
// (src/engine/notification-processor.ts), and the webhook warns a kubectl
// author of the outcome. Pure, so both decide alike.
import { parseGeneratedTime } from '../time/format.ts';

/**
 * How far a generated_time may lie ahead of the engine's clock before the
 * notification is refused: a sender's clock minutes fast (NTP not yet in step
 * after a reboot), and clients that date a notification ten minutes ahead so
 * that Masakari's periodic task leaves it to the RPC path (this project's
 * reference-engine comparison does), are tolerated; further ahead, its age,
 * and with it expiry and the duplicate window, cannot be known.
 */
export const GENERATED_TIME_FUTURE_TOLERANCE_S = 900;

/** Why a notification must not be run for its generated_time. */
export type Staleness = { kind: 'expired' | 'future'; reason: string };

/**
 * Freshness, decided before anything else about a notification the engine is
 * about to run: one whose generated_time is older than
 * notifications_expired_interval is expired (Masakari's expiry, applied at
 * once rather than at the periodic task's next pass, so a stale or replayed
 * notification never runs); one more than GENERATED_TIME_FUTURE_TOLERANCE_S
 * ahead is refused. An unparsable time is left to the rules that already
 * handle it (the API validates it; the periodic task ignores it).
 */
export function staleness(
  n: { uuid: string; generatedTime: string },
  nowMs: number,
  expiredIntervalS: number,
): Staleness | undefined {
  const generated = parseGeneratedTime(n.generatedTime);
  if (Number.isNaN(generated)) return undefined;
  if (nowMs - generated > expiredIntervalS * 1000) {
    return {
      kind: 'expired',
      reason:
        `Notification ${n.uuid} is expired: its generated_time ${n.generatedTime} is older than ` +
        `notifications_expired_interval (${expiredIntervalS} s); it is not run.`,
    };
  }
  const aheadS = Math.floor((generated - nowMs) / 1000);
  if (aheadS > GENERATED_TIME_FUTURE_TOLERANCE_S) {
    return {
      kind: 'future',
      reason:
        `Notification ${n.uuid} is refused: its generated_time ${n.generatedTime} is ${aheadS} s in the future, ` +
        `more than the clock-skew tolerance (${GENERATED_TIME_FUTURE_TOLERANCE_S} s); it is not run.`,
    };
  }
  return undefined;
}
