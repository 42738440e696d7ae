// `masakari-operator run`: the process from start to exit.
//   1. configuration (fails fast naming the option), logger, identity;
//   2. OpenStack credentials → Nova client (or none), Kubernetes client;
//   3. the process's manager (src/runtime/manager.ts: shared caches, runnables,
//      leader elections), the ops server (/healthz, /readyz, /metrics), then
//      each selected component, which registers its caches and runnables with
//      the manager; then the manager starts them (caches synced first);
//   4. wait for SIGTERM/SIGINT, then abort ctx.signal, stop the components
//      (reverse order: they stop serving), then the manager (runnables, caches,
//      Leases), all within one shared deadline; close the servers and clients.
// Exit code: 0 after a clean stop, 1 when start-up failed or a component did
// not stop cleanly. Anything that prevents start-up is a StartupError whose
// message main.ts prints on stderr.

import { hostname } from 'node:os';
import type { DestinationStream, Logger } from 'pino';
import { loadConfig } from '../config/load.ts';
import { metricsListenAddress, prometheusListenAddress } from '../config/load.ts';
import { resolveOpenStackCredentials, type OpenStackCredentials } from '../config/openstack-auth.ts';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../k8s/client.ts';
import { createKubeClient } from '../k8s/kube-client.ts';
import { loadKubeConfig } from '../k8s/kubeconfig.ts';
import type { TransportOptions } from '../k8s/transport.ts';
import { createLogger } from '../log/logger.ts';
import { createNovaClient, createOpenStackSession, type OpenStackSession } from '../openstack/index.ts';
import type { NovaClient } from '../openstack/types.ts';
import { startOpsServer, type OpsEndpoint, type OpsServer } from '../ops/server.ts';
import type { AppContext } from './component.ts';
import {
  importComponentFactory,
  startComponents,
  StartupError,
  stopComponents,
  type FactoryLoader,
  type StartedComponent,
} from './components.ts';
import { KubeWriteHealth, kubeWriteHealthObserver } from './kube-write-health.ts';
import { createMetricsRegistry, kubeCallObserver, openStackCallObserver } from './metrics.ts';
import { operatorVersion } from './version.ts';
import type { Manager } from '../runtime/manager.ts';
import { createProcessManager } from './process-manager.ts';
import {
  createAdmissionSeal,
  loadAdmissionSealKey,
  SEAL_SECRET_NAME,
  withSealedNotifications,
} from '../store/index.ts';
import type { InformerDeps } from '../runtime/informer-deps.ts';
import { systemClock } from '../time/clock.ts';

export interface ClosableKube {
  client: KubeClient;
  close(): Promise<void>;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** --config-file arguments (masakari.conf or YAML), in order; later ones override. */
  configFiles?: string[];
  /** The --debug argument ([DEFAULT] debug over the files). */
  debug?: boolean;
  /** Resolves with the signal name when the process should stop. */
  shutdownRequested: Promise<string>;
  /** Test seams; production uses the defaults. */
  loadFactory?: FactoryLoader;
  connectKube?: (env: NodeJS.ProcessEnv, onAttempt: TransportOptions['onAttempt']) => ClosableKube;
  /** Tests: the tracker of committed writes (its clock and threshold); default KubeWriteHealth's. */
  kubeWriteHealth?: KubeWriteHealth;
  logDestination?: DestinationStream;
  /** Called once the /metrics server of prometheus_listen listens, with its real address. */
  onMetricsListening?: (address: { host: string; port: number }) => void;
  /** Called once the ops server listens, with its real address (tests bind port 0 through this). */
  onListening?: (address: { host: string; port: number }) => void;
  /** Test seam: informer timings for the process's shared caches (e.g. a short staleAfterMs). */
  informerDeps?: Partial<Omit<InformerDeps, 'kube' | 'log'>>;
}

/** POD_NAME (from the downward API) or <hostname>-<pid>: unique per process, stable per pod. */
export function processIdentity(env: NodeJS.ProcessEnv): string {
  return env.POD_NAME || `${hostname()}-${process.pid}`;
}

function connectKubeDefault(env: NodeJS.ProcessEnv, onAttempt: TransportOptions['onAttempt']): ClosableKube {
  const kc = loadKubeConfig({ env });
  const client = createKubeClient(kc, { onAttempt });
  return { client, close: () => client.close() };
}

function connectNova(
  creds: OpenStackCredentials,
  config: Config,
  observe: ReturnType<typeof openStackCallObserver>,
  log: Logger,
): { session: OpenStackSession; nova: NovaClient } {
  const settings = {
    timeoutMs: config.operator.openstack_request_timeout * 1000,
    maxRetries: config.operator.openstack_max_retries,
    log: log.child({ component: 'openstack' }),
    onCall: observe,
  };
  let session: OpenStackSession;
  try {
    session = createOpenStackSession(creds, settings);
  } catch (e) {
    // e.g. the CA bundle named by OS_CACERT or nova_ca_certificates_file cannot be read.
    throw new StartupError(`openstack credentials (${creds.source}): ${(e as Error).message}`, { cause: e });
  }
  const nova = createNovaClient(session, {
    ...settings,
    catalogInfo: config.DEFAULT.nova_catalog_admin_info,
    region: creds.region_name,
    interface: creds.interface,
    microversion: config.operator.nova_api_version,
  });
  return { session, nova };
}

export async function runOperator(opts: RunOptions): Promise<number> {
  const env = opts.env ?? process.env;
  const { config, warnings, files } = loadConfig({ env, files: opts.configFiles ?? [], debug: opts.debug ?? false });
  const version = operatorVersion();
  const identity = processIdentity(env);
  const log = createLogger({
    level: config.operator.log_level,
    identity,
    version,
    ...(opts.logDestination ? { destination: opts.logDestination } : {}),
  });
  const components = config.operator.components;
  log.info(
    { config_files: files, namespace: config.operator.namespace, components, log_level: config.operator.log_level },
    'masakari-operator starting',
  );
  for (const w of warnings) log.warn(`config: ${w}`);

  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  const started: StartedComponent[] = [];
  // Not ready, too, while the API server has committed none of this process's writes for a while
  // (etcd without quorum): the caches still read, but nothing the process decides can be stored.
  const writes = opts.kubeWriteHealth ?? new KubeWriteHealth();
  const readiness = {
    phase: () => phase,
    components: () => [
      ...started.map(({ name, component }) => ({ name, ready: safeReady(component, log) })),
      ...(started.length ? [{ name: 'kube-writes', ready: writes.ready() }] : []),
    ],
  };
  const metrics = createMetricsRegistry(version, readiness);
  const controller = new AbortController();
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    for (const fn of cleanups.reverse()) {
      await fn().catch((e: unknown) => log.warn({ err: e }, 'cleanup step failed'));
    }
  };

  // A signal during start-up aborts ctx.signal at once, so a component stuck in
  // its first cache sync gives up instead of holding the pod past its grace period.
  let stopSignal: string | undefined;
  void opts.shutdownRequested.then((signal) => {
    stopSignal = signal;
    phase = 'stopping';
    controller.abort(new Error(`shutdown (${signal})`));
  });

  try {
    const creds = resolveOpenStackCredentials(config, { env });
    let openstack: { session: OpenStackSession; nova: NovaClient } | undefined;
    if (creds) {
      const connected = connectNova(creds, config, openStackCallObserver(metrics), log);
      openstack = connected;
      cleanups.push(() => connected.session.close());
      log.info(
        { source: creds.source, auth_url: creds.auth_url, region: creds.region_name },
        'openstack credentials found',
      );
    } else {
      log.warn(
        'no OpenStack credentials (OS_CLOUD, OS_AUTH_URL or [DEFAULT] os_privileged_user_*): Nova is unreachable, recoveries cannot run',
      );
    }

    let kube: ClosableKube;
    try {
      const timed = kubeCallObserver(metrics);
      const committed = kubeWriteHealthObserver(metrics, writes);
      kube = (opts.connectKube ?? connectKubeDefault)(env, (a) => {
        timed(a);
        committed(a);
      });
    } catch (e) {
      const from = env.KUBECONFIG ? ` (KUBECONFIG=${env.KUBECONFIG})` : '';
      throw new StartupError(`kubernetes: cannot load client configuration${from}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    cleanups.push(() => kube.close());

    // The manager is made once the admission key is loaded (below); liveness asks it from then on.
    const made: { manager?: Manager } = {};
    const liveness = () =>
      (made.manager?.informers.crashed() ?? []).map((key) => `cache ${key}: list/watch loop crashed`);

    const ownMetrics = prometheusListenAddress(config);
    /** One ops server, closed at exit; a bind failure names the option that set its address. */
    const serveOps = async (
      address: { host: string; port: number },
      endpoints: OpsEndpoint[],
      option: string,
    ): Promise<OpsServer> => {
      let server: OpsServer;
      try {
        server = await startOpsServer({
          ...address,
          endpoints,
          registry: metrics,
          readiness,
          liveness,
          log: log.child({ component: 'ops' }),
        });
      } catch (e) {
        throw new StartupError(
          `cannot listen on ${address.host}:${address.port} (${option}): ${(e as Error).message}`,
          {
            cause: e,
          },
        );
      }
      cleanups.push(() => server.close());
      const paths = endpoints.flatMap((x) => (x === 'health' ? ['/healthz', '/readyz'] : ['/metrics']));
      log.info(
        { address: `${server.address.host}:${server.address.port}` },
        `ops endpoint listening (${paths.join(', ')})`,
      );
      return server;
    };
    const ops = await serveOps(
      metricsListenAddress(config),
      ownMetrics ? ['health'] : ['health', 'metrics'],
      '[operator] metrics_listen / MASAKARI_METRICS_LISTEN',
    );
    if (ownMetrics) {
      const prom = await serveOps(ownMetrics, ['metrics'], '[operator] prometheus_listen / MASAKARI_PROMETHEUS_LISTEN');
      opts.onMetricsListening?.(prom.address);
    }
    opts.onListening?.(ops.address);

    // Notifications the REST path creates are admitted by a seal, not a status
    // write (src/store/admission/seal.ts): every reader of this process sees
    // them through the wrapped client. No key (403): the status write, as before.
    // Loaded after the ops server listens: while the API server cannot be
    // reached the process is alive and not ready, as during its first cache sync.
    // The key lives in admission_key_namespace (the operator's own, in the chart) so that who may edit the
    // objects' namespace cannot read or pre-create it (docs/operations.md "The admission key").
    const namespace = config.operator.namespace;
    const keyNamespace = config.operator.admission_key_namespace ?? namespace;
    if (keyNamespace === namespace) {
      log.info(
        { namespace, secret: SEAL_SECRET_NAME },
        'the admission key is kept in the namespace of the Masakari objects: whoever may read Secrets or run pods ' +
          'there can seal notifications (set admission_key_namespace to a namespace of its own to prevent it)',
      );
    }
    let sealKey: Buffer | undefined;
    try {
      sealKey = await loadAdmissionSealKey(kube.client, keyNamespace, log, controller.signal);
    } catch (e) {
      throw new StartupError(`kubernetes: cannot load the admission key: ${(e as Error).message}`, { cause: e });
    }
    const admissionSeal = sealKey ? createAdmissionSeal(sealKey) : undefined;
    const client = admissionSeal ? withSealedNotifications(kube.client, admissionSeal, namespace) : kube.client;

    // One manager for every component of this process: one cache per (resource, namespace, selectors),
    // one election per Lease, one start and one shutdown order.
    const processManager = createProcessManager(
      { kube: client, namespace: config.operator.namespace, identity, log, metrics, config },
      { compactHeapAfterSync: true, ...(opts.informerDeps ? { informerDeps: opts.informerDeps } : {}) },
    );
    made.manager = processManager;
    // Normally stopped before the clean-ups (runShutdown); here for a failed start-up.
    cleanups.push(async () => {
      if (!processManager.isStopping()) await processManager.stop();
      processManager.informers.stopAll();
    });

    const ctx: AppContext = {
      config,
      namespace: config.operator.namespace,
      kube: client,
      ...(admissionSeal ? { admissionSeal } : {}),
      ...(openstack ? { nova: openstack.nova, openstack: openstack.session } : {}),
      log,
      metrics,
      identity,
      signal: controller.signal,
      manager: processManager,
    };
    const stopTimeoutMs = config.operator.shutdown_timeout * 1000;
    await startComponents(
      components,
      ctx,
      opts.loadFactory ?? importComponentFactory,
      (entry) => started.push(entry),
      stopTimeoutMs,
    );
    // Every component has registered its caches and runnables: caches sync, then runnables and elections start.
    void processManager.start().catch((err: unknown) => log.info({ err }, 'stopped before the caches synced'));
    if (!stopSignal) {
      phase = 'running';
      log.info({ components }, 'masakari-operator running');
    }

    const signal = await opts.shutdownRequested;
    log.info({ signal, deadline_s: config.operator.shutdown_timeout }, 'shutting down');
    const deadline = systemClock.now().getTime() + stopTimeoutMs;
    const failed = await stopComponents(started, stopTimeoutMs, log);
    if (!(await stopWithin(() => processManager.stop(), deadline - systemClock.now().getTime()))) {
      failed.push('manager');
      log.error({ timeout_ms: stopTimeoutMs }, 'the manager did not stop before the shutdown deadline');
    }
    await cleanUp();
    if (failed.length > 0) {
      log.error({ components: failed }, 'masakari-operator stopped, but not every component stopped cleanly');
      return 1;
    }
    log.info('masakari-operator stopped');
    return 0;
  } catch (e) {
    phase = 'stopping';
    controller.abort(e);
    await cleanUp();
    if (stopSignal) {
      log.info({ signal: stopSignal, err: e }, 'masakari-operator stopped during start-up');
      return 0;
    }
    log.fatal({ err: e }, 'masakari-operator could not start');
    throw e;
  } finally {
    log.flush();
  }
}

/** Runs stop, waiting at most ms for it; false when it overran or failed. */
async function stopWithin(stop: () => Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([stop().then(() => true), overran]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** A component whose ready() throws counts as not ready; the probe must not fail on it. */
function safeReady(component: { ready(): boolean }, log: Logger): boolean {
  try {
    return component.ready() === true;
  } catch (e) {
    log.warn({ err: e }, 'component ready() threw');
    return false;
  }
}
