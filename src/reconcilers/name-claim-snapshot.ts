// One paged list of the name claims instead of one claim check per object
// when the store reconcilers start.
//
// A reconciler confirms each segment's and host's name claim once per
// generation (admission.ts holdNameClaim). When leadership starts, every
// object is reconciled, so without this every host cost a claim take (a
// create answered 409 and a GET: two API calls each), run while the API was
// already serving, and those calls crowded every intake in the API server's
// queue (docs/benchmarks.md, "Scale").
//
// Why a listed claim confirms as well as a take would. A claim is removed
// only by its owner (release on rename or delete) or as stale (its owner is
// gone or no longer carries the name: claims.ts isStale). The list is one
// snapshot at revision R. An object whose resourceVersion is not newer than R
// carried its current spec.name at R, so a claim listed at R that names it
// (metadata.name, uid, Masakari name) was its own then, and nothing can have
// removed it since without the object changing, which would give it a newer
// resourceVersion and a reconcile of its own. Anything else (changed since
// R, a claim not listed, or one without the owner's uid yet) falls back to
// claims.take().
import type { Logger } from 'pino';
import type { KubeList } from '../k8s/client.ts';
import type { ClaimKind, ConfigMap } from '../store/index.ts';
import { claimObjectName } from '../store/index.ts';
import type { FailoverSegment, HaHost } from '../model/types.ts';
import { isNotNewer } from '../runtime/resource-version.ts';
import { systemNowMs } from '../time/clock.ts';

/** How long after its list a snapshot is used; by then the first reconcile of every object is long done. */
export const SNAPSHOT_USE_MS = 600_000;

interface Snapshot {
  resourceVersion: string;
  /** claim object name → "kind/ownerName/ownerUid/name" of its holder. */
  holders: Map<string, string>;
  takenAt: number;
}

const holderKey = (kind: string, ownerName: string, ownerUid: string, name: string) =>
  `${kind}/${ownerName}/${ownerUid}/${name}`;

/** A listed claim as [claim object name, holder key]; undefined for one without a complete holder. */
function holderEntry(c: ConfigMap): [string, string] | undefined {
  const d = c.data ?? {};
  if (!c.metadata.name || !d.kind || !d.ownerName || !d.ownerUid || d.name === undefined) return undefined;
  return [c.metadata.name, holderKey(d.kind, d.ownerName, d.ownerUid, d.name)];
}

/** Lists every name claim, each reduced by `keep` as it is read (NameClaims.listAll). */
export type ListClaims = <U>(keep: (claim: ConfigMap) => U | undefined) => Promise<KubeList<U>>;

export class NameClaimSnapshot {
  private loading: Promise<Snapshot | undefined> | undefined;
  private done = false;

  /**
   * @param listClaims every name claim, paged, with the list's resourceVersion (NameClaims.listAll)
   */
  constructor(
    private readonly listClaims: ListClaims,
    private readonly log: Logger,
    private readonly nowMs: () => number = systemNowMs,
  ) {}

  /** Starts over: the next question lists the claims again (a new leadership term). */
  reset(): void {
    this.loading = undefined;
    this.done = false;
  }

  /** Does the snapshot show `obj`'s name claim held by `obj` itself? False means "ask the API server". */
  async holds(kind: ClaimKind, obj: FailoverSegment | HaHost): Promise<boolean> {
    const uid = obj.metadata.uid;
    if (this.done || !uid) return false;
    const snapshot = await (this.loading ??= this.load());
    if (!snapshot) return false;
    if (this.nowMs() - snapshot.takenAt > SNAPSHOT_USE_MS) {
      // Used up: let its memory go. Later reconciles confirm one by one, as they always could.
      this.loading = undefined;
      this.done = true;
      return false;
    }
    if (!isNotNewer(obj.metadata.resourceVersion, snapshot.resourceVersion)) return false;
    const objectName = claimObjectName(kind, obj.spec.name);
    if (snapshot.holders.get(objectName) !== holderKey(kind, obj.metadata.name ?? '', uid, obj.spec.name)) return false;
    // Each object asks once per term (its confirmation is remembered), so the snapshot empties as the first pass goes.
    snapshot.holders.delete(objectName);
    if (snapshot.holders.size === 0) this.done = true;
    return true;
  }

  private async load(): Promise<Snapshot | undefined> {
    try {
      // Each claim is reduced to its entry as it is read: no list of whole claims is held.
      const list = await this.listClaims(holderEntry);
      const holders = new Map<string, string>(list.items);
      const resourceVersion = list.metadata.resourceVersion ?? '';
      if (!resourceVersion) return undefined;
      this.log.debug({ claims: holders.size, resourceVersion }, 'listed the name claims');
      return { resourceVersion, holders, takenAt: this.nowMs() };
    } catch (err) {
      // Each object then confirms its own claim; the next term lists again.
      this.log.warn({ err }, 'listing the name claims failed; confirming them one by one');
      this.done = true;
      return undefined;
    }
  }
}
