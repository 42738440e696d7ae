// A controller in controller-runtime's mould: N workers take keys from a
// work queue and reconcile them; the outcome decides what happens next.
//   error           → requeue with per-key exponential backoff
//   TerminalError   → no requeue (a retry cannot fix it), counted
//   requeueAfterMs  → forget the backoff history, requeue after the delay
//   success         → forget the backoff history
// Reconcile is level-based: it gets only the key and reads current state.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { controllerMetrics, queueMetrics } from './metrics.ts';
import type { ControllerMetrics } from './metrics.ts';
import type { RateLimiter } from './ratelimiter.ts';
import { TerminalError } from './types.ts';
import type { Reconciler } from './types.ts';
import { WorkQueue } from './workqueue.ts';

export interface ControllerOptions {
  /** Names the controller in logs and metrics (label controller=, workqueue name=). */
  name: string;
  reconcile: Reconciler;
  /** Concurrent reconciles (of different keys); default 1, as controller-runtime. */
  workers?: number;
  /** A prepared queue (tests); otherwise one is made with rateLimiter and metrics. */
  queue?: WorkQueue;
  rateLimiter?: RateLimiter;
  metrics?: Registry;
  log: Logger;
  /**
   * At shutdown, how long to wait for in-flight reconciles (their signal is
   * aborted, so they should save and return quickly); default 30 s.
   */
  shutdownTimeoutMs?: number;
}

const noMetrics: ControllerMetrics = {
  result: () => undefined,
  error: () => undefined,
  reconcileTime: () => undefined,
  activeWorkers: () => undefined,
  maxConcurrent: () => undefined,
};

/**
 * What the engine, the store reconcilers and the remediator need of a
 * Controller (one per leadership term): test doubles implement it.
 */
export interface QueueingController {
  enqueue(key: string): void;
  enqueueAfter(key: string, ms: number): void;
  start(signal: AbortSignal): Promise<void>;
}

export type ControllerFactory = (name: string, reconcile: Reconciler) => QueueingController;

export class Controller implements QueueingController {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconcile: Reconciler;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics;
  private readonly shutdownTimeoutMs: number;
  private started = false;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconcile = opts.reconcile;
    this.workers = Math.max(1, opts.workers ?? 1);
    this.log = opts.log.child({ controller: opts.name });
    this.shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 30_000;
    this.queue =
      opts.queue ??
      new WorkQueue({
        ...(opts.rateLimiter ? { rateLimiter: opts.rateLimiter } : {}),
        ...(opts.metrics ? { metrics: queueMetrics(opts.metrics, opts.name) } : {}),
      });
    this.metrics = opts.metrics ? controllerMetrics(opts.metrics, opts.name) : noMetrics;
    this.metrics.maxConcurrent(this.workers);
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /**
   * Runs the workers until signal aborts, then shuts the queue down and waits
   * (bounded by shutdownTimeoutMs) for in-flight reconciles to return.
   * Keys enqueued before start() are processed once it runs.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} already started`);
    this.started = true;
    const onAbort = (): void => this.queue.shutDown();
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.log.info({ workers: this.workers }, 'starting workers');
    const workers = Array.from({ length: this.workers }, () => this.worker(signal));
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.shutdownTimeoutMs);
    });
    const outcome = await Promise.race([Promise.all(workers), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.log.error(
        { inFlight: this.queue.inFlight(), timeoutMs: this.shutdownTimeoutMs },
        'reconciles still running at shutdown deadline; abandoning them',
      );
    } else {
      this.log.info('all workers finished');
    }
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      await this.process(key, signal);
    }
  }

  private async process(key: string, signal: AbortSignal): Promise<void> {
    this.metrics.activeWorkers(1);
    const started = performance.now();
    try {
      const result = await this.reconcile(key, signal);
      if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfterMs);
        this.metrics.result('requeue_after');
      } else {
        this.queue.forget(key);
        this.metrics.result('success');
      }
    } catch (err) {
      this.metrics.result('error');
      if (err instanceof TerminalError) {
        this.queue.forget(key);
        this.metrics.error(true);
        this.log.error({ err, key }, 'reconcile failed with a terminal error; not requeued');
      } else {
        this.queue.addRateLimited(key);
        this.metrics.error(false);
        const level = signal.aborted ? 'debug' : 'warn';
        this.log[level]({ err, key, requeues: this.queue.numRequeues(key) }, 'reconcile failed; requeued with backoff');
      }
    } finally {
      this.queue.done(key);
      this.metrics.activeWorkers(-1);
      this.metrics.reconcileTime((performance.now() - started) / 1000);
    }
  }
}
