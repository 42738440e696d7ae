// Masakari's _check_expired_notifications (a periodic task, run from
// notification-tasks.ts's scope), and the same end applied at the engine's
// first look at a notification: a notification older than
// notifications_expired_interval, or whose generated_time is out of bounds,
// ends `failed` (its run cancelled, the servers it locked unlocked, an Event).

import { randomUUID } from 'node:crypto';
import type { Notification } from '../../model/types.ts';
import { admitted, EXPIRABLE_PHASES, phaseOf, writtenBack } from '../intake/admitted-notification.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { dropManagedFields } from '../status/drop-managed-fields.ts';
import { EVENT_REASONS } from '../telemetry/event-reasons.ts';
import { countFinalStatus, countStale } from '../telemetry/metrics.ts';
import { staleness } from '../../domain/freshness.ts';
import { emitPhaseEvent } from '../telemetry/phase-events.ts';
import { fencedNova } from '../../runtime/lease-fence.ts';
import { statusWriterFor } from '../status/writer-for.ts';
import { NotificationExpired } from '../run/cancellation.ts';
import { sweepExpiredRunLocks } from '../run/server-lock-sweep.ts';
import { NotOwnerError } from '../status/writer.ts';
import type { StatusGuard } from '../status/writer.ts';
import { parseGeneratedTime, rfc3339Seconds } from '../../time/format.ts';
import type { NotificationTaskScope } from './notification-tasks.ts';

/**
 * Masakari's _check_expired_notifications: new/running/error notifications
 * whose generated_time is older than notifications_expired_interval become
 * `failed`. Unlike upstream, a run still in flight is cancelled and the
 * servers it locked are unlocked.
 */
export async function checkExpired(x: NotificationTaskScope): Promise<void> {
  if (!x.term()) return;
  const now = x.d.clock.now().getTime();
  const maxAge = x.d.config.DEFAULT.notifications_expired_interval * 1000;
  for (const n of x.d.notifications.list().map(admitted)) {
    if (!n || !EXPIRABLE_PHASES.includes(phaseOf(n))) continue;
    const generated = parseGeneratedTime(n.spec.generatedTime);
    if (Number.isNaN(generated) || now - generated <= maxAge) continue;
    const message = `Notification ${n.status.uuid} is expired.`;
    const log = `Periodic task 'check_expired_notifications': ${message}`;
    await expire(x, n, { message, log, eventReason: EVENT_REASONS.recoveryExpired }).catch((err) =>
      x.d.log.warn({ err, notification: n.status.uuid }, 'could not expire notification; next pass retries'),
    );
  }
}

const stillExpirable: StatusGuard = (x) =>
  EXPIRABLE_PHASES.includes(phaseOf(x)) ? undefined : `notification is '${phaseOf(x)}'`;

/**
 * Freshness at the engine's first look (src/domain/freshness.ts): a
 * notification whose generated_time is out of bounds ends `failed` at once,
 * as the periodic expiry would end it, without a run, a fencing wait or a Nova
 * call. True when it did (or the notification moved on meanwhile).
 */
export async function failIfStale(x: NotificationTaskScope, n: AdmittedNotification): Promise<boolean> {
  const stale = staleness(
    { uuid: n.status.uuid, generatedTime: n.spec.generatedTime },
    x.d.clock.now().getTime(),
    x.d.config.DEFAULT.notifications_expired_interval,
  );
  if (!stale) return false;
  const eventReason = stale.kind === 'expired' ? EVENT_REASONS.recoveryExpired : EVENT_REASONS.generatedTimeInFuture;
  if (await expire(x, n, { message: stale.reason, log: stale.reason, eventReason }))
    countStale(n.spec.type, stale.kind);
  return true;
}

/**
 * Ends `n` failed with `message` (cancelling its run if one is in flight
 * here, releasing the locks of one interrupted); false when it had moved on.
 */
async function expire(
  x: NotificationTaskScope,
  n: AdmittedNotification,
  why: { message: string; log: string; eventReason: string },
): Promise<boolean> {
  const { d } = x;
  const key = n.metadata.name;
  const uuid = n.status.uuid;
  const term = x.term();
  if (!term) return false;
  const writer = statusWriterFor(d, n, stillExpirable, term.signal, d.log);
  let stored: Notification;
  try {
    stored = await writer.mutate((s, e) => {
      s.phase = 'failed';
      s.updatedAt = rfc3339Seconds(d.clock.now());
      e.lastError = why.message;
    });
  } catch (err) {
    if (err instanceof NotOwnerError) return false;
    throw err;
  }
  d.log.warn({ notification: uuid, previous: phaseOf(n) }, why.log);
  countFinalStatus(n.spec.type, 'failed');
  emitPhaseEvent(d, writtenBack(stored), 'Warning', why.eventReason, why.message);
  x.lastChance.delete(key);
  if (x.runs.isRunning(key)) {
    await x.runs.cancel(key, new NotificationExpired(uuid));
  } else if (phaseOf(n) === 'running' || phaseOf(n) === 'error') {
    // Interrupted earlier and never resumed, or in error with an unlock Nova refused (awaiting the retry that
    // would have swept it): its locks are still ours to release, and this is the last chance before retention.
    const log = d.log.child({ notification: uuid });
    await sweepExpiredRunLocks(d, writer, {
      log,
      requestId: `req-${randomUUID()}`,
      signal: term.signal,
      nova: fencedNova(d, term, d.log),
    });
  }
  // Conditional on the expiry's own write: after a lock sweep that wrote again, it leaves the object alone.
  await dropManagedFields(d.kube, d.namespace, stored, d.log);
  return true;
}
