// Masakari's periodic tasks (engine/manager.py), run by the leader only:
// processing unfinished notifications and expiring old ones. Each task sleeps
// its configured spacing, runs, and repeats until leadership ends. A failing pass
// is logged and the next pass runs on schedule (oslo's periodic_task does the
// same). Masakari runs both tasks one after the other in one greenthread;
// here each has its own loop, so a long expiry pass never delays retries.
// Expiry's end (failed, Event, lock sweep) is shared with the freshness check
// the processor applies when it first looks at a notification (failIfStale).

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Notification } from '../model/types.ts';
import { admitted, EXPIRABLE_PHASES, phaseOf, writtenBack } from './admitted-notification.ts';
import type { AdmittedNotification } from './admitted-notification.ts';
import { dropManagedFields } from './drop-managed-fields.ts';
import { EVENT_REASONS } from './event-reasons.ts';
import type { FencingWait } from './fencing-wait.ts';
import type { BmcFence } from './bmc-fence.ts';
import type { RecoveryBrake } from './recovery-brake.ts';
import { countFinalStatus, countStale } from './metrics.ts';
import { staleness } from '../domain/freshness.ts';
import { emitPhaseEvent, fencedNova, statusWriterFor } from './processor-deps.ts';
import type { LeadershipTerm, ProcessorDeps } from './processor-deps.ts';
import { NotificationExpired } from './run-cancellation.ts';
import type { RunExecutor } from './run-executor.ts';
import { sweepExpiredRunLocks } from './run-server-lock-sweep.ts';
import { NotOwnerError } from './status-writer.ts';
import type { StatusGuard } from './status-writer.ts';
import type { Clock } from '../time/clock.ts';
import { parseGeneratedTime, rfc3339Seconds } from '../time/format.ts';
import { newestFirst } from '../domain/created-at.ts';

export interface PeriodicTask {
  name: string;
  /** Spacing in seconds (e.g. process_unfinished_notifications_interval). */
  spacingSeconds: number;
  run(): Promise<void> | void;
}

/** Runs `task` every spacingSeconds until `signal` aborts; resolves then. */
export async function runPeriodic(
  task: PeriodicTask,
  o: { clock: Clock; signal: AbortSignal; log: Logger },
): Promise<void> {
  const spacingMs = Math.max(task.spacingSeconds, 1) * 1000;
  while (!o.signal.aborted) {
    try {
      await o.clock.sleep(spacingMs, o.signal);
    } catch {
      return;
    }
    const started = o.clock.now().getTime();
    try {
      await task.run();
      o.log.debug({ task: task.name, ms: o.clock.now().getTime() - started }, 'periodic task pass done');
    } catch (err) {
      o.log.error({ task: task.name, err }, 'periodic task pass failed; next pass on schedule');
    }
  }
}

// ---------------------------------------------------------------- Masakari's two tasks

/** What the two notification tasks read and touch of the processor. */
export interface NotificationTaskScope {
  d: ProcessorDeps;
  term(): LeadershipTerm | undefined;
  runs: RunExecutor;
  /** Keys picked for their single last attempt (error retry, stuck new); the processor consumes them. */
  lastChance: Set<string>;
  fencingWait: FencingWait;
  bmcFence: BmcFence;
  brake: RecoveryBrake;
  /** Resolves once the last attempt of `key` is over: its run ended, or the processor decided without one. */
  attemptSettled(key: string): Promise<void>;
}

/** The longest processUnfinished waits for one last attempt before it starts the next anyway. */
export const LAST_ATTEMPT_WAIT_MS = 600_000;

/**
 * The least time between the starts of two retries of one pass: at most one
 * a second. A retry whose Nova call fails at once (an instance Nova does not
 * know) ends at once, after nine API requests (four status writes, four
 * Events, a read), so back to back a pass over a storm's notifications in
 * error kept the API server busy for as long as it ran, and new
 * notifications waited behind them (docs/benchmarks.md, "Scale"). A retry is background work (a
 * pass runs every two minutes, and Masakari's own retries each wait for
 * Nova); intake is not.
 */
export const RETRY_SPACING_MS = 1_000;

/**
 * Masakari's _process_unfinished_notifications: every `error` gets one
 * retry, every `new` older than retry_notification_new_status_interval one
 * attempt; an error on that attempt ends `failed`. Newest first, and one at a
 * time: Masakari runs each inside its periodic task before it looks at the
 * next (masakari/engine/manager.py). Started all at once, a pass over many
 * notifications in error (after a storm of VM notifications, say) put every
 * retry's Nova calls and status writes into the same second, beside the API's
 * own requests (docs/benchmarks.md, Scale). A retry that takes longer than
 * LAST_ATTEMPT_WAIT_MS (a long evacuation) lets the next one start; one that
 * ends sooner waits out RETRY_SPACING_MS before the next starts.
 */
export async function processUnfinished(x: NotificationTaskScope): Promise<void> {
  if (!x.term()) return;
  const now = x.d.clock.now().getTime();
  const candidates = x.d.notifications
    .list()
    .map(admitted)
    .filter((n): n is AdmittedNotification => n !== undefined && isRetryCandidate(x, n, now))
    .sort(newestFirst);
  let lastStart: number | undefined;
  for (const picked of candidates) {
    const term = x.term();
    if (!term || term.signal.aborted) return;
    const wait = lastStart === undefined ? 0 : lastStart + RETRY_SPACING_MS - x.d.clock.now().getTime();
    if (wait > 0) {
      await x.d.clock.sleep(wait, term.signal).catch(() => undefined); // rejects when leadership ends
      if (term.signal.aborted) return;
    }
    const key = picked.metadata.name;
    // Looked at again at its turn: an earlier retry may have taken long, and this one may have moved on meanwhile.
    const n = admitted(x.d.notifications.get(key));
    if (!n || !isRetryCandidate(x, n, now)) continue;
    x.lastChance.add(key);
    lastStart = x.d.clock.now().getTime();
    x.d.log.info(
      { notification: n.status.uuid, status: phaseOf(n) },
      phaseOf(n) === 'error'
        ? 'periodic task: retrying a notification in error once'
        : 'periodic task: processing a notification stuck in new',
    );
    x.d.enqueue(key);
    await untilSettledOrTimeout(x, key, term.signal);
  }
}

/** In error, or new for longer than retry_notification_new_status_interval, and not being processed. */
function isRetryCandidate(x: NotificationTaskScope, n: AdmittedNotification, now: number): boolean {
  if (n.metadata.deletionTimestamp || x.runs.isRunning(n.metadata.name)) return false;
  const phase = phaseOf(n);
  if (phase === 'error') return true;
  const key = n.metadata.name;
  if (phase !== 'new' || x.fencingWait.isWaiting(key) || x.bmcFence.isHolding(key) || x.brake.isHolding(key)) {
    return false;
  }
  const generated = parseGeneratedTime(n.spec.generatedTime);
  const newAge = x.d.config.DEFAULT.retry_notification_new_status_interval * 1000;
  return !Number.isNaN(generated) && now - generated > newAge;
}

/** Waits for the attempt of `key` to be over, LAST_ATTEMPT_WAIT_MS at most, or until leadership ends. */
async function untilSettledOrTimeout(x: NotificationTaskScope, key: string, termSignal: AbortSignal): Promise<void> {
  let done!: () => void;
  const stop = new Promise<void>((resolve) => (done = resolve));
  // An armed timer, not sleep(): a test's fake clock fires it when time reaches it instead of jumping ahead.
  const timer = x.d.clock.setTimeout(done, LAST_ATTEMPT_WAIT_MS);
  termSignal.addEventListener('abort', done, { once: true });
  try {
    await Promise.race([x.attemptSettled(key), stop]);
  } finally {
    x.d.clock.clearTimeout(timer);
    termSignal.removeEventListener('abort', done);
  }
}

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
