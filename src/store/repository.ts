// The Repository contract (src/domain/repository.ts) over FailoverSegment,
// HaHost and Notification custom resources. Reads come from informer caches
// (repository-reads.ts); every write goes to the API server and its result is
// put back into the cache at once (upsertLocal/deleteLocal), so a read right
// after a write on this replica reflects it. Segment and host writes are in
// spec-writes.ts; the notification intake is here: the duplicate check
// (intake.ts claims), the create, and the admission (admission.ts), whose
// status write completes in the background. How each SQL guarantee is
// rebuilt is explained in docs/design/store.md.
import { randomUUID } from 'node:crypto';
import { isAlreadyExists } from '../k8s/client.ts';
import { STORE_RETRY_AFTER_SECONDS, storeUnavailable } from './repository-reads.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { ANNOTATIONS, API_VERSION, FIELD_MANAGERS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { HaHost, Notification } from '../model/types.ts';
import type { NotificationRecord } from '../domain/records.ts';
import type { NewNotification, Repository } from '../domain/repository.ts';
import { DuplicateNotificationError, NotFoundInStoreError, StoreUnavailableError } from '../domain/repository.ts';
import { duplicateNotification } from '../domain/messages.ts';
import type { StoreDeps } from './admission.ts';
import { admitCreated } from './admission.ts';
import { payloadHash } from './fingerprints.ts';
import { claimNotification, findCachedDuplicate, IntakeContendedError } from './intake.ts';
import { deleteYieldedNotification } from './sealed-intake.ts';
import { toNotificationRecord } from './mapping.ts';
import { notificationObjectName } from './names.ts';
import { SpecWrites } from './spec-writes.ts';
import { systemClock } from '../time/clock.ts';

/**
 * How long an accepted duplicate claim whose Notification does not exist
 * counts as "a create still to finish" (the creator crashed, or is in flight)
 * rather than "a notification someone deleted". masakari-monitors retries a
 * failed POST for about two minutes (api_retry_max x api_retry_interval).
 */
export const DEFAULT_PENDING_CLAIM_MS = 300_000;
/**
 * An API server failure during intake (storeUnavailable) or a claim that kept
 * contending: retryable, so 503 with Retry-After rather than 500;
 * masakari-monitors retries it.
 */
function intakeError(e: unknown): unknown {
  if (e instanceof IntakeContendedError) {
    return new StoreUnavailableError(`notification intake: ${e.message}`, STORE_RETRY_AFTER_SECONDS);
  }
  return storeUnavailable(e, 'notification intake');
}

export interface CrRepositoryDeps extends StoreDeps {
  pendingClaimMs?: number;
  now?: () => Date;
}

export class CrRepository extends SpecWrites implements Repository {
  private readonly pendingClaimMs: number;
  private readonly pendingAdmissions = new Set<Promise<unknown>>();

  constructor(deps: CrRepositoryDeps) {
    super({ ...deps, fieldManager: FIELD_MANAGERS.api, now: deps.now ?? (() => systemClock.now()) });
    this.pendingClaimMs = deps.pendingClaimMs ?? DEFAULT_PENDING_CLAIM_MS;
  }

  async createNotification(n: NewNotification, windowSeconds: number): Promise<NotificationRecord> {
    const host = this.hostObject(n.source_host_uuid);
    if (!host) throw new NotFoundInStoreError(`host ${n.source_host_uuid} not found`);
    const candidate = { type: n.type, payloadHash: payloadHash(n.payload), generatedTime: n.generated_time };
    const duplicate = () => new DuplicateNotificationError(duplicateNotification(host.spec.name, n.type));

    // Notifications older than the claims' lifetime are long in every replica's cache. One still being
    // decided by its claim is not stored yet: the claim decides between it and this one.
    const visibility = this.deps.sealedVisibility;
    const { notifications } = this.deps.caches;
    if (findCachedDuplicate(notifications, n.source_host_uuid, candidate, windowSeconds, undefined, this.decided)) {
      throw duplicate();
    }

    const uuid = randomUUID();
    const name = notificationObjectName(host.spec.name, n.type, uuid);
    // Our Notification is created alongside our claim (one API round trip
    // per intake, not two), and deleted again when the claim makes it a
    // duplicate. Until the claim decides, nobody shows it: unsealed, it is not
    // admitted before its status write; sealed, every replica holds it back
    // until it knows the claim stands behind it (sealed-visibility.ts). If the
    // intake fails half way, it is left to the kubectl-path reconciler
    // (unsealed), or the engine (sealed), which ask the claim after a grace.
    let early: Promise<Notification> | undefined;
    const createEarly = () => {
      if (early) return;
      early = this.createObject({ name, uuid, generatedTime: n.generated_time }, host, n);
      early.catch(() => {});
    };
    visibility?.intakeStarted(name);
    let ours = false;
    try {
      const outcome = await claimNotification({
        kube: this.deps.kube,
        namespace: this.deps.namespace,
        host,
        hostUuid: n.source_host_uuid,
        candidate,
        windowSeconds,
        name,
        uuid,
        exists: (other) => this.notificationExists(other),
        pendingMs: this.pendingClaimMs,
        now: this.deps.now,
        onClaimed: createEarly,
      });
      if (outcome.kind === 'accepted' && outcome.name === name && early) {
        const created = await this.createdOrDuplicate(early, duplicate);
        ours = true;
        return this.admitInBackground(created, outcome, n);
      }
      await this.discardEarly(early);
      if (outcome.kind === 'duplicate') throw duplicate();
      // A claim accepted by a request that has not created its Notification (yet): create it, exactly once.
      const created = await this.createdOrDuplicate(this.createObject(outcome, host, n), duplicate);
      visibility?.intakeEnded(outcome.name, true);
      return this.admitInBackground(created, outcome, n);
    } catch (e) {
      throw intakeError(e);
    } finally {
      visibility?.intakeEnded(name, ours);
    }
  }

  /** A create that lost to a racer finishing the same claim (AlreadyExists) makes ours the duplicate. */
  private async createdOrDuplicate(create: Promise<Notification>, duplicate: () => Error): Promise<Notification> {
    try {
      return await create;
    } catch (e) {
      if (isAlreadyExists(e)) throw duplicate();
      throw e;
    }
  }

  /** Deletes the Notification created alongside a claim that yielded (never shown: see createNotification). */
  private async discardEarly(early: Promise<Notification> | undefined): Promise<void> {
    const created = await early?.catch(() => undefined);
    if (!created) return;
    try {
      await deleteYieldedNotification(this.deps.kube, this.deps.namespace, created);
    } catch (err) {
      // Never shown; the reconciler (unsealed) or the engine (sealed) finds it a duplicate after its grace.
      this.deps.log.warn(
        { err, notification: created.metadata.name },
        'could not delete the Notification of a yielded claim',
      );
    }
  }

  /** A cached notification counts as stored unless its claim is still deciding it (sealed-visibility.ts). */
  private readonly decided = (o: Notification): boolean => !this.deps.sealedVisibility?.hides(o);

  private async notificationExists(name: string): Promise<boolean> {
    if (this.deps.caches.notifications.get(name)) return true;
    return (await this.deps.lifecycle.fresh<Notification>(RESOURCES.notifications, name)) !== undefined;
  }

  /**
   * Creates the Notification a claim stands for: create-if-absent by name,
   * so when racers finish the same claim exactly one create succeeds (and
   * answers 202); the others get AlreadyExists (409 duplicate).
   */
  private async createObject(
    fp: { name: string; uuid: string; generatedTime: string },
    host: HaHost,
    n: NewNotification,
  ): Promise<Notification> {
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
    const seal = this.deps.seal;
    if (seal)
      body.metadata.annotations = {
        ...body.metadata.annotations,
        [ANNOTATIONS.admissionSeal]: seal.seal(body, this.deps.now()),
      };
    return this.deps.kube.create<Notification>(RESOURCES.notifications, this.deps.namespace, body, {
      fieldManager: FIELD_MANAGERS.api,
    });
  }

  /** Admits a created Notification: shown at once on this replica, its status write completes in the background. */
  private admitInBackground(created: Notification, fp: { uuid: string }, n: NewNotification): NotificationRecord {
    const id = Number(created.metadata.labels?.[LABELS.id]);
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
    // Sealed: the answer of the create is admitted already (the client shows it through the seal).
    if (created.status?.admittedBySeal) {
      this.deps.caches.notifications.upsertLocal(created);
      return toNotificationRecord(created);
    }
    const local: Notification = { ...created, status: { ...created.status, ...fields } };
    this.deps.caches.notifications.upsertLocal(local);
    const admitting = admitCreated(this.deps, RESOURCES.notifications, created, fields).then(
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
}
