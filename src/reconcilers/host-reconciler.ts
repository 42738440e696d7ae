// HaHosts created or edited with kubectl/GitOps: the release-claims
// finalizer, the host-name claim (unique across all segments), uuid/id,
// the segment's uuid (status.segmentUuid + label) and an ownerReference to the
// segment, then Ready=True. A host whose segmentRef names no segment gets
// Ready=False SegmentNotFound (it may simply have been applied before its
// segment; the segment's arrival re-queues it). A host that WAS admitted to a
// segment that is now gone is deleted, as a garbage collector would.
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION, FINALIZERS, KINDS, LABELS } from '../model/constants.ts';
import type { FailoverSegment } from '../model/types.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { hostExists } from '../domain/messages.ts';
import { objectUuid } from '../store/index.ts';
import { isAdmitted, readyCondition, REASONS } from '../domain/admitted.ts';
import type { AdmissionDeps } from './admission.ts';
import { admitFound, finishedDeleting, flagNotReady } from './admission.ts';

export const segmentNotFoundMessage = (segmentName: string) =>
  `FailoverSegment ${segmentName} referenced by spec.segmentRef does not exist in this namespace.`;

export const segmentNotAdmittedMessage = (segmentName: string, reason: string) =>
  `FailoverSegment ${segmentName} referenced by spec.segmentRef is not admitted (Ready=False, ${reason}).`;

export async function reconcileHost(deps: AdmissionDeps, name: string): Promise<ReconcileResult | void> {
  const { caches, lifecycle } = deps;
  const cached = caches.hosts.get(name);
  if (!cached) return;
  if (await finishedDeleting(deps, cached, FINALIZERS.hostCleanup, (o) => lifecycle.finishHostDeletion(o))) return;

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

  await admitFound(deps, cached, {
    ref: RESOURCES.hosts,
    kind: 'host',
    cache: caches.hosts,
    ids: deps.ids.hosts,
    finalizer: FINALIZERS.hostCleanup,
    invalid: (host) => deps.validators.host(host.spec),
    nameTaken: (host) => hostExists(host.spec.name),
    labels: { [LABELS.segmentUuid]: segmentUuid },
    fields: { segmentUuid },
    ownerReferences: [
      { apiVersion: API_VERSION, kind: KINDS.segment.kind, name: seg.metadata.name ?? '', uid: seg.metadata.uid ?? '' },
    ],
  });
}

/** Asks the API server (not the cache) whether the segment this host was admitted to is gone. */
async function segmentGone(deps: AdmissionDeps, segName: string, uid: string): Promise<boolean> {
  const seg = await deps.lifecycle.fresh<FailoverSegment>(RESOURCES.segments, segName);
  return !seg || seg.metadata.uid !== uid || seg.metadata.deletionTimestamp !== undefined;
}
