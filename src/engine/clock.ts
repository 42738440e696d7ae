// The real Clock of the WorkflowContext contract, and the bounded poll every
// wait in the workflows uses (Masakari's FixedIntervalWithTimeoutLoopingCall).

import type { Clock } from './workflows/context.ts';
import { abortableSleep } from '../openstack/http.ts';

export const systemClock: Clock = {
  now: () => new Date(),
  // The OpenStack client's sleep: rejects with the signal's reason when aborted.
  sleep: abortableSleep,
};

/** Raised when a poll runs out of time (Masakari's LoopingCallTimeOut). */
export class PollTimeout extends Error {
  constructor(what: string, timeoutSeconds: number) {
    super(`Timed out after ${timeoutSeconds}s waiting for ${what}`);
    this.name = 'PollTimeout';
  }
}

export interface PollOptions {
  clock: Clock;
  signal: AbortSignal;
  /** Seconds between polls ([DEFAULT] verify_interval). */
  intervalSeconds: number;
  /** Seconds until PollTimeout (e.g. wait_period_after_power_off). */
  timeoutSeconds: number;
  /** For the timeout message and logs. */
  what: string;
}

/**
 * Calls `check` immediately, then every intervalSeconds, until it returns
 * true. Like oslo's FixedIntervalWithTimeoutLoopingCall, the deadline is
 * checked after each unsuccessful probe, so a state reached just in time is
 * still seen. Errors from `check` propagate at once (Masakari does the same).
 */
export async function pollUntil(check: () => Promise<boolean>, o: PollOptions): Promise<void> {
  const started = o.clock.now().getTime();
  const deadline = started + o.timeoutSeconds * 1000;
  for (;;) {
    o.signal.throwIfAborted();
    if (await check()) return;
    const now = o.clock.now().getTime();
    if (now >= deadline) throw new PollTimeout(o.what, o.timeoutSeconds);
    await o.clock.sleep(Math.min(o.intervalSeconds * 1000, Math.max(deadline - now, 0)), o.signal);
  }
}
