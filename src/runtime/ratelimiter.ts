import { type Clock, systemClock } from '../time/clock.ts';
import { backoffDelay } from '../k8s/retry-on-conflict.ts';
// Rate limiters for the work queue, after client-go's workqueue package.
// when(key) answers "how long should this key wait before its next try".

export interface RateLimiter {
  /** Delay (ms) before key may be processed again; counts one more failure for key. */
  when(key: string): number;
  /** Forget key's failure history (it succeeded, or we gave up on it). */
  forget(key: string): void;
  /** Failures recorded for key since it was last forgotten. */
  numRequeues(key: string): number;
}

/**
 * Per-key exponential backoff: base * 2^failures, capped. controller-runtime's
 * default is 5 ms → 1000 s; a key that keeps failing settles at one try per
 * ~17 minutes while other keys are unaffected.
 */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return backoffDelay({ steps: Infinity, delayMs: this.baseMs, factor: 2, jitter: 0, capMs: this.maxMs }, n);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * Overall token bucket (qps with a burst), shared by all keys: bounds the
 * total retry rate when many keys fail at once (an API server outage).
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = burst;
    this.last = clock.now().getTime();
  }

  when(): number {
    const now = this.clock.now().getTime();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    // Reserve a token even when none is left: the wait is how long until it refills.
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(key)));
  }
}

/** controller-runtime's default for new controllers: per-item exponential 5 ms → 1000 s. */
export const defaultControllerRateLimiter = (): RateLimiter => new ItemExponentialRateLimiter(5, 1_000_000);
