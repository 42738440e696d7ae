// Entry point of the CR store: `createCrRepository` builds the Repository the
// REST facade uses (src/domain/repository.ts) over FailoverSegment, HaHost and
// Notification custom resources, and runs the kubectl/GitOps reconcilers
// (src/reconcilers/) under leader election. See docs/design.md, "Store: how
// SQL guarantees are kept".
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../k8s/client.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { Repository } from '../domain/repository.ts';
import type { ControllerFactory } from '../reconcilers/index.ts';
import { StoreReconcilers } from '../reconcilers/index.ts';
import { MASAKARI_VALIDATORS } from '../reconcilers/validators.ts';
import type { SpecValidators } from '../reconcilers/validators.ts';
import { createInformerFactory } from '../runtime/informer.ts';
import { Controller } from '../runtime/controller.ts';
import { informerReady } from '../runtime/types.ts';
import { runLeaderElection } from '../runtime/leaderelection.ts';
import type { InformerFactory } from './caches.ts';
import { createStoreCaches } from './caches.ts';
import { sweepOrphanPages } from './journal-pages.ts';
import { registerStateMetrics } from './state-metrics.ts';
import { DEFAULT_CLAIM_GRACE_MS, NameClaims } from './claims.ts';
import { createIdAllocator } from './ids.ts';
import { Lifecycle } from './lifecycle.ts';
import { sweepNotificationClaims } from './intake.ts';
import { CrRepository, DEFAULT_PENDING_CLAIM_MS } from './repository.ts';
import { runRetention } from './retention.ts';
import { INDEX } from '../model/indexes.ts';

export { createIdAllocator } from './ids.ts';
export type { IdAllocator } from './ids.ts';

/** Lease held by the replica that runs the store reconcilers. */
export const STORE_LEASE_NAME = 'masakari-store-reconcilers';
const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** A journal page is created before its notification's status counts it; younger ones are never orphans. */
const ORPHAN_PAGE_GRACE_MS = 10 * 60_000;
/** The retention task runs this often on the leader, the first time a minute after it starts leading. */
const DEFAULT_RETENTION_INTERVAL_MS = 3_600_000;
const DEFAULT_RETENTION_FIRST_AFTER_MS = 60_000;
/** Workers per store controller: admission is a handful of small API calls, so a few suffice. */
const RECONCILE_WORKERS = 2;

/** Runs `lead(signal)` while this process holds the lease; resolves when `signal` aborts. */
export type LeaderRunner = (args: {
  name: string;
  identity: string;
  lead: (signal: AbortSignal) => Promise<void>;
  signal: AbortSignal;
}) => Promise<void>;

export interface CrRepositoryOptions {
  kube: KubeClient;
  namespace: string;
  config: Config;
  log: Logger;
  /** This process (pod name or hostname + pid): leader-election identity. */
  identity: string;
  metrics?: Registry;
  /** Run the kubectl/GitOps reconcilers (under leader election) in this process; default true. */
  reconcilers?: boolean;
  /** Age before an orphaned name claim may be removed; default 120 s. */
  claimGraceMs?: number;
  sweepIntervalMs?: number;
  /** Period of the notification retention task (default 1 h) and delay of its first pass (default 1 min). */
  retentionIntervalMs?: number;
  retentionFirstAfterMs?: number;
  pendingClaimMs?: number;
  validators?: SpecValidators;
  /** Default: private list+watch informers (src/runtime/informer.ts); processes pass their SharedInformerFactory's. */
  informerFactory?: InformerFactory;
  /** Default: the runtime's Controller (src/runtime/controller.ts) with RECONCILE_WORKERS workers. */
  makeController?: ControllerFactory;
  /** Default: the runtime's Lease-based election (src/runtime/leaderelection.ts) with [operator] lease settings. */
  runLeader?: LeaderRunner;
}

export type CrRepositoryHandle = Repository & {
  /** Starts the caches (resolves once every cache has synced) and, if enabled, the reconcilers. */
  start(): Promise<void>;
  /** Stops the caches and the reconcilers; resolves once the reconcilers' Lease is released (close the client after). */
  stop(): Promise<void>;
  /** Resolves once the background status writes of recent creates have settled (call before stop). */
  settle(): Promise<void>;
  /** True while every cache is serving: synced, and its watch not failing for long (runtime informerReady). */
  ready(): boolean;
  /**
   * Removes stale name claims and the journal pages of deleted notifications
   * now (the reconcilers also do it periodically); returns how many. Duplicate
   * claims are swept by the reconcilers only.
   */
  sweepOrphans(opts?: { pageGraceMs?: number }): Promise<number>;
};

/** Leader election on a coordination.k8s.io Lease in the store's namespace, timed by [operator] lease_*. */
function leaseRunner(opts: CrRepositoryOptions, log: Logger): LeaderRunner {
  const { operator } = opts.config;
  return ({ name, identity, lead, signal }) =>
    runLeaderElection({
      kube: opts.kube,
      namespace: opts.namespace,
      name,
      identity,
      onStartedLeading: (leading) => {
        log.info({ lease: name }, 'leading: store reconcilers started');
        return lead(leading);
      },
      onStoppedLeading: () => log.info({ lease: name }, 'no longer leading: store reconcilers stopped'),
      signal,
      leaseDurationMs: operator.lease_duration * 1000,
      renewDeadlineMs: operator.renew_deadline * 1000,
      retryPeriodMs: operator.retry_period * 1000,
      log,
      metrics: opts.metrics,
    });
}

export function createCrRepository(opts: CrRepositoryOptions): CrRepositoryHandle {
  const { kube, namespace, config, identity } = opts;
  const log = opts.log.child({ component: 'store' });
  const caches = createStoreCaches(opts.informerFactory ?? createInformerFactory({ kube, log }), namespace);
  if (opts.metrics) registerStateMetrics(opts.metrics, caches);
  const claims = new NameClaims({
    kube,
    namespace,
    log,
    graceMs: opts.claimGraceMs ?? DEFAULT_CLAIM_GRACE_MS,
    cachedOwner: (kind, name) => (kind === 'segment' ? caches.segments.get(name) : caches.hosts.get(name)),
  });
  const blockSize = config.operator.id_block_size;
  const ids = {
    segments: createIdAllocator(kube, namespace, 'segments', blockSize),
    hosts: createIdAllocator(kube, namespace, 'hosts', blockSize),
    notifications: createIdAllocator(kube, namespace, 'notifications', blockSize),
  };
  const pendingClaimMs = opts.pendingClaimMs ?? DEFAULT_PENDING_CLAIM_MS;
  const apiLifecycle = new Lifecycle({ kube, namespace, claims, caches, log, fieldManager: FIELD_MANAGERS.api });
  const repo = new CrRepository({
    kube,
    namespace,
    log,
    caches,
    claims,
    lifecycle: apiLifecycle,
    ids,
    pendingClaimMs,
  });

  const reconcilers =
    opts.reconcilers === false
      ? undefined
      : new StoreReconcilers({
          deps: {
            kube,
            namespace,
            log: log.child({ component: 'store-reconcilers' }),
            caches,
            claims,
            lifecycle: new Lifecycle({ kube, namespace, claims, caches, log, fieldManager: FIELD_MANAGERS.reconciler }),
            ids,
            validators: opts.validators ?? MASAKARI_VALIDATORS,
            duplicateWindowSeconds: config.DEFAULT.duplicate_notification_detection_interval,
            pendingClaimMs,
            now: () => new Date(),
            confirmedClaims: new Map(),
          },
          makeController:
            opts.makeController ??
            ((name, reconcile) =>
              new Controller({ name, reconcile, workers: RECONCILE_WORKERS, log, metrics: opts.metrics })),
          sweep: async () => (await sweepAll()) + (await sweepNotificationClaims(kube, namespace, new Date(), log)),
          sweepIntervalMs: opts.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
          retention: {
            run: (signal) =>
              runRetention(
                {
                  kube,
                  namespace,
                  retentionDays: config.operator.notification_retention_days,
                  windowSeconds: config.DEFAULT.duplicate_notification_detection_interval,
                  log: log.child({ component: 'retention' }),
                },
                signal,
              ),
            intervalMs: opts.retentionIntervalMs ?? DEFAULT_RETENTION_INTERVAL_MS,
            firstAfterMs: opts.retentionFirstAfterMs ?? DEFAULT_RETENTION_FIRST_AFTER_MS,
          },
          log,
        });

  // Journal pages of deleted notifications (no garbage collector in every cluster): the sweep's second half.
  const sweepPages = (graceMs: number) =>
    sweepOrphanPages(
      kube,
      namespace,
      (uuid) => caches.notifications.byIndex(INDEX.uuid, uuid).length > 0,
      new Date(),
      graceMs,
    );
  const sweepAll = async (o: { pageGraceMs?: number } = {}) =>
    (await claims.sweep()) + (await sweepPages(o.pageGraceMs ?? ORPHAN_PAGE_GRACE_MS));

  const stopping = new AbortController();
  let leading: Promise<void> | undefined;
  const informers = [caches.segments, caches.hosts, caches.notifications, caches.journalPages];

  return Object.assign(repo, {
    async start(): Promise<void> {
      await Promise.all(informers.map((i) => i.start()));
      if (reconcilers && !leading) {
        const runLeader = opts.runLeader ?? leaseRunner(opts, log);
        leading = runLeader({
          name: STORE_LEASE_NAME,
          identity,
          lead: (signal) => reconcilers.start(signal),
          signal: stopping.signal,
        }).catch((err: unknown) => log.error({ err }, 'store reconcilers stopped with an error'));
      }
    },
    async stop(): Promise<void> {
      stopping.abort();
      for (const i of informers) i.stop();
      // The leader releases its Lease on the way out; the client must still be open for that write.
      await leading;
    },
    ready: () => informers.every(informerReady),
    sweepOrphans: (o?: { pageGraceMs?: number }) => sweepAll(o),
  });
}
