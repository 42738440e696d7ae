// What every informer of a process shares: the client, the logger, the
// clock and the timings of list, watch and backoff (the manager's
// informerDeps; tests shorten them).
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import type { Backoff } from '../k8s/retry-on-conflict.ts';
import type { Clock } from '../time/clock.ts';

export interface InformerDeps {
  kube: KubeClient;
  log: Logger;
  /** Server-side watch timeout; each watch gets this ±10% so replicas do not reconnect in lockstep. Default 300. */
  watchTimeoutSeconds?: number;
  /** A watch that stayed up this long counts as healthy: the backoff and the failure run reset. Default 30 s. */
  healthyAfterMs?: number;
  /** Log a warning (once) when the first sync has not succeeded after this long; it keeps retrying. Default 2 min. */
  slowSyncWarnMs?: number;
  /**
   * A list/watch that has kept failing this long makes the cache not serving
   * (readiness false): its data may be stale (e.g. 403 after an RBAC change).
   * Default 60 s: longer than an API server restart, shorter than a human
   * would trust stale data for.
   */
  staleAfterMs?: number;
  /** Between failed lists and watches; default RECONNECT_BACKOFF (runtime/backoff.ts), overridden field by field. */
  backoff?: Partial<Backoff> & { random?: () => number };
  pageSize?: number;
  /** Time of the health checks, the watchdog and the backoff's reset; default systemClock. */
  clock?: Clock;
}
