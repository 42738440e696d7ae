// HTTP metrics of the facade, labelled by route template (never by raw path,
// which would explode cardinality with uuids) and status.

import type { Registry } from 'prom-client';
import type { TokenValidationObserver } from '../openstack/index.ts';
import { counter, gauge, histogram } from '../runtime/metric-registry.ts';

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

/** Token validation under auth_strategy keystone (src/openstack/keystone.ts TokenValidator). */
export function createTokenValidationMetrics(registry: Registry): TokenValidationObserver {
  const lookups = counter(
    registry,
    'masakari_api_token_cache_lookups_total',
    'Token lookups by how they were answered: hit (cache, valid or invalid), shared (joined a validation under way), miss (started one).',
    ['result'],
  );
  const validations = counter(
    registry,
    'masakari_api_token_validations_total',
    'Token validations against Keystone by result: valid, invalid, error (Keystone did not answer), cancelled (every waiting client hung up).',
    ['result'],
  );
  const refused = counter(
    registry,
    'masakari_api_token_validations_refused_total',
    'Requests answered 503 because max_validations_in_flight or max_validations_per_second was reached.',
  );
  const inFlight = gauge(
    registry,
    'masakari_api_token_validations_in_flight',
    'Token validations waiting on Keystone.',
  );
  for (const result of ['hit', 'shared', 'miss']) lookups.inc({ result }, 0);
  for (const result of ['valid', 'invalid', 'error', 'cancelled']) validations.inc({ result }, 0);
  inFlight.set(0);
  return {
    lookup: (result) => lookups.inc({ result }),
    validated: (result) => validations.inc({ result }),
    refused: () => refused.inc(),
    inFlight: (n) => inFlight.set(n),
  };
}
