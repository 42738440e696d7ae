// The backoff of reconnect loops (informer watches, the admission key's
// load): each failure moves one step further along a `Backoff` (the one
// shape, src/k8s/retry-on-conflict.ts); a healthy period resets it, so one
// blip after hours of health retries quickly. client-go's
// wait.BackoffManager, without its own clock: callers sleep the delay.
import type { Backoff } from '../k8s/retry-on-conflict.ts';
import { backoffDelay } from '../k8s/retry-on-conflict.ts';

/**
 * Reconnects: from 100-200 ms doubling to a cap of 15-30 s, each delay
 * stretched by up to 100 % so that replicas that lost one API server do not
 * come back in lockstep. Never gives up (steps is unbounded): a cache retries
 * for as long as the process runs, and says so in its readiness.
 */
export const RECONNECT_BACKOFF: Readonly<Backoff> = Object.freeze({
  steps: Infinity,
  delayMs: 100,
  factor: 2,
  jitter: 1,
  capMs: 15_000,
});

export class BackoffManager {
  private failures = 0;

  constructor(
    private readonly backoff: Readonly<Backoff> = RECONNECT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** Delay before the next attempt; each call counts one more failure. */
  next(): number {
    return backoffDelay(this.backoff, this.failures++, this.random);
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/** Sleeps ms, resolving early (without throwing) when the signal aborts. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
