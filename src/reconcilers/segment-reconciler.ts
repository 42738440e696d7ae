// FailoverSegments created or edited with kubectl/GitOps get what the REST
// path gives: the cascade finalizer, the name claim, a uuid and an integer id,
// Ready=True. A segment whose name another one holds gets Ready=False
// NameConflict and stays invisible. Deleting one finishes the cascade (its
// hosts, its claim) before the finalizer is removed.
import { RESOURCES } from '../k8s/resources.ts';
import { FINALIZERS } from '../model/constants.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { failoverSegmentExists } from '../domain/messages.ts';
import type { AdmissionDeps } from './admission.ts';
import { admitFound, finishedDeleting } from './admission.ts';

export async function reconcileSegment(deps: AdmissionDeps, name: string): Promise<ReconcileResult | void> {
  const { caches, lifecycle } = deps;
  const cached = caches.segments.get(name);
  if (!cached) return;
  if (await finishedDeleting(deps, cached, FINALIZERS.segmentCascade, (o) => lifecycle.finishSegmentDeletion(o)))
    return;
  // No managed-by label here: the object's author (Helm, Argo CD, a person) may own that one.
  await admitFound(deps, cached, {
    ref: RESOURCES.segments,
    kind: 'segment',
    cache: caches.segments,
    ids: deps.ids.segments,
    finalizer: FINALIZERS.segmentCascade,
    invalid: (seg) => deps.validators.segment(seg.spec),
    nameTaken: (seg) => failoverSegmentExists(seg.spec.name),
  });
}
