// Deletion as Masakari means it, on a cluster that may have no garbage
// collector (the test control plane has no kube-controller-manager).
//
// A FailoverSegment carries the finalizer masakari.openkeel.io/cascade-hosts
// and an HaHost masakari.openkeel.io/release-claims. Deleting one through the
// REST API runs the whole sequence at once: delete (the finalizer keeps the
// object, now marked deleting, hence invisible), remove dependents (hosts of
// the segment; the name claim of a host), then remove the
// finalizer. A delete issued with kubectl stops after the first step; the
// store reconciler then runs the same finishXxx() functions. ownerReferences
// (host → segment, claim → owner) are set anyway so that a real
// cluster's garbage collector agrees.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { isConflict, isNotFound } from '../k8s/client.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { DEFAULT_PAGE_SIZE, listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { CONFLICT_BACKOFF, retryOnConflictOr } from '../k8s/retry-on-conflict.ts';
import { FINALIZERS, LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, MasakariObject } from '../model/types.ts';
import type { NameClaims } from './claims.ts';
import type { StoreCaches } from './caches.ts';
import { objectUuid } from './mapping.ts';

export interface LifecycleDeps {
  kube: KubeClient;
  namespace: string;
  claims: NameClaims;
  caches: StoreCaches;
  log: Logger;
  fieldManager: string;
}

export class Lifecycle {
  constructor(private readonly deps: LifecycleDeps) {}

  /** Adds a finalizer (never to an object being deleted). Returns the updated object, or undefined if gone. */
  async addFinalizer<T extends MasakariObject>(ref: ResourceRef, obj: T, finalizer: string): Promise<T | undefined> {
    return this.editFinalizers(
      ref,
      obj,
      (list) => (list.includes(finalizer) ? undefined : [...list, finalizer]),
      false,
    );
  }

  async removeFinalizer<T extends MasakariObject>(ref: ResourceRef, obj: T, finalizer: string): Promise<T | undefined> {
    return this.editFinalizers(
      ref,
      obj,
      (list) => (list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined),
      true,
    );
  }

  /** REST delete of a host: everything, now. */
  async deleteHost(host: HaHost): Promise<void> {
    await this.deleteObject(RESOURCES.hosts, host);
    const last = await this.finishHostDeletion(host);
    // The last version we wrote: watch events up to it (the "deleting" update) must not re-add it.
    this.deps.caches.hosts.deleteLocal(host.metadata.name ?? '', last?.metadata.resourceVersion);
  }

  /**
   * Releases what the host held (its name claim), then lets it go; returns
   * its last written version. Its notifications' duplicate claims expire by
   * themselves (src/store/admission/duplicate-claim.ts); notifications outlive their host.
   */
  async finishHostDeletion(host: HaHost): Promise<HaHost | undefined> {
    const name = host.metadata.name ?? '';
    await this.deps.claims.release('host', host.spec.name, name);
    return this.removeFinalizer(RESOURCES.hosts, host, FINALIZERS.hostCleanup);
  }

  /** REST delete of a segment: its hosts, then the segment, as Masakari's one transaction did. */
  async deleteSegment(seg: FailoverSegment): Promise<void> {
    await this.deleteObject(RESOURCES.segments, seg);
    const last = await this.finishSegmentDeletion(seg);
    this.deps.caches.segments.deleteLocal(seg.metadata.name ?? '', last?.metadata.resourceVersion);
  }

  /** Deletes the segment's hosts, releases its claim, then lets it go; returns its last written version. */
  async finishSegmentDeletion(seg: FailoverSegment): Promise<FailoverSegment | undefined> {
    for (const host of await this.hostsOf(seg)) await this.deleteHost(host);
    await this.deps.claims.release('segment', seg.spec.name, seg.metadata.name ?? '');
    return this.removeFinalizer(RESOURCES.segments, seg, FINALIZERS.segmentCascade);
  }

  /**
   * The segment's hosts, read from the API server (not the cache, which may
   * miss a host another replica created a moment ago): by segment uuid label,
   * or by segmentRef for hosts that were never admitted. In pages, keeping
   * only the segment's own: a region's hosts are thousands.
   */
  async hostsOf(seg: FailoverSegment): Promise<HaHost[]> {
    const uuid = objectUuid(seg);
    const ofSegment = (h: HaHost): HaHost | undefined =>
      h.spec?.segmentRef?.name === seg.metadata.name ||
      (uuid !== undefined && h.metadata.labels?.[LABELS.segmentUuid] === uuid)
        ? h
        : undefined;
    const { items } = await listAllPages<HaHost>(
      this.deps.kube,
      RESOURCES.hosts,
      this.deps.namespace,
      {},
      DEFAULT_PAGE_SIZE,
      ofSegment,
    );
    return items;
  }

  /** Deletes exactly this object (uid precondition); already gone is fine. */
  async deleteObject(ref: ResourceRef, obj: MasakariObject): Promise<void> {
    try {
      await this.deps.kube.delete(ref, this.deps.namespace, obj.metadata.name ?? '', {
        preconditionUid: obj.metadata.uid,
      });
    } catch (e) {
      if (isNotFound(e)) return;
      // 409 here means the uid precondition failed: a new object of that name, not ours to delete.
      if (isConflict(e)) return;
      throw e;
    }
  }

  /**
   * Read-modify-write of metadata.finalizers guarded by resourceVersion (a
   * merge patch that carries resourceVersion is a compare-and-swap), retried
   * on conflict with a fresh read. `edit` returns undefined for "no change".
   */
  private async editFinalizers<T extends MasakariObject>(
    ref: ResourceRef,
    start: T,
    edit: (current: string[]) => string[] | undefined,
    allowDeleting: boolean,
  ): Promise<T | undefined> {
    const { kube, namespace, fieldManager } = this.deps;
    const name = start.metadata.name ?? '';
    return retryOnConflictOr(
      CONFLICT_BACKOFF,
      async (attempt) => {
        const obj = attempt === 1 ? start : await this.fresh<T>(ref, name);
        if (!obj) return undefined;
        if (start.metadata.uid && obj.metadata.uid !== start.metadata.uid) return undefined;
        if (obj.metadata.deletionTimestamp && !allowDeleting) return obj;
        const next = edit(obj.metadata.finalizers ?? []);
        if (!next) return obj;
        try {
          return await kube.mergePatch<T>(
            ref,
            namespace,
            name,
            { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: next } },
            { fieldManager },
          );
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      },
      () =>
        new Error(`could not update finalizers of ${ref.plural}/${name}: ${CONFLICT_BACKOFF.steps} conflicting writes`),
    );
  }

  fresh<T>(ref: ResourceRef, name: string): Promise<T | undefined> {
    return getIfExists<T>(this.deps.kube, ref, this.deps.namespace, name);
  }
}
