// Whether the API server commits this process's writes. When etcd loses
// quorum (or one API server is cut off from it), reads may still be served
// from the watch cache while every create, update, patch and delete hangs
// until it times out or answers 5xx: the process then looks healthy by its
// caches yet can change nothing. Fed by the Kubernetes client's per-attempt
// reports (src/k8s/transport.ts onAttempt), it says for how long writes have
// failed with no write succeeding in between, makes readiness false past
// UNREADY_AFTER_MS, and exports both as metrics (docs/operations.md
// "MasakariApiServerWritesFailing").
import type { Registry } from 'prom-client';
import { counter, gauge } from '../runtime/metric-registry.ts';
import type { KubeAttempt } from '../k8s/transport.ts';

/** Writes failing this long (none succeeding) make the process not ready: longer than an API server restart's blip. */
export const UNREADY_AFTER_MS = 30_000;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An attempt the control plane could not commit: no answer (timeout, reset, refused), or 500/503/504
 * (etcd's "request timed out", "leader changed", "too many requests", the API server's own timeout).
 * Any other answer, 4xx included, was decided by a working API server and storage.
 */
function notCommitted(code: number): boolean {
  return code === 0 || code === 500 || code === 503 || code === 504;
}

export class KubeWriteHealth {
  private failingSince: number | undefined;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly unreadyAfterMs = UNREADY_AFTER_MS,
  ) {}

  observe(a: Pick<KubeAttempt, 'method' | 'code'>): void {
    if (!WRITES.has(a.method)) return;
    if (notCommitted(a.code)) this.failingSince ??= this.now();
    else this.failingSince = undefined;
  }

  /** How long writes have failed with none succeeding since (ms); 0 while they work. */
  failingForMs(): number {
    return this.failingSince === undefined ? 0 : this.now() - this.failingSince;
  }

  ready(): boolean {
    return this.failingForMs() < this.unreadyAfterMs;
  }
}

/** The metrics of health: the failing duration as a gauge, each uncommitted write attempt as a counter. */
export function kubeWriteHealthObserver(
  registry: Registry,
  health: KubeWriteHealth,
): (a: Pick<KubeAttempt, 'method' | 'code'>) => void {
  gauge(
    registry,
    'masakari_kube_writes_failing_seconds',
    'How long this process has seen its Kubernetes writes fail (no answer, 500, 503, 504) with none succeeding; 0 while writes work.',
    [],
    function () {
      this.set(health.failingForMs() / 1000);
    },
  );
  const failures = counter(
    registry,
    'masakari_kube_write_failures_total',
    'Kubernetes write attempts (create, update, patch, delete) the control plane did not commit, by status (0: no answer).',
    ['code'],
  );
  return (a) => {
    health.observe(a);
    if (WRITES.has(a.method) && notCommitted(a.code)) failures.inc({ code: String(a.code) });
  };
}
