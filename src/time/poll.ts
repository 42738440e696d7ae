// The one bounded poll of the process, in milliseconds (Masakari's
// FixedIntervalWithTimeoutLoopingCall and its LoopingCallTimeOut). Every wait
// on an outside state goes through pollUntil, so every timeout is a
// PollTimeout of this module and `instanceof PollTimeout` means the same
// thing everywhere.

import type { Clock } from './clock.ts';

/** Raised when the deadline passes before the probe reports done (Masakari's LoopingCallTimeOut). */
export class PollTimeout extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}`);
    this.name = 'PollTimeout';
  }
}

export interface PollSchedule {
  /** Delay before the first probe (0 = probe at once). */
  firstDelayMs: number;
  /** Delay after the first unsuccessful probe, growing from there (default: grows from firstDelayMs). */
  thenDelayMs?: number;
  /** Growth factor of the delay between probes. */
  factor: number;
  /** Upper bound of the delay between probes (Masakari's verify_interval). */
  maxDelayMs: number;
  /** Overall bound (Masakari's wait_period_* option). */
  timeoutMs: number;
}

/** Probe at once, then every intervalMs, until timeoutMs (oslo's FixedIntervalWithTimeoutLoopingCall). */
export function fixedSchedule(intervalMs: number, timeoutMs: number): PollSchedule {
  return { firstDelayMs: 0, thenDelayMs: intervalMs, factor: 1, maxDelayMs: intervalMs, timeoutMs };
}

/**
 * Calls probe until it returns a value other than undefined and returns that
 * value. Throws PollTimeout once timeoutMs has passed (one last probe runs at
 * the deadline, so a state reached just in time still counts, as oslo checks
 * the deadline after each unsuccessful probe), rethrows what probe throws,
 * and rejects with the signal's reason when aborted.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  schedule: PollSchedule,
  clock: Pick<Clock, 'now' | 'sleep'>,
  signal: AbortSignal,
): Promise<T> {
  const deadline = clock.now().getTime() + schedule.timeoutMs;
  let delay = Math.max(0, schedule.firstDelayMs);
  let first = true;
  for (;;) {
    const remaining = deadline - clock.now().getTime();
    if (delay > 0) await clock.sleep(Math.max(0, Math.min(delay, remaining)), signal);
    signal.throwIfAborted();
    const value = await probe();
    if (value !== undefined) return value;
    if (clock.now().getTime() >= deadline) throw new PollTimeout(what, schedule.timeoutMs);
    if (first && schedule.thenDelayMs !== undefined) delay = schedule.thenDelayMs;
    else
      delay = Math.round(
        Math.min(schedule.maxDelayMs, Math.max(delay * schedule.factor, Math.min(50, schedule.maxDelayMs))),
      );
    first = false;
  }
}
