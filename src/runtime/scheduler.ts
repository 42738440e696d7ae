// Periodic work, on the Clock: one pass, then a wait, until the signal aborts.
// The wait runs from the end of a pass, so two passes never overlap (oslo's
// periodic_task spaces them the same way), and a failing pass is logged and
// the next one runs on schedule. The engine's periodic tasks, the built-in
// detection's look and the store reconcilers' sweeps all run through
// Manager.every, on every replica or under a Lease; runEvery is its loop.
import type { Logger } from 'pino';
import type { Clock } from '../time/clock.ts';

export interface PeriodicJob {
  name: string;
  /** From the end of one pass to the start of the next. */
  intervalMs: number;
  /** Before the first pass; default intervalMs. */
  firstAfterMs?: number;
  run(signal: AbortSignal): Promise<unknown> | unknown;
}

/** Runs `job` until `signal` aborts; resolves then (a pass under way is awaited). */
export async function runEvery(job: PeriodicJob, o: { clock: Clock; signal: AbortSignal; log: Logger }): Promise<void> {
  let waitMs = job.firstAfterMs ?? job.intervalMs;
  while (!o.signal.aborted) {
    try {
      await o.clock.sleep(waitMs, o.signal);
    } catch {
      return;
    }
    waitMs = job.intervalMs;
    const started = o.clock.now().getTime();
    try {
      await job.run(o.signal);
      o.log.debug({ task: job.name, ms: o.clock.now().getTime() - started }, 'periodic task pass done');
    } catch (err) {
      if (o.signal.aborted) return;
      o.log.error({ task: job.name, err }, 'periodic task pass failed; next pass on schedule');
    }
  }
}
