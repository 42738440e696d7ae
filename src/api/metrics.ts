// HTTP metrics of the facade, labelled by route template (never by raw path,
// which would explode cardinality with uuids) and status.

import type { Registry } from 'prom-client';
import { counter, histogram } from '../runtime/metric-registry.ts';

export interface ApiMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

const LABELS = ['method', 'route', 'status'] as const;

export function createApiMetrics(registry: Registry): ApiMetrics {
  const requests = counter(
    registry,
    'masakari_api_requests_total',
    'Masakari API requests by method, route template and status.',
    LABELS,
  );
  const latency = histogram(
    registry,
    'masakari_api_request_duration_seconds',
    'Masakari API request latency by method, route template and status.',
    LABELS,
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  return {
    observe(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
  };
}
