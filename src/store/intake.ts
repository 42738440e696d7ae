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
// Claims. Time is cut into buckets of one window (fingerprints.ts bucketOf).
// Each (type, host, payload) and bucket has at most one claim: a small
// ConfigMap (notificationClaimName) created if absent, holding the
// generated_time, the metadata.name and uuid of the Notification it stands
// for, and a state: `deciding`, then `accepted`. A claim that yields is
// deleted. Every state change is a compare-and-swap on the claim's
// resourceVersion (update to accepted, or delete), so each claim is decided
// exactly once, by whoever's swap lands first.
//
// Which claims can conflict. For a notification at t in bucket b:
//   - another in bucket b is always a duplicate of it, either way round;
//   - one in b-1 at l is a duplicate of it when l >= t - window ("in window");
//     it is then also one of the b-1 one, the condition is symmetric;
//   - one in b+1 or later makes it a duplicate (later times always count);
//   - one in b-2 or earlier never does.
// So a claim's decision reads its two neighbours, b-1 and b+1, AFTER its own
// claim exists (b+2 and beyond: see "not covered" below).
//
// Deciding claim C (bucket b), lower neighbour first in priority:
//   - a lower claim L (b-1) in window: accepted -> C yields; deciding -> C
//     waits until L is decided (L's decider yields C itself, by the next rule)
//     or, if L stays deciding for DECISION_GRACE_MS (its creator crashed), C
//     deletes L (L is a duplicate of C, so refusing it is a valid decision);
//   - an upper claim U (b+1): accepted -> C yields; deciding and C in U's
//     window -> C deletes U (U yields to the lower claim); deciding and out of
//     window -> ignored (U does not depend on C: order C first);
//   - otherwise C is accepted.
//
// Why two racing neighbours never both get in. Say C in b and U in b+1 are in
// each other's window. Each creates its claim before it reads the other's
// bucket; etcd is linearizable, so at least one of the two reads sees the
// other claim. If C's reader sees U deciding, it deletes U (compare-and-swap):
// either that lands and U can no longer be accepted, or U was accepted first
// and C re-reads and yields. If U's reader sees C deciding, it waits for C's
// decision instead of accepting. If only U's reader sees C and C is accepted,
// U yields. If only C's reader sees U and U is accepted, C yields. A decision
// never rests on a read older than the claim's own creation, so whoever
// decides (the creator, or a racer finishing a crashed creator's claim) decides
// validly. Same bucket: create-if-absent admits one claim; the others wait for
// its decision and then count as its duplicates (accepted) or try again (it
// yielded). The only waits are higher-on-lower, so there is no wait cycle.
//
// Not covered by claims, covered by the informer cache instead: a stored
// notification two or more buckets LATER than the new one (a sender replaying
// an old event), and anything older than the claims' lifetime. The cache holds
// every notification within milliseconds of its creation; the claims only have
// to cover that gap and concurrent creates.
//
// Accepted means "the Notification with the recorded name must exist": the
// REST path creates it (its create is create-if-absent by name, so if a
// racer finishes the same claim only one create succeeds and answers 202),
// the reconciler admits the kubectl-created object. The REST path may start
// that create as soon as its own claim exists (onClaimed): until its status
// write the Notification is not admitted, so nobody sees it, and it is
// deleted again if the claim yields. So a claim left deciding by a crashed
// creator may already have its Notification: whoever finds it past the
// grace then decides the claim for that Notification (as the reconciler
// does, which admits it) rather than taking the bucket for itself. An
// accepted claim whose Notification is missing counts as a create in flight
// for pendingMs, then as a deleted notification (the claim is removed).
//
// Lifetime: the sweeper (sweepNotificationClaims) removes claims older than
// max(window, CLAIM_MIN_AGE_MS); retention and purge remove a notification's
// claim with it (deleteClaimOf). A claim never grows: one small object per
// accepted notification, written twice.
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { CONFLICT_BACKOFF, lostRace, retryOnConflictOr } from '../k8s/retry-on-conflict.ts';
import { API_VERSION, FIELD_MANAGERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { HaHost, Notification } from '../model/types.ts';
import type { ConfigMap } from './configmap.ts';
import { deleteExactly, ROLES } from './configmap.ts';
import type { Candidate } from './fingerprints.ts';
import { bucketOf, fingerprintKey, isDuplicateOf, payloadHash } from './fingerprints.ts';
import { INDEX } from '../model/indexes.ts';
import type { Informer } from '../runtime/types.ts';
import { notificationClaimName, shortHash } from './names.ts';
import { isRefused } from '../domain/admitted.ts';

/** How long a claim may stay `deciding` before others treat its creator as crashed. */
export const DECISION_GRACE_MS = 10_000;
/** Claims are kept at least this long after their creation, whatever the window (the cache covers older ones). */
export const CLAIM_MIN_AGE_MS = 600_000;

const STATE = { deciding: 'deciding', accepted: 'accepted' } as const;

export type ClaimOutcome =
  /** Create (REST) or admit (kubectl) the Notification `name`; `generatedTime` is the recorded one. */
  | { kind: 'accepted'; name: string; uuid: string; generatedTime: string }
  /** A stored or concurrently accepted notification makes this one a duplicate. */
  | { kind: 'duplicate' };

/** Too many competing writes, or a claim that could not be resolved: the caller answers 503 (retry). */
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
  /** Does a Notification with this metadata.name exist? (cache first, then the API server) */
  exists: (name: string) => Promise<boolean>;
  /** An accepted claim without its Notification counts as in flight for this long, then as deleted. */
  pendingMs: number;
  now: () => Date;
  decisionGraceMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Called (possibly more than once) when a claim of ours for `name` exists
   * and is about to be decided. The REST path starts creating its
   * Notification here, alongside the decision, since every create in the
   * same bucket already lost at the claim and a neighbour rarely makes ours
   * yield (repository.ts createNotification).
   */
  onClaimed?: () => void;
}

interface ClaimData {
  state: string;
  generatedTime: string;
  notification: string;
  uuid: string;
}

const dataOf = (c: ConfigMap): ClaimData => ({
  state: c.data?.state ?? STATE.deciding,
  generatedTime: c.data?.generatedTime ?? '',
  notification: c.data?.notification ?? '',
  uuid: c.data?.uuid ?? '',
});

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What a neighbour or same-bucket claim means right now. */
type Standing =
  /** Decided in: its Notification exists. */
  | 'present'
  /** Decided in, its Notification not created yet (in flight, or its creator died after deciding). */
  | 'pending'
  | 'deciding'
  /** Gone, or stood for a Notification deleted since: counts as absent. */
  | 'absent';

class ClaimSession {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly graceMs: number;
  private readonly type: string;

  constructor(private readonly req: ClaimRequest) {
    this.sleep = req.sleep ?? defaultSleep;
    this.graceMs = req.decisionGraceMs ?? DECISION_GRACE_MS;
    this.type = req.candidate.type;
  }

  claimName(bucket: bigint | string): string {
    const { candidate, hostUuid, windowSeconds } = this.req;
    return notificationClaimName(candidate.type, hostUuid, candidate.payloadHash, windowSeconds, bucket);
  }

  get(name: string): Promise<ConfigMap | undefined> {
    return getIfExists<ConfigMap>(this.req.kube, RESOURCES.configMaps, this.req.namespace, name);
  }

  async create(name: string, bucket: string): Promise<ConfigMap | undefined> {
    const { kube, namespace, host, hostUuid, candidate, windowSeconds } = this.req;
    const body: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        labels: {
          [LABELS.role]: ROLES.notificationClaim,
          [LABELS.hostUuid]: hostUuid,
          [LABELS.notificationUuid]: this.req.uuid,
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
        state: STATE.deciding,
        type: candidate.type,
        generatedTime: candidate.generatedTime,
        notification: this.req.name,
        uuid: this.req.uuid,
        bucket,
        window: String(windowSeconds),
      },
    };
    try {
      return await kube.create<ConfigMap>(RESOURCES.configMaps, namespace, body, { fieldManager: FIELD_MANAGERS.api });
    } catch (e) {
      if (isAlreadyExists(e)) return undefined;
      throw e;
    }
  }

  /** Compare-and-swap to accepted; undefined when the claim changed or vanished meanwhile. */
  async accept(claim: ConfigMap): Promise<ConfigMap | undefined> {
    try {
      return await this.req.kube.replace<ConfigMap>(
        RESOURCES.configMaps,
        this.req.namespace,
        claim.metadata.name ?? '',
        { ...claim, data: { ...claim.data, state: STATE.accepted } },
        { fieldManager: FIELD_MANAGERS.api },
      );
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Compare-and-swap delete (the claim yields); false when it changed meanwhile. */
  async remove(claim: ConfigMap): Promise<boolean> {
    return deleteExactly(this.req.kube, this.req.namespace, claim);
  }

  async standing(claim: ConfigMap): Promise<Standing> {
    const d = dataOf(claim);
    if (d.state !== STATE.accepted) return 'deciding';
    if (await this.req.exists(d.notification)) return 'present';
    const created = Date.parse(claim.metadata.creationTimestamp ?? '');
    if (Number.isNaN(created) || this.req.now().getTime() - created <= this.req.pendingMs) return 'pending';
    // Accepted long ago, Notification gone: it was deleted, and deleted notifications do not count.
    await this.remove(claim);
    return 'absent';
  }

  private candidateOf(claim: ConfigMap): Candidate {
    return { type: this.type, payloadHash: this.req.candidate.payloadHash, generatedTime: dataOf(claim).generatedTime };
  }

  /**
   * Decides a deciding claim and writes the decision: accepted (the claim as
   * written), 'yielded' (it was deleted), or 'changed' when its
   * compare-and-swap lost because someone decided it first. A claim without
   * a bucket (unparseable time) has no neighbours and is accepted.
   */
  async conclude(claim: ConfigMap, bucket: bigint | undefined): Promise<ConfigMap | 'yielded' | 'changed'> {
    const verdict = bucket === undefined ? 'accept' : await this.decide(claim, bucket);
    if (verdict === 'yield') return (await this.remove(claim)) ? 'yielded' : 'changed';
    return (await this.accept(claim)) ?? 'changed';
  }

  /**
   * Decides `mine` (a deciding claim in bucket `bucket`): 'accept' or
   * 'yield'. Reads the neighbours only after `mine` exists (see the header).
   */
  async decide(mine: ConfigMap, bucket: bigint): Promise<'accept' | 'yield'> {
    const w = this.req.windowSeconds;
    const me = this.candidateOf(mine);
    return retryOnConflictOr(
      CONFLICT_BACKOFF,
      async () => {
        let waitingFor: { rv: string | undefined; since: number } | undefined;
        // Waiting for a deciding lower neighbour is not a competing write: it ends with its decision or its grace.
        for (let waits = 1; ; waits++) {
          const [lower, upper] = await Promise.all([
            this.get(this.claimName(bucket - 1n)),
            this.get(this.claimName(bucket + 1n)),
          ]);
          if (upper) {
            const s = await this.standing(upper);
            if (s === 'present' || s === 'pending') return 'yield';
            // The upper claim yields to us; if it was decided meanwhile, look again.
            if (s === 'deciding' && isDuplicateOf(this.candidateOf(upper), me, w) && !(await this.remove(upper))) {
              throw lostRace(`upper neighbour of ${mine.metadata.name} changed`);
            }
          }
          if (!lower || !isDuplicateOf(me, this.candidateOf(lower), w)) return 'accept';
          const s = await this.standing(lower);
          if (s === 'present' || s === 'pending') return 'yield';
          if (s !== 'deciding') return 'accept';
          const now = Date.now();
          if (!waitingFor || waitingFor.rv !== lower.metadata.resourceVersion) {
            waitingFor = { rv: lower.metadata.resourceVersion, since: now };
          }
          if (now - waitingFor.since >= this.graceMs) {
            // Its creator stopped deciding: refuse it (it is a duplicate of ours).
            await this.remove(lower);
            throw lostRace(`lower neighbour of ${mine.metadata.name} removed: look again`);
          }
          // Its decider may be deleting ours right now (lower claims win).
          if (!(await this.get(mine.metadata.name ?? ''))) return 'yield';
          await this.sleep(Math.min(200, 10 * waits));
        }
      },
      () => new IntakeContendedError(`notification claim ${mine.metadata.name}: neighbours kept changing`),
    );
  }
}

const accepted = (c: ConfigMap): ClaimOutcome => {
  const d = dataOf(c);
  return { kind: 'accepted', name: d.notification, uuid: d.uuid, generatedTime: d.generatedTime };
};

/**
 * A claim left `deciding` past the grace: decided for the Notification it
 * records when that exists (accepted for it, or it yields to a neighbour),
 * else removed. Returns the outcome when the claim was accepted for it.
 */
async function finishForCrashedCreator(
  session: ClaimSession,
  claim: ConfigMap,
  bucket: bigint | undefined,
  exists: (name: string) => Promise<boolean>,
): Promise<ClaimOutcome | undefined> {
  if (!(await exists(dataOf(claim).notification))) {
    await session.remove(claim);
    return undefined;
  }
  const decided = await session.conclude(claim, bucket);
  if (decided === 'yielded') return undefined;
  if (decided === 'changed') throw lostRace(`claim ${claim.metadata.name} was decided meanwhile`);
  return accepted(decided);
}

/**
 * Claims the notification's (type, host, payload, bucket), or finds what
 * makes it a duplicate. See the header for the protocol.
 */
export async function claimNotification(req: ClaimRequest): Promise<ClaimOutcome> {
  const session = new ClaimSession(req);
  const bucket = bucketOf(req.candidate.generatedTime, req.windowSeconds);
  // An unparseable time has no neighbours; it still gets its own exact-text claim.
  const bucketLabel = bucket === undefined ? `t${shortHash(req.candidate.generatedTime)}` : undefined;
  const name = session.claimName(bucketLabel ?? (bucket as bigint));
  const bucketText = bucketLabel ?? String(bucket);
  const sleep = req.sleep ?? defaultSleep;
  const graceMs = req.decisionGraceMs ?? DECISION_GRACE_MS;
  let waitingFor: { rv: string | undefined; since: number } | undefined;
  let waits = 0;

  return retryOnConflictOr(
    CONFLICT_BACKOFF,
    async (): Promise<ClaimOutcome> => {
      // Waiting for a deciding claim's decider is not a competing write: it ends with its decision or its grace.
      for (;;) {
        let mine = await session.create(name, bucketText);
        let existing: ConfigMap | undefined;
        if (!mine) {
          existing = await session.get(name);
          if (!existing) throw lostRace(`claim ${name} yielded between our create and our read`);
          // Our own earlier attempt (a reconciler retry, or a create interrupted after the claim): carry on with it.
          if (dataOf(existing).notification === req.name) {
            if (dataOf(existing).state === STATE.accepted) return accepted(existing);
            mine = existing;
          }
        }
        if (mine) {
          req.onClaimed?.();
          const decided = await session.conclude(mine, bucket);
          if (decided === 'yielded') return { kind: 'duplicate' };
          if (decided !== 'changed') return accepted(decided);
          // Someone decided our claim first: a lower neighbour made it yield, or a racer (the
          // kubectl-path reconciler, for a Notification we created early) finished it for us.
          const now = await session.get(name);
          if (now && dataOf(now).notification === req.name && dataOf(now).state === STATE.accepted) {
            return accepted(now);
          }
          return { kind: 'duplicate' };
        }

        const other = existing as ConfigMap;
        const standing = await session.standing(other);
        if (standing === 'present') return { kind: 'duplicate' };
        if (standing === 'pending') return accepted(other);
        if (standing === 'absent') throw lostRace(`claim ${name} stood for a deleted notification: take it again`);
        // Deciding: wait for its decider; past the grace its creator is gone and the claim yields to ours.
        const now = Date.now();
        if (!waitingFor || waitingFor.rv !== other.metadata.resourceVersion) {
          waitingFor = { rv: other.metadata.resourceVersion, since: now };
        }
        if (now - waitingFor.since >= graceMs) {
          // Its creator stopped deciding. If it had created its Notification
          // already (the REST path does so alongside the decision), finish
          // the decision for that one, as the kubectl-path reconciler would:
          // taking the claim over would leave that Notification a duplicate
          // of ours. Otherwise the claim yields to ours.
          const finished = await finishForCrashedCreator(session, other, bucket, req.exists);
          if (finished) return finished;
          throw lostRace(`claim ${name} of a crashed creator removed: take it again`);
        }
        // Polling backs off (5, 10, 20 … 200 ms): a storm of identical requests must not hammer the API server.
        await sleep(Math.min(200, 5 * 2 ** Math.min(6, waits++)));
      }
    },
    () => new IntakeContendedError(`notification claim ${name}: ${CONFLICT_BACKOFF.steps} competing writes`),
  );
}

/**
 * The same rule against stored Notifications of the host (the informer
 * cache): covers history older than the claims' lifetime and stored
 * notifications far later than the new one. Notifications being deleted or
 * flagged Ready=False do not count; neither does `self`. Reads only the
 * notifications filed under the candidate's fingerprint (INDEX.fingerprint),
 * so its cost does not grow with the host's notifications.
 */
export function findCachedDuplicate(
  cache: Pick<Informer<Notification>, 'byIndex'>,
  hostUuid: string,
  candidate: Candidate,
  windowSeconds: number,
  self?: string,
): Notification | undefined {
  const sameFingerprint = cache.byIndex(
    INDEX.fingerprint,
    fingerprintKey(hostUuid, candidate.type, candidate.payloadHash),
  );
  return sameFingerprint.find(
    (o) =>
      o.metadata.name !== self &&
      !o.metadata.deletionTimestamp &&
      !isRefused(o) &&
      isDuplicateOf(
        candidate,
        { type: o.spec.type, payloadHash: payloadHash(o.spec.payload), generatedTime: o.spec.generatedTime },
        windowSeconds,
      ),
  );
}

/**
 * Removes claims older than max(their window, CLAIM_MIN_AGE_MS): by then their
 * Notification is in every replica's cache. Lists in pages; returns how many
 * were removed. The store reconcilers run this periodically (leader only).
 */
export async function sweepNotificationClaims(
  kube: KubeClient,
  namespace: string,
  now: Date,
  log: Logger,
): Promise<number> {
  const list = await listAllPages<ConfigMap>(kube, RESOURCES.configMaps, namespace, {
    labelSelector: `${LABELS.role}=${ROLES.notificationClaim}`,
  });
  let removed = 0;
  for (const claim of list.items) {
    const created = Date.parse(claim.metadata.creationTimestamp ?? '');
    const windowMs = Number(claim.data?.window ?? 0) * 1000;
    const keepMs = Math.max(Number.isFinite(windowMs) ? windowMs : 0, CLAIM_MIN_AGE_MS);
    if (!Number.isNaN(created) && now.getTime() - created <= keepMs) continue;
    if (await deleteExactly(kube, namespace, claim)) removed++;
  }
  if (removed) log.debug({ removed }, 'removed expired notification claims');
  return removed;
}

/**
 * Removes the claim that stands for `n` (retention, purge), if it is still
 * there: its name follows from the notification and the window, and its data
 * must name `n` (a later claim of the same bucket belongs to another).
 */
export async function deleteClaimOf(
  kube: KubeClient,
  namespace: string,
  n: Notification,
  windowSeconds: number,
): Promise<void> {
  const hostUuid = n.status?.sourceHostUuid ?? n.metadata.labels?.[LABELS.hostUuid];
  const bucket = bucketOf(n.spec.generatedTime, windowSeconds);
  if (!hostUuid || bucket === undefined) return;
  const name = notificationClaimName(n.spec.type, hostUuid, payloadHash(n.spec.payload), windowSeconds, bucket);
  let claim: ConfigMap;
  try {
    claim = await kube.get<ConfigMap>(RESOURCES.configMaps, namespace, name);
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  if (claim.data?.notification !== n.metadata.name) return;
  await deleteExactly(kube, namespace, claim);
}
