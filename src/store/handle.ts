// The store's assembly: createCrRepository builds the Repository the REST
// facade uses (src/domain/repository.ts) over FailoverSegment, HaHost and
// Notification custom resources, and the parts the kubectl/GitOps
// reconcilers work with. Reached through the door, src/store/index.ts. See
// docs/design/store.md.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../k8s/client.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { Repository } from '../domain/repository.ts';
import { informerReady } from '../runtime/types.ts';
import type { InformerFactory, NotificationScope, StoreCaches } from './caches.ts';
import { createStoreCaches } from './caches.ts';
import { sweepOrphanPages } from './journal-pages.ts';
import { registerStateMetrics } from './state-metrics.ts';
import { DEFAULT_CLAIM_GRACE_MS, NameClaims } from './claims.ts';
import { createIdAllocator } from './ids.ts';
import type { IdAllocator } from './ids.ts';
import { Lifecycle } from './lifecycle.ts';
import { CrRepository } from './repository.ts';
import { DEFAULT_PENDING_CLAIM_MS } from './admission/notification-intake.ts';
import { INDEX } from '../model/indexes.ts';
import type { AdmissionSeal } from './admission/seal.ts';
import { sharedSealedVisibility } from './admission/visibility.ts';
import { systemClock } from '../time/clock.ts';
import type { Clock } from '../time/clock.ts';

/** A journal page is created before its notification's status counts it; younger ones are never orphans. */
const ORPHAN_PAGE_GRACE_MS = 10 * 60_000;

export interface CrRepositoryOptions {
  kube: KubeClient;
  namespace: string;
  config: Config;
  log: Logger;
  /** Registers the state metrics (src/store/state-metrics.ts) over these caches; only with the full notification scope. */
  metrics?: Registry;
  /** Age before an orphaned name claim may be removed; default 120 s. */
  claimGraceMs?: number;
  pendingClaimMs?: number;
  /** The caches' source: the process's manager (Manager.informerFactory); tests, src/testing/store.ts. */
  informerFactory: InformerFactory;
  /** Which notifications the cache holds; default 'all' (see NotificationScope). */
  notifications?: NotificationScope;
  /** The store's time (sealed visibility, the orphan sweep); default systemClock. */
  clock?: Clock;
  /** Seals REST-created notifications instead of writing their admission status (admission/seal.ts). */
  seal?: AdmissionSeal;
}

/** What the kubectl/GitOps reconcilers (src/reconcilers/) work with: the very caches, claims and ids of this store. */
export interface StoreParts {
  kube: KubeClient;
  namespace: string;
  config: Config;
  log: Logger;
  caches: StoreCaches;
  claims: NameClaims;
  ids: { segments: IdAllocator; hosts: IdAllocator; notifications: IdAllocator };
  pendingClaimMs: number;
  /** Name claims with no owner past their grace, and journal pages of deleted notifications; returns how many it removed. */
  sweepOrphans(opts?: { pageGraceMs?: number }): Promise<number>;
}

export type CrRepositoryHandle = Repository & {
  /** Starts the caches; resolves once every cache has synced. */
  start(): Promise<void>;
  /** Stops the caches. */
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
  readonly parts: StoreParts;
};

export function createCrRepository(opts: CrRepositoryOptions): CrRepositoryHandle {
  const { kube, namespace, config } = opts;
  const log = opts.log.child({ component: 'store' });
  const scope = opts.notifications ?? 'all';
  const clock = opts.clock ?? systemClock;
  const caches = createStoreCaches(opts.informerFactory, namespace, scope);
  // A narrowed notification cache would count only part of them.
  if (opts.metrics && scope === 'all') registerStateMetrics(opts.metrics, caches);
  const claims = new NameClaims({
    kube,
    namespace,
    log,
    graceMs: opts.claimGraceMs ?? DEFAULT_CLAIM_GRACE_MS,
    now: () => clock.now(),
    cachedOwner: (kind, name) => (kind === 'segment' ? caches.segments.get(name) : caches.hosts.get(name)),
  });
  const blockSize = config.operator.id_block_size;
  const ids = {
    segments: createIdAllocator(kube, namespace, 'segments', blockSize),
    hosts: createIdAllocator(kube, namespace, 'hosts', blockSize),
    notifications: createIdAllocator(kube, namespace, 'notifications', blockSize),
  };
  const pendingClaimMs = opts.pendingClaimMs ?? DEFAULT_PENDING_CLAIM_MS;
  // Sealed notifications exist (with a key, any process may have created some) only when this one has the key too.
  const sealed =
    opts.seal &&
    sharedSealedVisibility({
      kube,
      namespace,
      cache: caches.notifications,
      windowSeconds: config.DEFAULT.duplicate_notification_detection_interval,
      now: () => clock.now(),
      log,
    });
  const sealedVisibility = sealed && sealed.visibility;
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
    now: () => clock.now(),
    ...(opts.seal ? { seal: opts.seal } : {}),
    ...(sealedVisibility ? { sealedVisibility } : {}),
  });

  // Journal pages of deleted notifications (no garbage collector in every cluster): the sweep's second half.
  const sweepPages = (graceMs: number) =>
    sweepOrphanPages(
      kube,
      namespace,
      (uuid) => caches.notifications.byIndex(INDEX.uuid, uuid).length > 0,
      clock.now(),
      graceMs,
    );
  const sweepOrphans = async (o: { pageGraceMs?: number } = {}) => {
    // With part of the notifications cached, every other notification's pages would look orphaned.
    if (scope !== 'all') throw new Error(`store ${namespace}: orphan sweep needs every notification cached`);
    return (await claims.sweep()) + (await sweepPages(o.pageGraceMs ?? ORPHAN_PAGE_GRACE_MS));
  };

  const informers = [caches.segments, caches.hosts, caches.notifications];
  const parts: StoreParts = { kube, namespace, config, log, caches, claims, ids, pendingClaimMs, sweepOrphans };

  return Object.assign(repo, {
    async start(): Promise<void> {
      await Promise.all(informers.map((i) => i.start()));
    },
    async stop(): Promise<void> {
      if (sealed) sealed.release();
      for (const i of informers) i.stop();
    },
    ready: () => informers.every(informerReady),
    sweepOrphans,
    parts,
  });
}
