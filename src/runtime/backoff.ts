// Jittered exponential backoff for reconnect loops (informer watches, leader
// election renewals): each failure doubles the delay up to a cap; a healthy
// period resets it, so one blip after hours of health retries quickly.

export interface BackoffOptions {
  /** First delay; default 200 ms. */
  initialMs?: number;
  /** Cap; default 30 s. */
  maxMs?: number;
  /** Delays are drawn uniformly from [d*(1-jitter), d]; default 0.5. */
  jitter?: number;
  /** Injectable for tests; default Math.random. */
  random?: () => number;
}

export class Backoff {
  private failures = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 200;
    this.maxMs = opts.maxMs ?? 30_000;
    this.jitter = Math.min(1, Math.max(0, opts.jitter ?? 0.5));
    this.random = opts.random ?? Math.random;
  }

  /** Delay before the next attempt; each call counts one more failure. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(base * (1 - this.jitter * this.random()));
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
