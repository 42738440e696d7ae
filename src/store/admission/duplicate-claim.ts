// Atomic duplicate detection for one notification, in a constant number of
// small writes. The one protocol behind POST /v1/notifications
// (repository.ts) and kubectl/GitOps-created Notifications
// (src/reconcilers/notification-reconciler.ts); `masakari-operator import`
// copies no notifications, so it has none.
//
// The rule (masakari/ha/api.py _is_duplicate_notification): a notification
// is a duplicate when a stored one has the same type, source host and
// payload, and generated_time >= new.generated_time - window, whatever its
// status. See fingerprints.ts.
//
// One claim per fingerprint. "Some stored notification s has s >= t - window"
// is the same as "the latest stored generated_time of the fingerprint is
// >= t - window", so one register per (type, host, payload) decides it: a
// small ConfigMap (notificationClaimName) holding the latest accepted
// generated_time of that fingerprint and the metadata.name and uuid of the
// Notification it belongs to (the holder). A new notification at t:
//   - creates the claim if absent (create-if-absent: of N racers exactly one
//     succeeds) and is accepted;
//   - else reads it. When the holder's time is inside t's window the new one
//     is a duplicate (or, while the holder's Notification is not created yet,
//     it creates that one, see "Accepted" below). Otherwise t is later than
//     the holder's time by more than the window (or the holder was deleted,
//     see below): it replaces the claim by a compare-and-swap on the
//     resourceVersion it read, and is accepted.
// Every accept is one linearizable write to the one register, and each reads
// the register state its write replaces, so the accepted notifications are
// exactly those a one-at-a-time Masakari would accept in the order of those
// writes (src/store/admission/duplicate-claim.test.ts races them against every order). While
// its holder stands, the register's time only grows: a replace needs a t past
// the holder's time plus the window.
//
// This replaced (2026-12) a protocol of one claim per fingerprint and time
// bucket, which had to read both neighbouring buckets and write a `deciding`
// then an `accepted` state: six API requests per intake instead of three.
// Its claims are named differently and are only swept (sweepNotificationClaims).
//
// Not covered by the claim, covered by the informer cache instead: anything
// older than the claim's lifetime (swept 10 to 15 min after its last accept), and a
// holder deleted since (retention, purge, kubectl delete). The cache holds
// every notification within milliseconds of its creation; the claim only has
// to cover that gap and concurrent creates.
//
// Accepted means "the Notification with the recorded name must exist": the
// REST path creates it (create-if-absent by name, so if a racer finishes the
// same claim only one create succeeds and answers 202), the reconciler
// admits the kubectl-created object. The REST path creates its Notification
// alongside its claim (notification-intake.ts), and deletes it again if the claim makes it
// a duplicate. Nobody sees it before the claim decided: unsealed, it is not
// admitted until its status write; sealed, every replica holds it back until
// its own intake or the claim confirms it (visibility.ts). A claim whose holder has no Notification yet counts as a
// create in flight for pendingMs after its accept (whoever finds it so and is
// its duplicate creates it under the recorded name and uuid: the creator may
// have crashed), then as a deleted notification (it no longer counts).
//
// Lifetime (claim-lifetime.ts): the sweeper (sweepNotificationClaims) removes claims not accepted
// into for max(window, CLAIM_MIN_AGE_MS); retention and purge remove a
// notification's claim with it (deleteClaimOf). A claim never grows: one
// small object per fingerprint, written once per accepted notification.
import type { KubeClient } from '../../k8s/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../../k8s/client.ts';
import { getIfExists } from '../../k8s/get-if-exists.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { CONFLICT_BACKOFF, lostRace, retryOnConflictOr } from '../../k8s/retry-on-conflict.ts';
import { API_VERSION, FIELD_MANAGERS, KINDS, LABELS, MANAGED_BY } from '../../model/constants.ts';
import type { HaHost, Notification } from '../../model/types.ts';
import type { ConfigMap } from '../configmap.ts';
import { ROLES } from '../configmap.ts';
import type { Candidate } from './fingerprints.ts';
import { cachedPayloadHash, fingerprintKey, isDuplicateOf } from './fingerprints.ts';
import { INDEX } from '../../model/indexes.ts';
import { notificationHostUuids } from '../caches.ts';
import type { Informer } from '../../runtime/types.ts';
import type { ClaimData } from './claim-record.ts';
import type { SealedVisibility } from './visibility.ts';
import type { Lifecycle } from '../lifecycle.ts';
import { claimNameFor, dataOf } from './claim-record.ts';
import { isRefused } from '../../domain/admitted.ts';

export type ClaimOutcome =
  /** Create (REST) or admit (kubectl) the Notification `name`; `generatedTime` is the recorded one. */
  | { kind: 'accepted'; name: string; uuid: string; generatedTime: string }
  /** A stored or concurrently accepted notification makes this one a duplicate. */
  | { kind: 'duplicate' };

/** Too many competing writes: the caller answers 503 (retry). */
export class IntakeContendedError extends Error {}

export interface ClaimRequest {
  kube: KubeClient;
  namespace: string;
  host: HaHost;
  hostUuid: string;
  candidate: Candidate;
  windowSeconds: number;
  /** metadata.name and uuid our Notification has (kubectl) or will have (REST). */
  name: string;
  uuid: string;
  /**
   * Where a holder's Notification is looked up: the cache when given (the
   * REST path's), then the API server (a fresh read).
   */
  notifications: { cached?: Pick<Informer<Notification>, 'get'>; lifecycle: Pick<Lifecycle, 'fresh'> };
  /** A claim whose holder has no Notification counts as in flight for this long after its accept, then as deleted. */
  pendingMs: number;
  now: () => Date;
}

/** What the holder of a claim means right now. */
type HolderState =
  /** Its Notification exists. */
  | 'present'
  /** Its Notification is not created yet (in flight, or its creator died after the accept). */
  | 'pending'
  /** Its Notification was deleted (or never created, long ago): it no longer counts. */
  | 'absent';

const accepted = (d: { notification: string; uuid: string; generatedTime: string }): ClaimOutcome => ({
  kind: 'accepted',
  name: d.notification,
  uuid: d.uuid,
  generatedTime: d.generatedTime,
});

class ClaimSession {
  readonly claimName: string;

  constructor(private readonly req: ClaimRequest) {
    const { candidate, hostUuid } = req;
    this.claimName = claimNameFor(candidate.type, hostUuid, candidate.payloadHash, candidate.generatedTime);
  }

  private body(existing?: ConfigMap): ConfigMap {
    const { host, hostUuid, candidate, windowSeconds } = this.req;
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: this.claimName,
        ...(existing ? { resourceVersion: existing.metadata.resourceVersion } : {}),
        labels: {
          [LABELS.role]: ROLES.notificationClaim,
          [LABELS.hostUuid]: hostUuid,
          [LABELS.managedBy]: MANAGED_BY,
        },
        // A real cluster's garbage collector removes the claims of a deleted host.
        ...(host.metadata.uid
          ? {
              ownerReferences: [
                {
                  apiVersion: API_VERSION,
                  kind: KINDS.host.kind,
                  name: host.metadata.name ?? '',
                  uid: host.metadata.uid,
                },
              ],
            }
          : {}),
      },
      data: {
        type: candidate.type,
        generatedTime: candidate.generatedTime,
        notification: this.req.name,
        uuid: this.req.uuid,
        acceptedAt: String(this.req.now().getTime()),
        window: String(windowSeconds),
      },
    };
  }

  /** Create-if-absent; undefined when a claim exists already. */
  async create(): Promise<ConfigMap | undefined> {
    try {
      return await this.req.kube.create<ConfigMap>(RESOURCES.configMaps, this.req.namespace, this.body(), {
        fieldManager: FIELD_MANAGERS.api,
      });
    } catch (e) {
      if (isAlreadyExists(e)) return undefined;
      throw e;
    }
  }

  /** Compare-and-swap: ours becomes the holder; undefined when the claim changed or vanished since it was read. */
  async replace(existing: ConfigMap): Promise<ConfigMap | undefined> {
    try {
      return await this.req.kube.replace<ConfigMap>(
        RESOURCES.configMaps,
        this.req.namespace,
        this.claimName,
        this.body(existing),
        { fieldManager: FIELD_MANAGERS.api },
      );
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return undefined;
      throw e;
    }
  }

  get(): Promise<ConfigMap | undefined> {
    return getIfExists<ConfigMap>(this.req.kube, RESOURCES.configMaps, this.req.namespace, this.claimName);
  }

  private async exists(name: string): Promise<boolean> {
    const { cached, lifecycle } = this.req.notifications;
    if (cached?.get(name)) return true;
    return (await lifecycle.fresh<Notification>(RESOURCES.notifications, name)) !== undefined;
  }

  async holderState(d: ClaimData): Promise<HolderState> {
    if (await this.exists(d.notification)) return 'present';
    if (Number.isNaN(d.acceptedAt) || this.req.now().getTime() - d.acceptedAt <= this.req.pendingMs) return 'pending';
    return 'absent';
  }
}

/**
 * Claims the notification's (type, host, payload), or finds what makes it a
 * duplicate. See the header for the protocol.
 */
export async function claimNotification(req: ClaimRequest): Promise<ClaimOutcome> {
  const session = new ClaimSession(req);
  const me = req.candidate;
  const ours = accepted({ notification: req.name, uuid: req.uuid, generatedTime: me.generatedTime });

  return retryOnConflictOr(
    CONFLICT_BACKOFF,
    async (): Promise<ClaimOutcome> => {
      if (await session.create()) return ours;
      const existing = await session.get();
      if (!existing) throw lostRace(`claim ${session.claimName} was swept between our create and our read`);
      const holder = dataOf(existing);
      // Our own earlier attempt (a reconciler retry after a crash): the claim is ours.
      if (holder.notification === req.name) return accepted(holder);
      if (isDuplicateOf(me, { ...me, generatedTime: holder.generatedTime }, req.windowSeconds)) {
        const state = await session.holderState(holder);
        if (state === 'present') return { kind: 'duplicate' };
        // Its Notification is not there yet: create it (by its recorded name, so exactly once), not a second one.
        if (state === 'pending') return accepted(holder);
        // Its holder was deleted: the cache covers anything older, so the claim is ours to take.
      }
      if (await session.replace(existing)) return ours;
      throw lostRace(`claim ${session.claimName} changed since we read it`);
    },
    () =>
      new IntakeContendedError(`notification claim ${session.claimName}: ${CONFLICT_BACKOFF.steps} competing writes`),
  );
}

/**
 * The same rule against stored Notifications of the host (the informer
 * cache): covers history older than the claims' lifetime and notifications
 * whose claim's holder was deleted since. Notifications being deleted or
 * flagged Ready=False do not count; neither does `self`, nor one the
 * sealed visibility hides (a sealed notification its claim is still
 * deciding: the claim decides against it). Reads only the notifications filed under the
 * candidate's fingerprint (INDEX.fingerprint), so its cost does not grow with
 * the host's notifications.
 */
export function findCachedDuplicate(
  cache: Pick<Informer<Notification>, 'byIndex'>,
  hostUuid: string,
  candidate: Candidate,
  windowSeconds: number,
  self?: string,
  visibility?: Pick<SealedVisibility, 'hides'>,
): Notification | undefined {
  const sameFingerprint = cache.byIndex(
    INDEX.fingerprint,
    fingerprintKey(hostUuid, candidate.type, candidate.payloadHash),
  );
  return sameFingerprint.find(
    (o) =>
      o.metadata.name !== self &&
      // A fingerprint key is a digest, shared by chance: the host must be the candidate's.
      notificationHostUuids(o).includes(hostUuid) &&
      !o.metadata.deletionTimestamp &&
      !isRefused(o) &&
      !visibility?.hides(o) &&
      isDuplicateOf(
        candidate,
        { type: o.spec.type, payloadHash: cachedPayloadHash(o.spec.payload), generatedTime: o.spec.generatedTime },
        windowSeconds,
      ),
  );
}
