// Prometheus metrics with controller-runtime's names, so existing
// controller-runtime dashboards and alerts work unchanged. Metrics are
// get-or-create per Registry: several controllers share one registry and
// tell themselves apart by label.
import type { Gauge, Registry } from 'prom-client';
import { counter, gauge, histogram } from './metric-registry.ts';

/** Exponential buckets from 1 ms to ~1000 s, as client-go's workqueue metrics use. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1000];

export interface QueueMetrics {
  depth(n: number): void;
  added(): void;
  retried(): void;
  queuedFor(seconds: number): void;
  workedFor(seconds: number): void;
  /** Registers the source of the in-flight work's ages (seconds), read at scrape time. */
  inFlight(source: () => number[]): void;
}

export const noQueueMetrics: QueueMetrics = {
  depth: () => undefined,
  added: () => undefined,
  retried: () => undefined,
  queuedFor: () => undefined,
  workedFor: () => undefined,
  inFlight: () => undefined,
};

/** Per registry: queue name → ages of the keys its workers hold, for the scrape-time gauges. */
const inFlightSources = new WeakMap<Registry, Map<string, () => number[]>>();

/**
 * client-go's workqueue_unfinished_work_seconds (the summed age of work in
 * progress) and workqueue_longest_running_processor_seconds (the oldest): a
 * reconcile stuck on a hung call shows here long before it ends and feeds
 * workqueue_work_duration_seconds.
 */
function inFlightGauges(registry: Registry): Map<string, () => number[]> {
  let sources = inFlightSources.get(registry);
  if (sources) return sources;
  const known = (sources = new Map());
  inFlightSources.set(registry, known);
  const scrape = (pick: (ages: number[]) => number) =>
    function (this: Gauge<string>) {
      this.reset();
      for (const [name, source] of known) this.set({ name }, pick(source()));
    };
  gauge(
    registry,
    'workqueue_unfinished_work_seconds',
    'How many seconds of work has been done that is in progress and has not been observed by work_duration.',
    ['name'],
    scrape((ages) => ages.reduce((a, b) => a + b, 0)),
  );
  gauge(
    registry,
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
    ['name'],
    scrape((ages) => Math.max(0, ...ages)),
  );
  return known;
}

export function queueMetrics(registry: Registry, name: string): QueueMetrics {
  const depth = gauge(registry, 'workqueue_depth', 'Current depth of workqueue', ['name']);
  const adds = counter(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
  const retries = counter(registry, 'workqueue_retries_total', 'Total number of retries handled by workqueue', [
    'name',
  ]);
  const queued = histogram(
    registry,
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested',
    ['name'],
    DURATION_BUCKETS,
  );
  const work = histogram(
    registry,
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes',
    ['name'],
    DURATION_BUCKETS,
  );
  return {
    depth: (n) => depth.set({ name }, n),
    added: () => adds.inc({ name }),
    retried: () => retries.inc({ name }),
    queuedFor: (s) => queued.observe({ name }, s),
    workedFor: (s) => work.observe({ name }, s),
    inFlight: (source) => inFlightGauges(registry).set(name, source),
  };
}

export interface ControllerMetrics {
  result(result: 'success' | 'error' | 'requeue_after'): void;
  error(terminal: boolean): void;
  reconcileTime(seconds: number): void;
  activeWorkers(delta: number): void;
  maxConcurrent(n: number): void;
}

export function controllerMetrics(registry: Registry, controller: string): ControllerMetrics {
  const total = counter(
    registry,
    'controller_runtime_reconcile_total',
    'Total number of reconciliations per controller',
    ['controller', 'result'],
  );
  const errors = counter(
    registry,
    'controller_runtime_reconcile_errors_total',
    'Total number of reconciliation errors per controller',
    ['controller'],
  );
  const terminal = counter(
    registry,
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
    ['controller'],
  );
  const time = histogram(
    registry,
    'controller_runtime_reconcile_time_seconds',
    'Length of time per reconciliation per controller',
    ['controller'],
    DURATION_BUCKETS,
  );
  const active = gauge(
    registry,
    'controller_runtime_active_workers',
    'Number of currently used workers per controller',
    ['controller'],
  );
  const max = gauge(
    registry,
    'controller_runtime_max_concurrent_reconciles',
    'Maximum number of concurrent reconciles per controller',
    ['controller'],
  );
  // Zero-initialise so dashboards see the series before the first event.
  for (const result of ['success', 'error', 'requeue_after']) total.inc({ controller, result }, 0);
  errors.inc({ controller }, 0);
  terminal.inc({ controller }, 0);
  active.set({ controller }, 0);
  return {
    result: (result) => total.inc({ controller, result }),
    error: (isTerminal) => {
      errors.inc({ controller });
      if (isTerminal) terminal.inc({ controller });
    },
    reconcileTime: (s) => time.observe({ controller }, s),
    activeWorkers: (d) => active.inc({ controller }, d),
    maxConcurrent: (n) => max.set({ controller }, n),
  };
}

export function leaderMetrics(registry: Registry, name: string): (leading: boolean) => void {
  const status = gauge(
    registry,
    'leader_election_master_status',
    'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
    ['name'],
  );
  status.set({ name }, 0);
  return (leading) => status.set({ name }, leading ? 1 : 0);
}
