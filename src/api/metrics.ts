// HTTP metrics of the facade, labelled by route template (never by raw path,
// which would explode cardinality with uuids) and status.

import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

export interface ApiMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

const LABELS = ['method', 'route', 'status'] as const;

function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

export function createApiMetrics(registry: Registry): ApiMetrics {
  const requests =
    existing<Counter<(typeof LABELS)[number]>>(registry, 'masakari_api_requests_total') ??
    new Counter({
      name: 'masakari_api_requests_total',
      help: 'Masakari API requests by method, route template and status.',
      labelNames: LABELS,
      registers: [registry],
    });
  const latency =
    existing<Histogram<(typeof LABELS)[number]>>(registry, 'masakari_api_request_duration_seconds') ??
    new Histogram({
      name: 'masakari_api_request_duration_seconds',
      help: 'Masakari API request latency by method, route template and status.',
      labelNames: LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  return {
    observe(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
  };
}
