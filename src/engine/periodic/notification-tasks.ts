// Masakari's periodic tasks (engine/manager.py), run by the leader only:
// processing unfinished notifications (here) and expiring old ones
// (expiry.ts). Each task sleeps its configured spacing, runs, and repeats
// until leadership ends: the engine runs them with Manager.every under its
// Lease. A failing pass is logged and the next pass runs on schedule (oslo's
// periodic_task does the same). Masakari runs both tasks one
// after the other in one greenthread; here each has its own loop, so a long
// expiry pass never delays retries.

import { admitted, phaseOf } from '../intake/admitted-notification.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import type { FencingWait } from '../gates/fencing-wait.ts';
import type { BmcFence } from '../gates/bmc-fence.ts';
import type { RecoveryBrake } from '../gates/recovery-brake.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import type { LeadershipTerm } from '../deps/leadership-term.ts';
import type { RunExecutor } from '../run/executor.ts';
import type { PeriodicJob } from '../../runtime/scheduler.ts';
import { parseGeneratedTime } from '../../time/format.ts';
import { newestFirst } from '../../domain/created-at.ts';

/**
 * A Masakari periodic task as a job of the runtime's scheduler (Manager.every,
 * src/runtime/scheduler.ts): `spacingSeconds` (e.g.
 * process_unfinished_notifications_interval) from the end of one pass to the
 * start of the next, never less than a second.
 */
export function periodicTask(name: string, spacingSeconds: number, run: () => Promise<void> | void): PeriodicJob {
  return { name, intervalMs: Math.max(spacingSeconds, 1) * 1000, run: () => run() };
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
