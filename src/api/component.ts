// The 'api' component: the Masakari v1 facade over the custom-resource store,
// listening on [DEFAULT]/masakari_api_listen:masakari_api_listen_port, over
// TLS with [DEFAULT]/use_ssl (tls.ts).

import type { AddressInfo } from 'node:net';
import type { AppContext, Component } from '../app/component.ts';
import { untilSyncedOrShutdown } from '../app/first-sync.ts';
import type { Manager } from '../runtime/manager.ts';
import { addStoreReconcilers } from '../reconcilers/component.ts';
import type { CrRepositoryHandle } from '../store/index.ts';
import { createCrRepository } from '../store/index.ts';
import { limitConnections } from './connections.ts';
import type { ConnectionLimits } from './connections.ts';
import type { Repository } from '../domain/repository.ts';
import { HaService } from '../domain/ha-service.ts';
import { computeHostCheckerFor } from '../openstack/compute-host-checker.ts';
import { createTokenValidator } from '../openstack/index.ts';
import { createTokenValidationMetrics } from './metrics.ts';
import { createApiApp } from './app.ts';
import { apiTlsSettings, createApiListener } from './tls.ts';
import type { ApiListener, ApiTlsSettings } from './tls.ts';
import type { AuthSettings } from './auth.ts';
import { PolicyEnforcer } from './policy.ts';
import { startWebhook, webhookSettingsFromEnv } from '../webhook/index.ts';
import type { WebhookServer, WebhookSettings } from '../webhook/index.ts';
import { systemClock } from '../time/clock.ts';

/** A repository the component can start and stop (the CR store, or the memory one in tests). */
export type ApiRepository = Repository & {
  start(): Promise<void>;
  stop(): void;
  ready(): boolean;
  /** Background writes still in flight (the CR store's status writes after a create). */
  settle?(): Promise<void>;
};

export interface ApiComponentOptions {
  /** Overrides the CR-backed repository (tests, local runs). */
  repository?: ApiRepository;
  /** Overrides the listen address (tests use 127.0.0.1:0). */
  listen?: { host: string; port: number };
  /** Overrides the REST port's connection limits (tests). */
  connectionLimits?: ConnectionLimits;
  /** Overrides MASAKARI_WEBHOOK_LISTEN/_CERT_DIR (tests: 127.0.0.1:0, self-signed); false: no webhook. */
  webhook?: WebhookSettings | false;
  /** Overrides use_ssl and [wsgi] ssl_* (tests: a short poll of the files); false: plain HTTP. */
  tls?: ApiTlsSettings | false;
}

export interface ApiComponent extends Component {
  /** The bound address (useful with port 0). */
  address(): AddressInfo;
  /** The validating admission webhook, when MASAKARI_WEBHOOK_LISTEN (or opts.webhook) turned it on. */
  webhook?: WebhookServer;
}

/**
 * The CR-backed repository over the manager's shared caches, with the store
 * reconcilers (kubectl/GitOps admission, sweeps, retention) beside it as a
 * leader-elected runnable of the same manager.
 */
function openStore(ctx: AppContext, manager: Manager): CrRepositoryHandle {
  const repo = createCrRepository({
    kube: ctx.kube,
    namespace: ctx.namespace,
    config: ctx.config,
    log: ctx.log,
    metrics: ctx.metrics,
    informerFactory: manager.informerFactory,
    ...(ctx.admissionSeal ? { seal: ctx.admissionSeal } : {}),
  });
  addStoreReconcilers(manager, repo.parts);
  return repo;
}

function authSettings(ctx: AppContext): AuthSettings {
  const { config } = ctx;
  if (config.DEFAULT.auth_strategy === 'noauth2') return { strategy: 'noauth2' };
  if (!ctx.openstack) {
    throw new Error(
      'auth_strategy = keystone needs OpenStack credentials to validate tokens; configure them or use noauth2',
    );
  }
  const ka = config.keystone_authtoken;
  const validator = createTokenValidator(ctx.openstack, {
    cacheTtlMs: ka.token_cache_time * 1000,
    maxEntries: ka.token_cache_size,
    negativeTtlMs: ka.invalid_token_cache_time * 1000,
    negativeMaxEntries: ka.invalid_token_cache_size,
    maxInFlight: ka.max_validations_in_flight,
    maxPerSecond: ka.max_validations_per_second,
    timeoutMs: config.operator.openstack_request_timeout * 1000,
    maxRetries: config.operator.openstack_max_retries,
    validationTimeoutMs: (ka.http_connect_timeout ?? config.operator.openstack_request_timeout) * 1000,
    validationMaxRetries: ka.http_request_max_retries,
    observer: createTokenValidationMetrics(ctx.metrics),
    interface: ka.interface,
    region: ka.region_name,
  });
  // keystonemiddleware points clients at its identity endpoint when www_authenticate_uri is not set.
  const wwwAuthenticateUri = config.keystone_authtoken.www_authenticate_uri ?? ctx.openstack.credentials.auth_url;
  return { strategy: 'keystone', validator, wwwAuthenticateUri };
}

export async function createComponent(ctx: AppContext, opts: ApiComponentOptions = {}): Promise<ApiComponent> {
  const log = ctx.log.child({ component: 'api' });
  const { config } = ctx;
  const auth = authSettings(ctx);
  const tls = opts.tls === false ? undefined : (opts.tls ?? apiTlsSettings(config));
  const policy = new PolicyEnforcer({ policyFile: config.oslo_policy.policy_file });
  const store = opts.repository ? undefined : openStore(ctx, ctx.manager);
  const repo: ApiRepository = opts.repository ?? store!;
  // The first sync is retried for as long as it takes (readiness stays false); only a shutdown ends the wait.
  await untilSyncedOrShutdown(repo, ctx.signal);
  // The first notification after a start (often with a failure) need not wait for a block of ids.
  store?.parts.ids.notifications.warm();
  /** The store's caches and reconcilers stop with the process's manager; a given repository by itself. */
  const stopStore = async (): Promise<void> => {
    if (opts.repository) await repo.stop();
  };

  const compute = computeHostCheckerFor(ctx.nova);
  if (!ctx.nova)
    log.warn(
      'no Nova configured: host create and rename will fail with 500, as Masakari does when Nova is unreachable',
    );
  const service = new HaService(repo, compute, config.DEFAULT);
  const app = createApiApp({
    service,
    repo,
    config,
    auth,
    policy,
    log,
    metrics: ctx.metrics,
    ready: () => repo.ready(),
  });

  let listener: ApiListener;
  try {
    listener = await createApiListener(app, tls, log, ctx.metrics);
  } catch (e) {
    await stopStore();
    throw e;
  }
  const { server } = listener;
  // Slow or idle clients must not hold sockets forever, nor crowd out the others (connections.ts).
  limitConnections(server, opts.connectionLimits);
  const host = opts.listen?.host ?? config.DEFAULT.masakari_api_listen;
  const port = opts.listen?.port ?? config.DEFAULT.masakari_api_listen_port;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    listener.stopWatch();
    await stopStore();
    throw e;
  }
  log.info(
    {
      host,
      port: (server.address() as AddressInfo).port,
      auth: config.DEFAULT.auth_strategy,
      tls: tls ? { certFile: tls.certFile, clientCa: tls.caFile } : false,
    },
    'Masakari API listening',
  );

  // The validating admission webhook (src/webhook/) runs next to the API: it
  // applies the same rules to kubectl/GitOps writes, reading the same caches.
  let webhook: WebhookServer | undefined;
  const webhookSettings = opts.webhook === false ? undefined : (opts.webhook ?? webhookSettingsFromEnv(process.env));
  if (webhookSettings) {
    try {
      webhook = await startWebhook({
        settings: webhookSettings,
        kube: ctx.kube,
        namespace: ctx.namespace,
        repo,
        underRecovery: (segmentUuid) => service.isUnderRecovery(segmentUuid),
        compute: ctx.nova ? compute : undefined,
        freshness: {
          expiredIntervalS: ctx.config.DEFAULT.notifications_expired_interval,
          now: () => systemClock.now(),
        },
        log,
        metrics: ctx.metrics,
      });
    } catch (e) {
      listener.stopWatch();
      server.close();
      await stopStore();
      throw e;
    }
  }

  let listening = true;
  return {
    name: 'api',
    ready: () => listening && repo.ready(),
    address: () => server.address() as AddressInfo,
    webhook,
    async stop() {
      listening = false;
      listener.stopWatch();
      await webhook?.stop();
      // Stop accepting, let in-flight requests finish, then drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = setTimeout(() => server.closeAllConnections(), 10_000);
      await closed;
      clearTimeout(deadline);
      await repo.settle?.();
      await stopStore();
      log.info('Masakari API stopped');
    },
  };
}
