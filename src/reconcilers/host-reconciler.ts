// HaHosts created or edited with kubectl/GitOps: the release-claims
// finalizer, the host-name claim (unique across all segments), uuid/id,
// the segment's uuid (status.segmentUuid + label) and an ownerReference to the
// segment, then Ready=True. A host whose segmentRef names no segment gets
// Ready=False SegmentNotFound (it may simply have been applied before its
// segment; the segment's arrival re-queues it). A host that WAS admitted to a
// segment that is now gone is deleted, as a garbage collector would.
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION, FINALIZERS, KINDS, LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost } from '../model/types.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { hostExists } from '../domain/messages.ts';
import { objectUuid } from '../store/mapping.ts';
import type { AdmissionDeps } from './admission.ts';
import {
  admittedStatus,
  chooseId,
  chooseUuid,
  ensureMetadata,
  flagNotReady,
  holdNameClaim,
  patchStatus,
} from './admission.ts';
import { isAdmitted, readyCondition, REASONS } from '../domain/admitted.ts';

export const segmentNotFoundMessage = (segmentName: string) =>
  `FailoverSegment ${segmentName} referenced by spec.segmentRef does not exist in this namespace.`;

export const segmentNotAdmittedMessage = (segmentName: string, reason: string) =>
  `FailoverSegment ${segmentName} referenced by spec.segmentRef is not admitted (Ready=False, ${reason}).`;

export async function reconcileHost(deps: AdmissionDeps, name: string): Promise<ReconcileResult | void> {
  const { caches, lifecycle } = deps;
  const cached = caches.hosts.get(name);
  if (!cached) return;
  if (cached.metadata.deletionTimestamp) {
    if (cached.metadata.finalizers?.includes(FINALIZERS.hostCleanup)) await lifecycle.finishHostDeletion(cached);
    deps.confirmedClaims.delete(cached.metadata.uid ?? '');
    return;
  }

  const segName = cached.spec.segmentRef?.name ?? '';
  const seg = caches.segments.get(segName);
  const ownerRef = cached.metadata.ownerReferences?.find((r) => r.kind === KINDS.segment.kind);
  if (!seg || seg.metadata.deletionTimestamp || (ownerRef && ownerRef.uid !== seg.metadata.uid)) {
    if (ownerRef && (await segmentGone(deps, ownerRef.name, ownerRef.uid))) {
      deps.log.info({ host: name, segment: ownerRef.name }, 'deleting host of a deleted segment');
      await lifecycle.deleteHost(cached);
      return;
    }
    if (!seg)
      return flagNotReady(deps, RESOURCES.hosts, cached, REASONS.segmentNotFound, segmentNotFoundMessage(segName));
    return; // the segment is being deleted: its cascade removes this host
  }
  if (!isAdmitted(seg)) {
    // A segment refused by its own reconciler (NameConflict, InvalidSpec) is as good as missing.
    if (readyCondition(seg)?.status === 'False') {
      const message = segmentNotAdmittedMessage(segName, readyCondition(seg)?.reason ?? '');
      return flagNotReady(deps, RESOURCES.hosts, cached, REASONS.segmentNotFound, message);
    }
    // Applied together with its segment: its admission re-queues this host.
    return;
  }
  const segmentUuid = objectUuid(seg) ?? '';

  let host: HaHost | undefined = await lifecycle.addFinalizer(RESOURCES.hosts, cached, FINALIZERS.hostCleanup);
  if (!host || host.metadata.deletionTimestamp) return;

  const invalid = deps.validators.host(host.spec);
  if (invalid) return flagNotReady(deps, RESOURCES.hosts, host, REASONS.invalidSpec, invalid);

  if (!(await holdNameClaim(deps, 'host', host))) {
    return flagNotReady(deps, RESOURCES.hosts, host, REASONS.nameConflict, hostExists(host.spec.name));
  }

  const uuid = chooseUuid(host, caches.hosts);
  const id = await chooseId(host, caches.hosts, deps.ids.hosts);
  host = await ensureMetadata(
    deps,
    RESOURCES.hosts,
    host,
    { [LABELS.uuid]: uuid, [LABELS.id]: String(id), [LABELS.segmentUuid]: segmentUuid },
    [{ apiVersion: API_VERSION, kind: KINDS.segment.kind, name: seg.metadata.name ?? '', uid: seg.metadata.uid ?? '' }],
  );
  if (!host) return;
  const status = admittedStatus(host, { uuid, id, segmentUuid }, deps.now());
  if (status) {
    const written = await patchStatus(deps, RESOURCES.hosts, host, status);
    if (written) caches.hosts.upsertLocal(written);
  }
}

/** Asks the API server (not the cache) whether the segment this host was admitted to is gone. */
async function segmentGone(deps: AdmissionDeps, segName: string, uid: string): Promise<boolean> {
  const seg = await deps.lifecycle.fresh<FailoverSegment>(RESOURCES.segments, segName);
  return !seg || seg.metadata.uid !== uid || seg.metadata.deletionTimestamp !== undefined;
}
