// Webhook metrics: how many reviews were allowed, denied or failed, per kind
// and operation, and how long they took (the API server gives up after the
// configuration's timeoutSeconds).
//
// Label values are bounded: request.kind.kind and request.operation come from
// whoever can reach the webhook port, so anything but our own kinds and the
// four admission operations is counted as "other". Otherwise each made-up
// kind would add a time series for the life of the process.
import type { Registry } from 'prom-client';
import { counter, histogram } from '../runtime/metric-registry.ts';
import { KINDS } from '../model/constants.ts';

/** The label value for kinds and operations we do not know. */
export const OTHER_LABEL = 'other';
const KNOWN_KINDS: ReadonlySet<string> = new Set(Object.values(KINDS).map((k) => k.kind));
const KNOWN_OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** kind, or "other" for any kind that is not one of ours. */
export function kindLabel(kind: unknown): string {
  return typeof kind === 'string' && KNOWN_KINDS.has(kind) ? kind : OTHER_LABEL;
}

/** operation, or "other" for anything but an admission operation. */
export function operationLabel(operation: unknown): string {
  return typeof operation === 'string' && KNOWN_OPERATIONS.has(operation) ? operation : OTHER_LABEL;
}

const LABELS = ['kind', 'operation', 'result'] as const;

export interface WebhookMetrics {
  observe(kind: string, operation: string, result: 'allowed' | 'denied' | 'error', seconds: number): void;
}

export function createWebhookMetrics(registry: Registry | undefined): WebhookMetrics {
  if (!registry) return { observe: () => undefined };
  const reviews = counter(
    registry,
    'masakari_webhook_reviews_total',
    'Admission reviews answered by the validating webhook, by kind, operation and result.',
    LABELS,
  );
  const duration = histogram(
    registry,
    'masakari_webhook_review_duration_seconds',
    'Time to answer an admission review (the Nova host check dominates for HaHosts).',
    ['kind', 'operation'],
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  return {
    observe(rawKind, rawOperation, result, seconds) {
      const kind = kindLabel(rawKind);
      const operation = operationLabel(rawOperation);
      reviews.inc({ kind, operation, result });
      duration.observe({ kind, operation }, seconds);
    },
  };
}
