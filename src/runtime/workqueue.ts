// A rate-limited, delaying work queue with client-go's semantics
// (k8s.io/client-go/util/workqueue):
//  - fair: keys are handed out in the order they were added;
//  - stingy: a key added many times before it is processed is processed once;
//  - never concurrent: a key being processed is not handed out again until
//    done(key); if it was re-added meanwhile, done() queues it once more.
// Keys are strings (controller-runtime's namespace/name request).
import type { QueueMetrics } from './metrics.ts';
import { noQueueMetrics } from './metrics.ts';
import type { RateLimiter } from './ratelimiter.ts';
import { defaultControllerRateLimiter } from './ratelimiter.ts';
import { type Clock, systemClock, type TimerHandle } from '../time/clock.ts';

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  clock?: Clock;
  metrics?: QueueMetrics;
}

export class WorkQueue {
  /** FIFO of keys ready to hand out; queue[head..] are live. */
  private queue: string[] = [];
  private head = 0;
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<string>();
  /** Keys handed out by get() and not yet done(). */
  private readonly processing = new Set<string>();
  /** addAfter timers: one per key, the earliest requested time wins. */
  private readonly delayed = new Map<string, { at: number; timer: TimerHandle }>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private getters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  private readonly rateLimiter: RateLimiter;
  private readonly clock: Clock;
  private readonly metrics: QueueMetrics;

  constructor(opts: WorkQueueOptions = {}) {
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter();
    this.clock = opts.clock ?? systemClock;
    this.metrics = opts.metrics ?? noQueueMetrics;
    this.metrics.inFlight(() => {
      const now = this.clock.now().getTime();
      return [...this.startedAt.values()].map((started) => (now - started) / 1000);
    });
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics.added();
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now().getTime());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds key after ms; an earlier pending addAfter for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now().getTime() + ms;
    const pending = this.delayed.get(key);
    if (pending) {
      if (pending.at <= at) return;
      this.clock.clearTimeout(pending.timer);
    }
    const timer = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, timer });
  }

  /** Adds key after its rate limiter's delay (a failure: the delay grows per key). */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.metrics.retried();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Clears key's failure history (call after success or when giving up). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * Next key to process, once one is available; undefined once the queue is
   * shut down. Keys still queued at shutdown are not handed out: whoever
   * takes over (the next leader, or this process after restart) relists and
   * enqueues everything anyway.
   */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.head < this.queue.length) return Promise.resolve(this.take());
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks key as processed; re-queues it if it was added while processing. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.metrics.workedFor((this.clock.now().getTime() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
  }

  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) this.clock.clearTimeout(timer);
    this.delayed.clear();
    const getters = this.getters;
    this.getters = [];
    for (const resolve of getters) resolve(undefined);
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Keys waiting to be handed out (not counting delayed or in-process keys). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Keys currently handed out and not done. */
  inFlight(): number {
    return this.processing.size;
  }

  private push(key: string): void {
    this.queue.push(key);
    const getter = this.getters.shift();
    if (getter) getter(this.take());
    else this.metrics.depth(this.len());
  }

  private take(): string {
    const key = this.queue[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    const now = this.clock.now().getTime();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.metrics.queuedFor((now - added) / 1000);
    this.startedAt.set(key, now);
    this.metrics.depth(this.len());
    return key;
  }
}
