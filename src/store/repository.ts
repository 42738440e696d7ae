// The Repository contract (src/domain/repository.ts) over FailoverSegment,
// HaHost and Notification custom resources. Reads come from informer caches;
// every write goes to the API server and its result is put back into the
// cache at once (upsertLocal/deleteLocal), so a read right after a write on
// this replica reflects it. How each SQL guarantee is rebuilt is explained in
// docs/design.md, "Store: how SQL guarantees are kept".
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { KubeError, isAlreadyExists, isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { ANNOTATIONS, API_VERSION, FIELD_MANAGERS, FINALIZERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type {
  FailoverSegment,
  FailoverSegmentSpec,
  HaHost,
  HaHostSpec,
  MasakariObject,
  Notification,
  NotificationStatus,
} from '../model/types.ts';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from '../domain/records.ts';
import type { NewHost, NewNotification, NewSegment, NotificationPageQuery, Repository } from '../domain/repository.ts';
import { NotificationIndex } from './notification-index.ts';
import { DuplicateNotificationError, NotFoundInStoreError, StoreUnavailableError } from '../domain/repository.ts';
import { duplicateNotification } from '../domain/messages.ts';
import type { StoreCaches } from './caches.ts';
import { recordMiss, withFreshReads } from './fresh-reads.ts';
import type { NameClaims } from './claims.ts';
import type { IdAllocator } from './ids.ts';
import type { Lifecycle } from './lifecycle.ts';
import { admittedConditions, notificationConditions } from './conditions.ts';
import { payloadHash } from './fingerprints.ts';
import { claimNotification, findCachedDuplicate, IntakeContendedError } from './intake.ts';
import { toHostRecord, toNotificationRecord, toSegmentRecord, toVMoveView } from './mapping.ts';
import { notificationObjectName, restObjectName } from './names.ts';
import type { JournalPage } from './journal-pages.ts';
import { assembleNotification, countedPages, notificationUuidOf, pageOf } from './journal-pages.ts';
import { rfc3339Seconds } from '../time/format.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { INDEX } from '../model/indexes.ts';

/** Attempts for an object update that keeps meeting 409 (someone else wrote it between our read and write). */
const MAX_UPDATE_ATTEMPTS = 10;
/** A metadata.name collision with a kubectl-created object is retried with a new uuid this many times. */
const MAX_CREATE_ATTEMPTS = 3;
/** The system-assigned status of a create is re-tried on top of someone else's unrelated write this many times. */
const ADMIT_ATTEMPTS = 5;
/**
 * How long an accepted duplicate claim whose Notification does not exist
 * counts as "a create still to finish" (the creator crashed, or is in flight)
 * rather than "a notification someone deleted". masakari-monitors retries a
 * failed POST for about two minutes (api_retry_max x api_retry_interval).
 */
export const DEFAULT_PENDING_CLAIM_MS = 300_000;
/** Retry-After (seconds) of the 503 an intake answers when the API server fails or claims keep contending. */
export const INTAKE_RETRY_AFTER_SECONDS = 2;

/**
 * An API server failure during intake (no answer or timeout, 5xx, 429; etcd
 * out of space is a 5xx) or a claim that kept contending: retryable, so 503
 * with Retry-After rather than 500; masakari-monitors retries it. Anything
 * else (domain errors, a 4xx from the API server) passes through.
 */
function intakeError(e: unknown): unknown {
  const transient = e instanceof KubeError && (e.code === 0 || e.code === 429 || e.code >= 500);
  if (transient || e instanceof IntakeContendedError) {
    return new StoreUnavailableError(`notification intake: ${e.message}`, INTAKE_RETRY_AFTER_SECONDS);
  }
  return e;
}

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

type SegmentPatch = Partial<NewSegment>;
type HostPatch = Partial<NewHost>;

function segmentSpec(base: FailoverSegmentSpec | undefined, p: SegmentPatch): FailoverSegmentSpec {
  const spec: FailoverSegmentSpec = { ...(base as FailoverSegmentSpec) };
  if (p.name !== undefined) spec.name = p.name;
  if (p.service_type !== undefined) spec.serviceType = p.service_type;
  if (p.recovery_method !== undefined) spec.recoveryMethod = p.recovery_method;
  if (p.description !== undefined) spec.description = p.description;
  if (p.enabled !== undefined) spec.enabled = p.enabled;
  return spec;
}

function hostSpec(base: HaHostSpec, p: HostPatch): HaHostSpec {
  const spec: HaHostSpec = { ...base };
  if (p.name !== undefined) spec.name = p.name;
  if (p.type !== undefined) spec.type = p.type;
  if (p.control_attributes !== undefined) spec.controlAttributes = p.control_attributes;
  if (p.reserved !== undefined) spec.reserved = p.reserved;
  if (p.on_maintenance !== undefined) spec.onMaintenance = p.on_maintenance;
  return spec;
}

export class CrRepository implements Repository {
  private readonly now: () => Date;
  private readonly pendingClaimMs: number;
  private readonly pendingAdmissions = new Set<Promise<unknown>>();

  /** Sorted notification list + unfinished count per host, kept current from the cache's events. */
  private readonly notificationIndex: NotificationIndex;

  constructor(private readonly deps: CrRepositoryDeps) {
    this.notificationIndex = new NotificationIndex(deps.caches.notifications);
    this.now = deps.now ?? (() => new Date());
    this.pendingClaimMs = deps.pendingClaimMs ?? DEFAULT_PENDING_CLAIM_MS;
  }

  // ------------------------------------------------------------------ reads

  private segmentObject(uuid: string): FailoverSegment | undefined {
    const seg = this.deps.caches.segments.byIndex(INDEX.uuid, uuid).find(isAdmitted);
    if (!seg) recordMiss('segment', uuid);
    return seg;
  }

  /** A host is visible when it is admitted and so is its segment (a segment being deleted hides its hosts). */
  private hostVisible = (h: HaHost): boolean => {
    if (!isAdmitted(h)) return false;
    const segUuid = h.status?.segmentUuid;
    return segUuid !== undefined && this.segmentObject(segUuid) !== undefined;
  };

  private hostObject(uuid: string): HaHost | undefined {
    const host = this.deps.caches.hosts.byIndex(INDEX.uuid, uuid).find(this.hostVisible);
    if (!host) recordMiss('host', uuid);
    return host;
  }

  private notificationObject(uuid: string): Notification | undefined {
    const n = this.deps.caches.notifications.byIndex(INDEX.uuid, uuid).find(isAdmitted);
    if (!n) recordMiss('notification', uuid);
    return n;
  }

  /** Read-your-writes across replicas (fresh-reads.ts): a request failing on a cache miss is retried once after reading the API server. */
  withFreshReads<T>(attempt: () => Promise<T>, retryable: (e: unknown) => boolean): Promise<T> {
    return withFreshReads(this.deps, attempt, retryable);
  }

  listSegments(): SegmentRecord[] {
    return this.deps.caches.segments.list().filter(isAdmitted).map(toSegmentRecord);
  }

  getSegment(uuid: string): SegmentRecord | undefined {
    const seg = this.segmentObject(uuid);
    return seg && toSegmentRecord(seg);
  }

  listHosts(segmentUuid?: string): HostRecord[] {
    const hosts =
      segmentUuid === undefined
        ? this.deps.caches.hosts.list()
        : this.deps.caches.hosts.byIndex(INDEX.segmentUuid, segmentUuid);
    // hostVisible per host would look its segment up once per host; a list asks once per segment.
    const seen = new Map<string, boolean>();
    const segmentVisible = (uuid: string): boolean => {
      let visible = seen.get(uuid);
      if (visible === undefined) seen.set(uuid, (visible = this.segmentObject(uuid) !== undefined));
      return visible;
    };
    return hosts
      .filter((h) => isAdmitted(h) && h.status?.segmentUuid !== undefined && segmentVisible(h.status.segmentUuid))
      .map(toHostRecord);
  }

  getHost(uuid: string): HostRecord | undefined {
    const host = this.hostObject(uuid);
    return host && toHostRecord(host);
  }

  getHostByName(name: string): HostRecord | undefined {
    const host = this.deps.caches.hosts.byIndex(INDEX.name, name).find(this.hostVisible);
    return host && toHostRecord(host);
  }

  listNotifications(): NotificationRecord[] {
    return this.deps.caches.notifications.list().filter(isAdmitted).map(toNotificationRecord);
  }

  pageNotifications(q: NotificationPageQuery): NotificationRecord[] | undefined {
    let marker;
    if (q.markerId !== undefined) {
      marker = this.notificationIndex.byIdFirst(q.markerId);
      if (!marker) return undefined;
    }
    return this.notificationIndex.page(q.dir, q.limit, marker, q).map((e) => toNotificationRecord(e.obj));
  }

  unfinishedNotificationCount(hostUuid: string): number {
    return this.notificationIndex.unfinishedCount(hostUuid);
  }

  /** The notification with the history its journal pages hold put back (src/store/journal-pages.ts). */
  private wholeNotification(uuid: string): Notification | undefined {
    const n = this.notificationObject(uuid);
    if (!n || countedPages(n.status) === 0) return n;
    const pages = this.deps.caches.journalPages
      .byIndex(INDEX.notificationUuid, uuid)
      .map(pageOf)
      .filter((p): p is JournalPage => p !== undefined);
    return assembleNotification(n, pages);
  }

  getNotification(uuid: string): NotificationRecord | undefined {
    const n = this.wholeNotification(uuid);
    return n && toNotificationRecord(n);
  }

  listVMoves(notificationUuid: string): VMoveRecordView[] {
    const n = this.wholeNotification(notificationUuid);
    return (n?.status?.vmoves ?? []).map((v) => toVMoveView(notificationUuid, v));
  }

  getVMove(uuid: string): VMoveRecordView | undefined {
    // The move is in its notification's status, or in one of its journal pages (the status copy is newer).
    const owners = new Set(this.deps.caches.notifications.byIndex(INDEX.vmove, uuid).map(notificationUuidOf));
    for (const cm of this.deps.caches.journalPages.byIndex(INDEX.vmove, uuid)) {
      owners.add(cm.metadata.labels?.[LABELS.notificationUuid] ?? '');
    }
    for (const owner of owners) {
      const n = owner ? this.wholeNotification(owner) : undefined;
      const v = n?.status?.vmoves?.find((m) => m.uuid === uuid);
      if (v) return toVMoveView(n?.status?.uuid ?? owner, v);
    }
    return undefined;
  }

  // --------------------------------------------------------------- segments

  async createSegment(s: NewSegment): Promise<SegmentRecord> {
    const { claims, ids, caches } = this.deps;
    for (let attempt = 1; ; attempt++) {
      const uuid = randomUUID();
      const name = restObjectName(s.name, uuid, 'segment');
      // Claim first: a create refused for its name must not consume an id
      // (Masakari's auto-increment does not either, and clients see ids).
      await claims.take('segment', s.name, { name });
      const id = await ids.segments.next();
      const body: FailoverSegment = {
        apiVersion: API_VERSION,
        kind: 'FailoverSegment',
        metadata: {
          name,
          labels: { [LABELS.uuid]: uuid, [LABELS.id]: String(id), [LABELS.managedBy]: MANAGED_BY },
          finalizers: [FINALIZERS.segmentCascade],
        },
        spec: segmentSpec(undefined, s),
      };
      const created = await this.createOrRelease(RESOURCES.segments, body, 'segment', s.name);
      if (!created) {
        if (attempt < MAX_CREATE_ATTEMPTS) continue;
        throw new Error(`could not find a free metadata.name for segment ${JSON.stringify(s.name)}`);
      }
      const admitted = await this.admit(RESOURCES.segments, created, { uuid, id }, async () => {
        await this.deps.lifecycle.deleteSegment(created);
      });
      caches.segments.upsertLocal(admitted);
      return toSegmentRecord(admitted);
    }
  }

  async updateSegment(uuid: string, patch: SegmentPatch): Promise<SegmentRecord> {
    const start = this.segmentObject(uuid);
    if (!start) throw new NotFoundInStoreError(`segment ${uuid} not found`);
    const { updated, previousName } = await this.replaceSpec(RESOURCES.segments, 'segment', start, (obj) =>
      segmentSpec(obj.spec, patch),
    );
    const written = await this.patchStatus(RESOURCES.segments, updated, {
      updatedAt: rfc3339Seconds(this.now()),
      observedGeneration: updated.metadata.generation,
    });
    if (previousName !== written.spec.name) {
      await this.deps.claims.release('segment', previousName, written.metadata.name ?? '');
    }
    this.deps.caches.segments.upsertLocal(written);
    return toSegmentRecord(written);
  }

  async deleteSegment(uuid: string): Promise<void> {
    const seg = this.segmentObject(uuid);
    if (!seg) throw new NotFoundInStoreError(`segment ${uuid} not found`);
    await this.deps.lifecycle.deleteSegment(seg);
  }

  // ------------------------------------------------------------------ hosts

  async createHost(segmentUuid: string, h: NewHost): Promise<HostRecord> {
    const { claims, ids, caches } = this.deps;
    const seg = this.segmentObject(segmentUuid);
    if (!seg) throw new NotFoundInStoreError(`segment ${segmentUuid} not found`);
    for (let attempt = 1; ; attempt++) {
      const uuid = randomUUID();
      const name = restObjectName(h.name, uuid, 'host');
      // Claim first: a create refused for its name must not consume an id
      // (Masakari's auto-increment does not either, and clients see ids).
      await claims.take('host', h.name, { name });
      const id = await ids.hosts.next();
      const body: HaHost = {
        apiVersion: API_VERSION,
        kind: 'HaHost',
        metadata: {
          name,
          labels: {
            [LABELS.uuid]: uuid,
            [LABELS.id]: String(id),
            [LABELS.segmentUuid]: segmentUuid,
            [LABELS.managedBy]: MANAGED_BY,
          },
          finalizers: [FINALIZERS.hostCleanup],
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: KINDS.segment.kind,
              name: seg.metadata.name ?? '',
              uid: seg.metadata.uid ?? '',
            },
          ],
        },
        spec: {
          name: h.name,
          segmentRef: { name: seg.metadata.name ?? '' },
          type: h.type,
          controlAttributes: h.control_attributes,
          reserved: h.reserved,
          onMaintenance: h.on_maintenance,
        },
      };
      const created = await this.createOrRelease(RESOURCES.hosts, body, 'host', h.name);
      if (!created) {
        if (attempt < MAX_CREATE_ATTEMPTS) continue;
        throw new Error(`could not find a free metadata.name for host ${JSON.stringify(h.name)}`);
      }
      const admitted = await this.admit(
        RESOURCES.hosts,
        created,
        {
          uuid,
          id,
          segmentUuid,
          reserved: h.reserved,
          onMaintenance: h.on_maintenance,
          flagsGeneration: created.metadata.generation,
        },
        async () => {
          await this.deps.lifecycle.deleteHost(created);
        },
      );
      caches.hosts.upsertLocal(admitted);
      return toHostRecord(admitted);
    }
  }

  /**
   * PUT of a host. The spec gets the patched fields and, for the flags, the
   * EFFECTIVE values (so an engine latch is not lost by an unrelated edit);
   * status then gets the same flags stamped with the new generation. Writing
   * status even when spec did not change is what makes PUT on_maintenance=false
   * clear an engine latch while spec was already false.
   */
  async updateHost(uuid: string, patch: HostPatch): Promise<HostRecord> {
    const start = this.hostObject(uuid);
    if (!start) throw new NotFoundInStoreError(`host ${uuid} not found`);
    const { updated, previousName } = await this.replaceSpec(RESOURCES.hosts, 'host', start, (obj) => {
      const flags = effectiveFlags(obj);
      return hostSpec(obj.spec, {
        ...patch,
        reserved: patch.reserved ?? flags.reserved,
        on_maintenance: patch.on_maintenance ?? flags.onMaintenance,
      });
    });
    const written = await this.patchStatus(RESOURCES.hosts, updated, {
      reserved: updated.spec.reserved === true,
      onMaintenance: updated.spec.onMaintenance === true,
      flagsGeneration: updated.metadata.generation,
      updatedAt: rfc3339Seconds(this.now()),
      observedGeneration: updated.metadata.generation,
    });
    if (previousName !== written.spec.name) {
      await this.deps.claims.release('host', previousName, written.metadata.name ?? '');
    }
    this.deps.caches.hosts.upsertLocal(written);
    return toHostRecord(written);
  }

  async deleteHost(uuid: string): Promise<void> {
    const host = this.hostObject(uuid);
    if (!host) throw new NotFoundInStoreError(`host ${uuid} not found`);
    await this.deps.lifecycle.deleteHost(host);
  }

  // ---------------------------------------------------------- notifications

  async createNotification(n: NewNotification, windowSeconds: number): Promise<NotificationRecord> {
    const host = this.hostObject(n.source_host_uuid);
    if (!host) throw new NotFoundInStoreError(`host ${n.source_host_uuid} not found`);
    const candidate = { type: n.type, payloadHash: payloadHash(n.payload), generatedTime: n.generated_time };
    const duplicate = () => new DuplicateNotificationError(duplicateNotification(host.spec.name, n.type));

    // Notifications older than the claims' lifetime are long in every replica's cache.
    if (
      findCachedDuplicate(
        this.deps.caches.notifications.byIndex(INDEX.hostUuid, n.source_host_uuid),
        candidate,
        windowSeconds,
      )
    ) {
      throw duplicate();
    }

    const uuid = randomUUID();
    try {
      const outcome = await claimNotification({
        kube: this.deps.kube,
        namespace: this.deps.namespace,
        host,
        hostUuid: n.source_host_uuid,
        candidate,
        windowSeconds,
        name: notificationObjectName(host.spec.name, n.type, uuid),
        uuid,
        exists: (name) => this.notificationExists(name),
        pendingMs: this.pendingClaimMs,
        decisionGraceMs: this.deps.claimDecisionGraceMs,
        now: this.now,
      });
      if (outcome.kind === 'duplicate') throw duplicate();
      // Our claim, or one accepted by a request that has not created its Notification (yet): create it, exactly once.
      return await this.materialise(outcome, host, n, duplicate);
    } catch (e) {
      throw intakeError(e);
    }
  }

  private async notificationExists(name: string): Promise<boolean> {
    if (this.deps.caches.notifications.get(name)) return true;
    return (await this.deps.lifecycle.fresh<Notification>(RESOURCES.notifications, name)) !== undefined;
  }

  /**
   * Creates the Notification an accepted claim stands for. Whoever's create
   * succeeds answers 202; a concurrent creator of the same claim gets
   * AlreadyExists and answers 409 duplicate, so exactly one request wins.
   */
  private async materialise(
    fp: { name: string; uuid: string; generatedTime: string },
    host: HaHost,
    n: NewNotification,
    duplicate: () => Error,
  ): Promise<NotificationRecord> {
    const id = await this.deps.ids.notifications.next();
    const body: Notification = {
      apiVersion: API_VERSION,
      kind: 'Notification',
      metadata: {
        name: fp.name,
        labels: {
          [LABELS.uuid]: fp.uuid,
          [LABELS.id]: String(id),
          [LABELS.segmentUuid]: n.failover_segment_uuid,
          [LABELS.hostUuid]: n.source_host_uuid,
          [LABELS.managedBy]: MANAGED_BY,
        },
        annotations: { [ANNOTATIONS.payloadOrder]: JSON.stringify(Object.keys(n.payload)) },
      },
      spec: { type: n.type, hostname: host.spec.name, generatedTime: fp.generatedTime, payload: n.payload },
    };
    let created: Notification;
    try {
      created = await this.deps.kube.create<Notification>(RESOURCES.notifications, this.deps.namespace, body, {
        fieldManager: FIELD_MANAGERS.api,
      });
    } catch (e) {
      if (isAlreadyExists(e)) throw duplicate();
      throw e;
    }
    const fields = {
      uuid: fp.uuid,
      id,
      phase: 'new' as const,
      sourceHostUuid: n.source_host_uuid,
      failoverSegmentUuid: n.failover_segment_uuid,
    };
    // The notification is durable once created (its uuid and id are in its
    // labels), so the 202 does not wait for the status write: that write
    // completes in the background, and if it fails the kubectl-path reconciler
    // admits the object from its labels after a grace period. This replica
    // shows the admitted view at once (read-your-writes: same resourceVersion
    // as the create, so the create's own watch event does not replace it).
    const local: Notification = { ...created, status: { ...created.status, ...fields } };
    this.deps.caches.notifications.upsertLocal(local);
    const admitting = this.admit(RESOURCES.notifications, created, fields, undefined).then(
      (admitted) => this.deps.caches.notifications.upsertLocal(admitted),
      (err: unknown) =>
        this.deps.log.warn(
          { err, notification: fp.uuid },
          'status write after notification create failed; the reconciler will admit it',
        ),
    );
    this.pendingAdmissions.add(admitting);
    void admitting.finally(() => this.pendingAdmissions.delete(admitting));
    return toNotificationRecord(local);
  }

  /** Resolves once every background status write of a create has settled (graceful stop, tests). */
  async settle(): Promise<void> {
    while (this.pendingAdmissions.size) await Promise.allSettled([...this.pendingAdmissions]);
  }

  // ---------------------------------------------------------------- helpers

  /** Creates the object; on AlreadyExists (its metadata.name is taken by another object) releases the claim and returns undefined. */
  private async createOrRelease<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    body: T,
    kind: 'segment' | 'host',
    masakariName: string,
  ): Promise<T | undefined> {
    const name = body.metadata.name ?? '';
    try {
      return await this.deps.kube.create<T>(ref, this.deps.namespace, body, { fieldManager: FIELD_MANAGERS.api });
    } catch (e) {
      await this.deps.claims.release(kind, masakariName, name).catch((err: unknown) => {
        this.deps.log.warn(
          { err, claim: masakariName },
          'could not release name claim after a failed create; the sweeper will',
        );
      });
      if (isAlreadyExists(e)) return undefined;
      throw e;
    }
  }

  /**
   * Second write of a create: the system-assigned status (uuid, id, Ready).
   * Until it lands the object is invisible. If it cannot be written, the
   * create is rolled back (when a rollback is given) so a client that saw an
   * error does not later find the object; a crash instead leaves the
   * reconciler to finish the admission.
   */
  private async admit<T extends MasakariObject>(
    ref: ResourceRef,
    created: T,
    fields: Record<string, unknown>,
    rollback: (() => Promise<void>) | undefined,
  ): Promise<T> {
    let basis = created;
    for (let attempt = 1; ; attempt++) {
      try {
        // Conditional on the version we last saw: if this write comes late (a
        // loaded API server) and the kubectl-path reconciler has admitted the
        // object meanwhile — and the engine perhaps moved it on — we must not
        // write `new` over `running`. Then the admitted object is the answer.
        return await this.patchStatus(
          ref,
          basis,
          {
            ...fields,
            // status.createdAt: the created_at that survives a backup and restore (src/store/mapping.ts).
            ...(basis.metadata.creationTimestamp ? { createdAt: basis.metadata.creationTimestamp } : {}),
            observedGeneration: basis.metadata.generation,
            conditions:
              'phase' in fields
                ? notificationConditions(
                    undefined,
                    fields.phase as NotificationStatus,
                    basis.metadata.generation,
                    this.now(),
                  )
                : admittedConditions(undefined, basis.metadata.generation, this.now()),
          },
          basis.metadata.resourceVersion,
        );
      } catch (e) {
        if (isConflict(e)) {
          const current = await this.deps.lifecycle.fresh<T>(ref, created.metadata.name ?? '');
          if (current && current.metadata.uid === created.metadata.uid) {
            if (current.status?.uuid === fields.uuid) return current;
            // Someone else changed the object (a label edit, a status field)
            // without admitting it: admit on top of that version. Leaving it
            // to the reconciler would hold the object back for its grace period.
            if (current.status?.uuid === undefined && attempt < ADMIT_ATTEMPTS) {
              basis = current;
              continue;
            }
          }
        }
        if (rollback) {
          await rollback().catch((err: unknown) => {
            this.deps.log.error(
              { err, name: created.metadata.name },
              'rollback of a half-created object failed; the reconciler admits it',
            );
          });
        }
        throw e;
      }
    }
  }

  private async patchStatus<T extends MasakariObject>(
    ref: ResourceRef,
    obj: T,
    status: Record<string, unknown>,
    /** When given, the patch applies only to this version (409 otherwise). */
    resourceVersion?: string,
  ): Promise<T> {
    try {
      return await this.deps.kube.mergePatch<T>(
        ref,
        this.deps.namespace,
        obj.metadata.name ?? '',
        resourceVersion ? { metadata: { resourceVersion }, status } : { status },
        {
          status: true,
          fieldManager: FIELD_MANAGERS.api,
        },
      );
    } catch (e) {
      if (isNotFound(e))
        throw new NotFoundInStoreError(`${ref.plural}/${obj.metadata.name} vanished during the update`);
      throw e;
    }
  }

  /**
   * Read-modify-write of a spec with resourceVersion compare-and-swap,
   * claiming a new Masakari name first when the edit renames the object.
   * Returns the written object and the name it carried before.
   */
  private async replaceSpec<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: 'segment' | 'host',
    start: T,
    edit: (obj: T) => T['spec'],
  ): Promise<{ updated: T; previousName: string }> {
    const { kube, namespace, claims } = this.deps;
    const name = start.metadata.name ?? '';
    const owner = { name, uid: start.metadata.uid ?? '' };
    const taken: string[] = [];
    let obj: T | undefined = start;
    try {
      for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
        if (!obj || obj.metadata.deletionTimestamp || obj.metadata.uid !== start.metadata.uid) {
          throw new NotFoundInStoreError(`${kind} ${name} was deleted`);
        }
        const spec = edit(obj);
        if (spec.name !== obj.spec.name && !taken.includes(spec.name)) {
          await claims.take(kind, spec.name, owner);
          taken.push(spec.name);
        }
        try {
          const updated = await kube.replace<T>(
            ref,
            namespace,
            name,
            { ...obj, spec },
            { fieldManager: FIELD_MANAGERS.api },
          );
          const keep = taken.filter((n) => n !== updated.spec.name);
          taken.length = 0;
          taken.push(...keep); // claims taken in earlier attempts that the final name no longer needs
          return { updated, previousName: obj.spec.name };
        } catch (e) {
          if (isNotFound(e)) throw new NotFoundInStoreError(`${kind} ${name} was deleted`);
          if (!isConflict(e)) throw e;
        }
        obj = await this.deps.lifecycle.fresh<T>(ref, name);
      }
      throw new Error(`${kind} ${name}: ${MAX_UPDATE_ATTEMPTS} conflicting updates`);
    } finally {
      for (const extra of taken) {
        await claims.release(kind, extra, name).catch((err: unknown) => {
          this.deps.log.warn({ err, claim: extra }, 'could not release an unused name claim; the sweeper will');
        });
      }
    }
  }
}
