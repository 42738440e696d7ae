// Webhook metrics: how many reviews were allowed, denied or failed, per kind
// and operation, and how long they took (the API server gives up after the
// configuration's timeoutSeconds).
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

const LABELS = ['kind', 'operation', 'result'] as const;

export interface WebhookMetrics {
  observe(kind: string, operation: string, result: 'allowed' | 'denied' | 'error', seconds: number): void;
}

function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

export function createWebhookMetrics(registry: Registry | undefined): WebhookMetrics {
  if (!registry) return { observe: () => undefined };
  const reviews =
    existing<Counter<(typeof LABELS)[number]>>(registry, 'masakari_webhook_reviews_total') ??
    new Counter({
      name: 'masakari_webhook_reviews_total',
      help: 'Admission reviews answered by the validating webhook, by kind, operation and result.',
      labelNames: LABELS,
      registers: [registry],
    });
  const duration =
    existing<Histogram<'kind' | 'operation'>>(registry, 'masakari_webhook_review_duration_seconds') ??
    new Histogram({
      name: 'masakari_webhook_review_duration_seconds',
      help: 'Time to answer an admission review (the Nova host check dominates for HaHosts).',
      labelNames: ['kind', 'operation'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  return {
    observe(kind, operation, result, seconds) {
      reviews.inc({ kind, operation, result });
      duration.observe({ kind, operation }, seconds);
    },
  };
}
