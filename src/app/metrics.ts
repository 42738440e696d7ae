// The process's Prometheus registry: Node's default metrics under their usual
// names (process_*, nodejs_*, what stock dashboards query), the build info,
// and one readiness gauge per started component, as /readyz reports it.

import { collectDefaultMetrics, Registry } from 'prom-client';
import { gauge, histogram } from '../runtime/metric-registry.ts';
import type { CallRecord } from '../openstack/http.ts';
import type { KubeAttempt } from '../k8s/transport.ts';

export interface ComponentReadinessSource {
  components(): Array<{ name: string; ready: boolean }>;
}

export function createMetricsRegistry(version: string, readiness: ComponentReadinessSource): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  gauge(registry, 'masakari_operator_build_info', 'Always 1; the labels say which build runs.', [
    'version',
    'node_version',
  ]).set({ version, node_version: process.versions.node }, 1);
  gauge(
    registry,
    'masakari_operator_component_ready',
    '1 when the component reports ready, 0 otherwise.',
    ['component'],
    function () {
      this.reset();
      for (const c of readiness.components()) this.set({ component: c.name }, c.ready ? 1 : 0);
    },
  );
  return registry;
}

/** Feeds the OpenStack client's per-attempt records (src/openstack/http.ts onCall) into a histogram. */
export function openStackCallObserver(registry: Registry): (record: CallRecord) => void {
  const requests = histogram(
    registry,
    'masakari_openstack_request_duration_seconds',
    'Keystone and Nova HTTP attempts by service, method, path template, server action and status (0: no response).',
    ['service', 'method', 'path', 'action', 'status'],
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  return (r) =>
    requests.observe(
      { service: r.service, method: r.method, path: r.path, action: r.action ?? '', status: String(r.status) },
      r.durationMs / 1000,
    );
}

/**
 * Feeds the Kubernetes client's per-attempt reports (src/k8s/transport.ts
 * onAttempt) into a histogram: where intake and reconcile time goes at the API
 * server, by method and resource (client-go's rest_client_request_duration_seconds,
 * with the resource instead of the host). Watches are not in it.
 */
export function kubeCallObserver(registry: Registry): (attempt: KubeAttempt) => void {
  const requests = histogram(
    registry,
    'masakari_kube_request_duration_seconds',
    'Kubernetes API attempts by method, resource (group/plural[/subresource]) and status (0: no response).',
    ['method', 'resource', 'code'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30],
  );
  return (a) => requests.observe({ method: a.method, resource: a.resource, code: String(a.code) }, a.durationMs / 1000);
}
