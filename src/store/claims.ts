// Unique Masakari names on an API that only has unique object names.
//
// A claim is a ConfigMap named from the EXACT Masakari name
// (claimObjectName: kind + readable slug + short hash), created atomically
// BEFORE the object that carries the name. A second creator gets 409
// AlreadyExists, which becomes Masakari's 409 (NameTakenError). A rename
// claims the new name, updates the object, then releases the old claim. A
// crash between those steps leaves a claim whose owner is gone or no longer
// carries that name; such a claim is "stale" once older than a grace period,
// and is then removed by the sweeper or by the next creator that bumps into it.
import type { Logger } from 'pino';
import type { KubeClient, KubeList } from '../k8s/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../k8s/client.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import {
  CONFLICT_BACKOFF,
  isStaleWrite,
  lostRace,
  retryOnConflict,
  retryOnConflictOr,
} from '../k8s/retry-on-conflict.ts';
import { API_VERSION, FIELD_MANAGERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { FailoverSegment, HaHost, OwnerReference } from '../model/types.ts';
import { NameTakenError } from '../domain/repository.ts';
import type { ConfigMap } from './configmap.ts';
import { deleteExactly, ROLES } from './configmap.ts';
import type { ClaimKind } from './names.ts';
import { claimObjectName } from './names.ts';
import { systemClock } from '../time/clock.ts';

/**
 * Claims per page when listing them all. A claim is about 1 KB of JSON, so a
 * page stays under V8's large-object size (128 KiB): a page's text that is
 * still being read when the young generation is collected is then copied
 * like any young object, instead of being moved to the large-object space at
 * once, where it stays until the next full collection (docs/benchmarks.md,
 * "Scale").
 */
const CLAIM_PAGE_SIZE = 100;

/**
 * The periodic sweep waits this long between pages. Listing every claim back
 * to back made the slowest POSTs of a busy API an order of magnitude slower
 * than the median while it ran (docs/benchmarks.md, "Scale"); paced, a sweep
 * takes longer and uses a fraction of a core.
 */
const SWEEP_PAGE_GAP_MS = 50;

/** Default age before an orphaned claim may be removed; covers an in-flight create or rename and clock skew. */
export const DEFAULT_CLAIM_GRACE_MS = 120_000;

export interface ClaimOwner {
  /** metadata.name of the FailoverSegment or HaHost. */
  name: string;
  /** Known once the owner exists; lets a real cluster's garbage collector delete the claim with it. */
  uid?: string;
}

export interface NameClaimsOptions {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  graceMs?: number;
  now?: () => Date;
  /**
   * The owner as the local cache sees it. The sweep asks the API server only
   * about claims whose cached owner looks wrong, so a periodic sweep of N
   * healthy claims costs one list, not N reads.
   */
  cachedOwner?: (kind: ClaimKind, ownerName: string) => FailoverSegment | HaHost | undefined;
}

const ownerResource = (kind: ClaimKind) => (kind === 'segment' ? RESOURCES.segments : RESOURCES.hosts);

export function ownerReferenceTo(kind: ClaimKind, owner: Required<ClaimOwner>): OwnerReference {
  return { apiVersion: API_VERSION, kind: KINDS[kind].kind, name: owner.name, uid: owner.uid };
}

export class NameClaims {
  private readonly graceMs: number;
  private readonly now: () => Date;

  constructor(private readonly opts: NameClaimsOptions) {
    this.graceMs = opts.graceMs ?? DEFAULT_CLAIM_GRACE_MS;
    this.now = opts.now ?? (() => systemClock.now());
  }

  /**
   * Takes the name for `owner`, or confirms the owner already holds it (so a
   * retried create or a reconciler pass is idempotent). A stale claim in the
   * way is removed and the take retried. Throws NameTakenError otherwise.
   */
  async take(kind: ClaimKind, name: string, owner: ClaimOwner): Promise<void> {
    const { kube, namespace } = this.opts;
    const objectName = claimObjectName(kind, name);
    await retryOnConflictOr(
      CONFLICT_BACKOFF,
      async () => {
        try {
          await kube.create<ConfigMap>(RESOURCES.configMaps, namespace, this.claimBody(kind, name, owner), {
            fieldManager: FIELD_MANAGERS.api,
          });
          return;
        } catch (e) {
          if (!isAlreadyExists(e)) throw e;
        }
        const existing = await this.get(objectName);
        if (!existing) throw lostRace(`claim ${objectName} released between our create and our read`);
        if (existing.data?.name !== name) {
          throw new Error(
            `name claim ${objectName} holds ${JSON.stringify(existing.data?.name)}, not ${JSON.stringify(name)}: hash collision`,
          );
        }
        if (this.isHeldBy(existing, owner)) {
          if (owner.uid && !existing.data?.ownerUid)
            await this.bindOwner(kind, existing, owner as Required<ClaimOwner>);
          return;
        }
        if (owner.uid && (await this.isRestoredClaimOf(kind, existing, owner as Required<ClaimOwner>))) {
          this.opts.log.info(
            { claim: objectName, owner: owner.name, previousUid: existing.data?.ownerUid },
            're-adopting name claim of an earlier object of the same metadata.name (restored or re-created)',
          );
          if (await this.bindOwner(kind, existing, owner as Required<ClaimOwner>)) return;
          throw lostRace(`claim ${objectName} changed while being re-adopted`);
        }
        if (!(await this.isStale(existing))) {
          throw new NameTakenError(
            `${kind} name ${JSON.stringify(name)} is already claimed by ${existing.data?.ownerName}`,
          );
        }
        this.opts.log.info(
          { claim: objectName, owner: existing.data?.ownerName },
          'removing stale name claim in the way',
        );
        await deleteExactly(this.opts.kube, this.opts.namespace, existing);
        throw lostRace(`stale claim ${objectName} removed: take it again`);
      },
      () =>
        new NameTakenError(
          `${kind} name ${JSON.stringify(name)}: claim kept changing after ${CONFLICT_BACKOFF.steps} attempts`,
        ),
    );
  }

  /** Releases the claim if (and only if) `ownerName` holds it. */
  async release(kind: ClaimKind, name: string, ownerName: string): Promise<void> {
    const objectName = claimObjectName(kind, name);
    try {
      await retryOnConflict(CONFLICT_BACKOFF, async () => {
        const existing = await this.get(objectName);
        if (!existing || existing.data?.ownerName !== ownerName) return;
        if (!(await deleteExactly(this.opts.kube, this.opts.namespace, existing)))
          throw lostRace(`claim ${objectName} changed before its delete`);
      });
    } catch (e) {
      // A claim that kept changing is left to the sweeper, as a claim whose release failed.
      if (!isStaleWrite(e)) throw e;
    }
  }

  /** The claim object for a name, if any. */
  get(objectName: string): Promise<ConfigMap | undefined> {
    return getIfExists<ConfigMap>(this.opts.kube, RESOURCES.configMaps, this.opts.namespace, objectName);
  }

  holder(kind: ClaimKind, name: string): Promise<ConfigMap | undefined> {
    return this.get(claimObjectName(kind, name));
  }

  isHeldBy(claim: ConfigMap, owner: ClaimOwner): boolean {
    if (claim.data?.ownerName !== owner.name) return false;
    // Same name but another uid: an earlier object of that name was deleted and re-created.
    return !(owner.uid && claim.data.ownerUid && claim.data.ownerUid !== owner.uid);
  }

  /**
   * A claim recorded for an earlier object of the same metadata.name (another
   * uid) — what a backup and restore, or a delete and re-create, leaves — is
   * the owner's own when the API server (not a cache) says the object of that
   * name IS the owner (its uid) and carries the claimed Masakari name. Two
   * objects of one metadata.name cannot exist at once, so the earlier holder
   * is gone and nobody else can hold the name through this claim. Adopting
   * needs no grace period: the grace protects in-flight creates whose owner
   * does not exist yet, and this owner exists.
   */
  private async isRestoredClaimOf(kind: ClaimKind, claim: ConfigMap, owner: Required<ClaimOwner>): Promise<boolean> {
    if (claim.data?.ownerName !== owner.name || claim.data.kind !== kind) return false;
    let live: FailoverSegment | HaHost;
    try {
      live = await this.opts.kube.get<FailoverSegment | HaHost>(ownerResource(kind), this.opts.namespace, owner.name);
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
    return live.metadata.uid === owner.uid && !live.metadata.deletionTimestamp && live.spec.name === claim.data.name;
  }

  /**
   * A claim is stale when it is older than the grace period and its owner no
   * longer exists or no longer carries the claimed name (an object of the same
   * metadata.name with another uid that carries it is its restored owner). Reads the owner from the API server, not
   * a cache, so a fresh owner is never mistaken for a missing one.
   */
  async isStale(claim: ConfigMap): Promise<boolean> {
    const created = Date.parse(claim.metadata.creationTimestamp ?? '');
    if (!Number.isNaN(created) && this.now().getTime() - created < this.graceMs) return false;
    const kind = claim.data?.kind as ClaimKind | undefined;
    const ownerName = claim.data?.ownerName;
    if ((kind !== 'segment' && kind !== 'host') || !ownerName) return true;
    let owner: FailoverSegment | HaHost;
    try {
      owner = await this.opts.kube.get<FailoverSegment | HaHost>(ownerResource(kind), this.opts.namespace, ownerName);
    } catch (e) {
      if (isNotFound(e)) return true;
      throw e;
    }
    // Another uid but the same metadata.name and Masakari name: a restored or
    // re-created owner, which re-adopts the claim (isRestoredClaimOf); not stale.
    return owner.spec.name !== claim.data?.name;
  }

  /**
   * Every name claim, in pages, with the list's resourceVersion. `keep` maps
   * each claim as it is read (undefined drops it), so a caller that needs a
   * little of each never holds every claim in full: at 10,000 hosts the
   * whole objects, managedFields included, were megabytes of garbage at the
   * start of each leadership term.
   */
  listAll<U>(keep: (claim: ConfigMap) => U | undefined, pageGapMs = 0): Promise<KubeList<U>> {
    const selector = { labelSelector: `${LABELS.role}=${ROLES.nameClaim}` };
    return listAllPages<ConfigMap, U>(
      this.opts.kube,
      RESOURCES.configMaps,
      this.opts.namespace,
      selector,
      CLAIM_PAGE_SIZE,
      keep,
      pageGapMs,
    );
  }

  /** Removes every stale claim; returns how many. The store reconciler runs this periodically. */
  async sweep(): Promise<number> {
    const { log } = this.opts;
    // Only the claims the cache cannot vouch for are kept from the list, and only what the checks read.
    const list = await this.listAll(
      (claim) => (this.cachedHolderMatches(claim) ? undefined : sweepFields(claim)),
      SWEEP_PAGE_GAP_MS,
    );
    let removed = 0;
    for (const claim of list.items) {
      if (!(await this.isStale(claim))) continue;
      if (await deleteExactly(this.opts.kube, this.opts.namespace, claim)) {
        removed++;
        log.info({ claim: claim.metadata.name, owner: claim.data?.ownerName }, 'removed orphaned name claim');
      }
    }
    return removed;
  }

  private cachedHolderMatches(claim: ConfigMap): boolean {
    const kind = claim.data?.kind as ClaimKind | undefined;
    const ownerName = claim.data?.ownerName;
    if (!this.opts.cachedOwner || (kind !== 'segment' && kind !== 'host') || !ownerName) return false;
    const owner = this.opts.cachedOwner(kind, ownerName);
    if (!owner || owner.spec.name !== claim.data?.name) return false;
    return !claim.data?.ownerUid || claim.data.ownerUid === owner.metadata.uid;
  }

  private claimBody(kind: ClaimKind, name: string, owner: ClaimOwner): ConfigMap {
    const data: Record<string, string> = { kind, name, ownerName: owner.name };
    if (owner.uid) data.ownerUid = owner.uid;
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: claimObjectName(kind, name),
        labels: { [LABELS.role]: ROLES.nameClaim, [LABELS.managedBy]: MANAGED_BY },
        ...(owner.uid ? { ownerReferences: [ownerReferenceTo(kind, owner as Required<ClaimOwner>)] } : {}),
      },
      data,
    };
  }

  /**
   * Records the owner's uid and ownerReference on a claim taken before the
   * owner existed, or re-adopted (isRestoredClaimOf). False when the claim
   * changed or vanished meanwhile.
   */
  private async bindOwner(kind: ClaimKind, claim: ConfigMap, owner: Required<ClaimOwner>): Promise<boolean> {
    try {
      // resourceVersion in a merge patch is a precondition: a concurrent change answers 409.
      await this.opts.kube.mergePatch(
        RESOURCES.configMaps,
        this.opts.namespace,
        claim.metadata.name ?? '',
        {
          metadata: {
            resourceVersion: claim.metadata.resourceVersion,
            ownerReferences: [ownerReferenceTo(kind, owner)],
          },
          data: { ownerUid: owner.uid },
        },
        { fieldManager: FIELD_MANAGERS.reconciler },
      );
      return true;
    } catch (e) {
      // Someone else changed or removed it meanwhile; the next pass looks again.
      if (!isConflict(e) && !isNotFound(e)) throw e;
      return false;
    }
  }
}

/** What the sweep reads of a claim: its name and resourceVersion (the delete's precondition), age and data. */
function sweepFields(claim: ConfigMap): ConfigMap {
  const { name, resourceVersion, creationTimestamp } = claim.metadata;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, resourceVersion, creationTimestamp },
    data: claim.data,
  };
}
