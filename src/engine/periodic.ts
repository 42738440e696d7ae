// Masakari's periodic tasks, run by the leader only: each task sleeps its
// configured spacing, runs, and repeats until leadership ends. A failing pass
// is logged and the next pass runs on schedule (oslo's periodic_task does the
// same). Masakari runs both tasks one after the other in one greenthread;
// here each has its own loop, so a long expiry pass never delays retries.

import type { Logger } from 'pino';
import type { Clock } from '../time/clock.ts';

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
