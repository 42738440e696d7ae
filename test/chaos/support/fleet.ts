// The operator as two engine and two api replicas (separate processes, one
// namespace), configured through MASAKARI_* variables as a Deployment would be.
// Short timings keep a run short; each is a documented option (docs/configuration.md).
import path from 'node:path';
import { freePort } from '../../e2e/support/net.ts';
import { ProcessSlot } from './process-slot.ts';

/**
 * Engine lease timing (s): lease_duration, renew_deadline, retry_period. Shorter than the defaults
 * (15, 10, 2) so take-overs fit in a run, but not so short that a loaded machine's slow API server
 * makes the leader step down on its own all the time.
 */
export const LEASE = { duration: 8, renewDeadline: 6, retryPeriod: 1 };

const TIMINGS: Record<string, string> = {
  MASAKARI__DEFAULT__WAIT_PERIOD_AFTER_SERVICE_UPDATE: '0',
  MASAKARI__DEFAULT__WAIT_PERIOD_AFTER_EVACUATION: '30',
  MASAKARI__DEFAULT__VERIFY_INTERVAL: '1',
  MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS: '8',
  MASAKARI__DEFAULT__PROCESS_UNFINISHED_NOTIFICATIONS_INTERVAL: '2',
  MASAKARI__DEFAULT__RETRY_NOTIFICATION_NEW_STATUS_INTERVAL: '2',
  MASAKARI__OPERATOR__OPENSTACK_REQUEST_TIMEOUT: '3',
  MASAKARI__OPERATOR__LEASE_DURATION: String(LEASE.duration),
  MASAKARI__OPERATOR__RENEW_DEADLINE: String(LEASE.renewDeadline),
  MASAKARI__OPERATOR__RETRY_PERIOD: String(LEASE.retryPeriod),
  MASAKARI__OPERATOR__SHUTDOWN_TIMEOUT: '10',
};

export interface Fleet {
  engines: ProcessSlot[];
  apis: ProcessSlot[];
  apiUrls: string[];
  all(): ProcessSlot[];
}

export async function createFleet(o: {
  kubeconfigPath: string;
  namespace: string;
  openstack: Record<string, string>;
  logDir: string;
  readyTimeoutMs: number;
  extraEnv?: Record<string, string>;
}): Promise<Fleet> {
  const slot = async (name: string, components: string, apiPort?: number) => {
    const metricsPort = await freePort();
    return new ProcessSlot({
      name,
      metricsPort,
      logDir: o.logDir,
      readyTimeoutMs: o.readyTimeoutMs,
      // an engine's wall clock may be skewed (support/skewed-clock.ts)
      ...(components === 'engine' ? { clockFile: path.join(o.logDir, `${name}.clock-offset-ms`) } : {}),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG: o.kubeconfigPath,
        MASAKARI_NAMESPACE: o.namespace,
        MASAKARI_COMPONENTS: components,
        MASAKARI_AUTH_STRATEGY: 'noauth2',
        MASAKARI_LISTEN: `127.0.0.1:${apiPort ?? (await freePort())}`,
        MASAKARI_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
        // MASAKARI_CHAOS_LOG_LEVEL=debug: every OpenStack request of the replicas in their logs
        MASAKARI_LOG_LEVEL: process.env.MASAKARI_CHAOS_LOG_LEVEL ?? 'info',
        ...o.openstack,
        ...TIMINGS,
        ...o.extraEnv,
      },
    });
  };
  const apiPorts = [await freePort(), await freePort()];
  const engines = [await slot('engine-0', 'engine'), await slot('engine-1', 'engine')];
  const apis = [await slot('api-0', 'api', apiPorts[0]), await slot('api-1', 'api', apiPorts[1])];
  return {
    engines,
    apis,
    apiUrls: apiPorts.map((p) => `http://127.0.0.1:${p}`),
    all: () => [...engines, ...apis],
  };
}
