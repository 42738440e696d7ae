// FailoverSegments created or edited with kubectl/GitOps get what the REST
// path gives: the cascade finalizer, the name claim, a uuid and an integer id,
// Ready=True. A segment whose name another one holds gets Ready=False
// NameConflict and stays invisible. Deleting one finishes the cascade (its
// hosts, its claim) before the finalizer is removed.
import { RESOURCES } from '../k8s/resources.ts';
import { FINALIZERS, LABELS } from '../model/constants.ts';
import type { FailoverSegment } from '../model/types.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { failoverSegmentExists } from '../domain/messages.ts';
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
import { REASONS } from '../domain/admitted.ts';

export async function reconcileSegment(deps: AdmissionDeps, name: string): Promise<ReconcileResult | void> {
  const { caches, lifecycle } = deps;
  const cached = caches.segments.get(name);
  if (!cached) return;
  if (cached.metadata.deletionTimestamp) {
    if (cached.metadata.finalizers?.includes(FINALIZERS.segmentCascade)) await lifecycle.finishSegmentDeletion(cached);
    deps.confirmedClaims.delete(cached.metadata.uid ?? '');
    return;
  }
  let seg: FailoverSegment | undefined = await lifecycle.addFinalizer(
    RESOURCES.segments,
    cached,
    FINALIZERS.segmentCascade,
  );
  if (!seg || seg.metadata.deletionTimestamp) return;

  const invalid = deps.validators.segment(seg.spec);
  if (invalid) return flagNotReady(deps, RESOURCES.segments, seg, REASONS.invalidSpec, invalid);

  if (!(await holdNameClaim(deps, 'segment', seg))) {
    return flagNotReady(deps, RESOURCES.segments, seg, REASONS.nameConflict, failoverSegmentExists(seg.spec.name));
  }

  const uuid = chooseUuid(seg, caches.segments);
  const id = await chooseId(seg, caches.segments, deps.ids.segments);
  // No managed-by label here: the object's author (Helm, Argo CD, a person) may own that one.
  seg = await ensureMetadata(deps, RESOURCES.segments, seg, { [LABELS.uuid]: uuid, [LABELS.id]: String(id) });
  if (!seg) return;
  const status = admittedStatus(seg, { uuid, id }, deps.now());
  if (status) {
    const written = await patchStatus(deps, RESOURCES.segments, seg, status);
    if (written) caches.segments.upsertLocal(written);
  }
}
