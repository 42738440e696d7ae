// The owner of a notification's intake: the one module that turns a
// POST /v1/notifications into a visible Notification (accept), and the one
// the engine and the kubectl/GitOps path reach for the protocol's other ends
// through the store's door (src/store/index.ts, "Admission"). The protocol,
// in the order a REST intake walks it (docs/design/store.md, "The walk of one
// notification"):
//
//   1. claim: the cached duplicates (duplicate-claim.ts findCachedDuplicate),
//      then the duplicate claim (claimNotification), while the Notification is
//      created alongside it, one API round trip per intake, not two;
//   2. seal: the Notification carries its admission seal (seal.ts), so it is
//      admitted from its create on, without a status write; without a key,
//      its admission status is written in the background (status.ts);
//   3. visibility: until the claim stands behind it, no replica shows it
//      (visibility.ts): this replica's own intake says so at its end;
//   4. yield: a Notification whose claim went to another is deleted again
//      (standing.ts deleteYieldedNotification), as the engine does with one
//      whose creator did not (standing.ts sealedIntakeStanding).
//
// The kubectl/GitOps path admits a Notification someone else created through
// the same claim (claimFoundNotification).
//
// Every call goes down, to the files named above and the store's leaves
// (ids, caches): nothing here is handed to a lower file to be called back.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { isAlreadyExists } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { ANNOTATIONS, API_VERSION, FIELD_MANAGERS, LABELS, MANAGED_BY } from '../../model/constants.ts';
import type { HaHost, Notification } from '../../model/types.ts';
import type { NewNotification } from '../../domain/repository.ts';
import { DuplicateNotificationError } from '../../domain/repository.ts';
import { duplicateNotification } from '../../domain/messages.ts';
import type { StoreCaches } from '../caches.ts';
import type { IdAllocator } from '../ids.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { notificationObjectName } from '../names.ts';
import { payloadHash } from './fingerprints.ts';
import { claimNotification, findCachedDuplicate } from './duplicate-claim.ts';
import type { SealedVisibility } from './visibility.ts';
import { deleteYieldedNotification } from './standing.ts';
import type { AdmissionSeal } from './seal.ts';
import { admitCreated } from './status.ts';

/**
 * How long an accepted duplicate claim whose Notification does not exist
 * counts as "a create still to finish" (the creator crashed, or is in flight)
 * rather than "a notification someone deleted". masakari-monitors retries a
 * failed POST for about two minutes (api_retry_max x api_retry_interval).
 */
export const DEFAULT_PENDING_CLAIM_MS = 300_000;

export interface NotificationIntakeDeps {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  caches: Pick<StoreCaches, 'notifications'>;
  lifecycle: Pick<Lifecycle, 'fresh'>;
  ids: { notifications: IdAllocator };
  /** Seals the Notification so it needs no admission write (seal.ts); none: the status write. */
  seal?: AdmissionSeal;
  /** Hides sealed notifications their claim is still deciding (visibility.ts); none: nothing is. */
  sealedVisibility?: SealedVisibility;
  pendingClaimMs: number;
  now: () => Date;
}

/** The REST path's intake of notifications, over one store's caches, ids, seal and visibility. */
export class NotificationIntake {
  private readonly pendingAdmissions = new Set<Promise<unknown>>();

  constructor(private readonly deps: NotificationIntakeDeps) {}

  /**
   * Accepts `n` from `host` (a visible host) or throws DuplicateNotificationError;
   * returns the Notification as this replica shows it from now on. API server
   * failures pass through (the repository answers them with 503).
   */
  async accept(n: NewNotification, host: HaHost, windowSeconds: number): Promise<Notification> {
    const candidate = { type: n.type, payloadHash: payloadHash(n.payload), generatedTime: n.generated_time };
    const duplicate = () => new DuplicateNotificationError(duplicateNotification(host.spec.name, n.type));

    // Notifications older than the claims' lifetime are long in every replica's cache. One still being
    // decided by its claim is not stored yet: the claim decides between it and this one.
    const visibility = this.deps.sealedVisibility;
    const { notifications } = this.deps.caches;
    if (findCachedDuplicate(notifications, n.source_host_uuid, candidate, windowSeconds, undefined, visibility)) {
      throw duplicate();
    }

    const uuid = randomUUID();
    const name = notificationObjectName(host.spec.name, n.type, uuid);
    // Our Notification is created alongside our claim (one API round trip
    // per intake, not two), and deleted again when the claim makes it a
    // duplicate. Until the claim decides, nobody shows it: unsealed, it is not
    // admitted before its status write; sealed, every replica holds it back
    // until it knows the claim stands behind it (visibility.ts). If the
    // intake fails half way, it is left to the kubectl-path reconciler
    // (unsealed), or the engine (sealed), which ask the claim after a grace.
    // A duplicate among concurrent creates is rare (the cache caught the others above).
    visibility?.intakeStarted(name);
    let ours = false;
    try {
      const alongside = this.createObject({ name, uuid, generatedTime: n.generated_time }, host, n);
      alongside.catch(() => {});
      const outcome = await claimNotification({
        kube: this.deps.kube,
        namespace: this.deps.namespace,
        host,
        hostUuid: n.source_host_uuid,
        candidate,
        windowSeconds,
        name,
        uuid,
        notifications: { cached: notifications, lifecycle: this.deps.lifecycle },
        pendingMs: this.deps.pendingClaimMs,
        now: this.deps.now,
      });
      if (outcome.kind === 'accepted' && outcome.name === name) {
        const created = await this.createdOrDuplicate(alongside, duplicate);
        ours = true;
        return this.admitInBackground(created, outcome, n);
      }
      await this.deleteYielded(alongside);
      if (outcome.kind === 'duplicate') throw duplicate();
      // A claim accepted by a request that has not created its Notification (yet): create it, exactly once.
      const created = await this.createdOrDuplicate(this.createObject(outcome, host, n), duplicate);
      visibility?.intakeEnded(outcome.name, true);
      return this.admitInBackground(created, outcome, n);
    } finally {
      visibility?.intakeEnded(name, ours);
    }
  }

  /** Resolves once every background status write of a create has settled (graceful stop, tests). */
  async settle(): Promise<void> {
    while (this.pendingAdmissions.size) await Promise.allSettled([...this.pendingAdmissions]);
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

  /** Deletes the Notification created alongside a claim that yielded (never shown: see accept). */
  private async deleteYielded(alongside: Promise<Notification>): Promise<void> {
    const created = await alongside.catch(() => undefined);
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
  private admitInBackground(created: Notification, fp: { uuid: string }, n: NewNotification): Notification {
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
    const { notifications } = this.deps.caches;
    if (created.status?.admittedBySeal) {
      notifications.upsertLocal(created);
      return created;
    }
    const local: Notification = { ...created, status: { ...created.status, ...fields } };
    notifications.upsertLocal(local);
    const writer = { ...this.deps, fieldManager: FIELD_MANAGERS.api };
    const admitting = admitCreated(writer, RESOURCES.notifications, created, fields).then(
      (admitted) => notifications.upsertLocal(admitted),
      (err: unknown) =>
        this.deps.log.warn(
          { err, notification: fp.uuid },
          'status write after notification create failed; the reconciler will admit it',
        ),
    );
    this.pendingAdmissions.add(admitting);
    void admitting.finally(() => this.pendingAdmissions.delete(admitting));
    return local;
  }
}

/** What the kubectl/GitOps path knows of a Notification it found (src/reconcilers/notification-reconciler.ts). */
export interface FoundNotification {
  kube: KubeClient;
  namespace: string;
  cache: Pick<StoreCaches['notifications'], 'byIndex'>;
  lifecycle: Pick<Lifecycle, 'fresh'>;
  notification: Notification;
  /** Its source host (admitted) and that host's Masakari uuid. */
  host: HaHost;
  hostUuid: string;
  /** The Masakari uuid it is admitted with. */
  uuid: string;
  windowSeconds: number;
  pendingMs: number;
  now: () => Date;
}

/**
 * The kubectl/GitOps path's intake of a Notification someone else created:
 * the same cached duplicates and the same duplicate claim as accept.
 * 'duplicate' also when the claim was accepted for another name: an API
 * request is creating the same notification right now, and that one wins.
 */
export async function claimFoundNotification(f: FoundNotification): Promise<'accepted' | 'duplicate'> {
  const n = f.notification;
  const name = n.metadata.name ?? '';
  const candidate = {
    type: n.spec.type,
    payloadHash: payloadHash(n.spec.payload),
    generatedTime: n.spec.generatedTime,
  };
  if (findCachedDuplicate(f.cache, f.hostUuid, candidate, f.windowSeconds, name)) return 'duplicate';
  const outcome = await claimNotification({
    kube: f.kube,
    namespace: f.namespace,
    host: f.host,
    hostUuid: f.hostUuid,
    candidate,
    windowSeconds: f.windowSeconds,
    name,
    uuid: f.uuid,
    notifications: { lifecycle: f.lifecycle },
    pendingMs: f.pendingMs,
    now: f.now,
  });
  return outcome.kind === 'accepted' && outcome.name === name ? 'accepted' : 'duplicate';
}
