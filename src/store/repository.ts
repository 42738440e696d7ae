// The Repository contract (src/domain/repository.ts) over FailoverSegment,
// HaHost and Notification custom resources. Reads come from informer caches
// (repository-reads.ts); every write goes to the API server and its result is
// put back into the cache at once (upsertLocal/deleteLocal), so a read right
// after a write on this replica reflects it: segment and host writes in
// spec-writes.ts, notification intake in notification-writes.ts, both
// admitting what they create through admission.ts. How each SQL guarantee is
// rebuilt is explained in docs/design.md, "Store: how SQL guarantees are kept".
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { HostRecord, NotificationRecord, SegmentRecord } from '../domain/records.ts';
import type { NewHost, NewNotification, NewSegment, Repository } from '../domain/repository.ts';
import type { StoreCaches } from './caches.ts';
import type { NameClaims } from './claims.ts';
import type { IdAllocator } from './ids.ts';
import type { Lifecycle } from './lifecycle.ts';
import { DEFAULT_PENDING_CLAIM_MS, NotificationWrites } from './notification-writes.ts';
import { RepositoryReads } from './repository-reads.ts';
import { SpecWrites } from './spec-writes.ts';

export { DEFAULT_PENDING_CLAIM_MS } from './notification-writes.ts';

export interface CrRepositoryDeps {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  caches: StoreCaches;
  claims: NameClaims;
  lifecycle: Lifecycle;
  ids: { segments: IdAllocator; hosts: IdAllocator; notifications: IdAllocator };
  pendingClaimMs?: number;
  /** How long a `deciding` duplicate claim is waited for before its creator counts as crashed (intake.ts). */
  claimDecisionGraceMs?: number;
  now?: () => Date;
}

export class CrRepository extends RepositoryReads implements Repository {
  private readonly specs: SpecWrites;
  private readonly notifications: NotificationWrites;

  constructor(deps: CrRepositoryDeps) {
    super(deps);
    const writer = { ...deps, fieldManager: FIELD_MANAGERS.api, now: deps.now ?? (() => new Date()) };
    this.specs = new SpecWrites(writer, this);
    this.notifications = new NotificationWrites(
      { ...writer, pendingClaimMs: deps.pendingClaimMs ?? DEFAULT_PENDING_CLAIM_MS },
      this,
    );
  }

  createSegment(s: NewSegment): Promise<SegmentRecord> {
    return this.specs.createSegment(s);
  }

  updateSegment(uuid: string, patch: Partial<NewSegment>): Promise<SegmentRecord> {
    return this.specs.updateSegment(uuid, patch);
  }

  deleteSegment(uuid: string): Promise<void> {
    return this.specs.deleteSegment(uuid);
  }

  createHost(segmentUuid: string, h: NewHost): Promise<HostRecord> {
    return this.specs.createHost(segmentUuid, h);
  }

  updateHost(uuid: string, patch: Partial<NewHost>): Promise<HostRecord> {
    return this.specs.updateHost(uuid, patch);
  }

  deleteHost(uuid: string): Promise<void> {
    return this.specs.deleteHost(uuid);
  }

  createNotification(n: NewNotification, windowSeconds: number): Promise<NotificationRecord> {
    return this.notifications.createNotification(n, windowSeconds);
  }

  /** Resolves once every background status write of a create has settled (graceful stop, tests). */
  settle(): Promise<void> {
    return this.notifications.settle();
  }
}
