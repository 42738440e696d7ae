// What admitting a kubectl/GitOps-created object means, shared by the three
// reconcilers: pick its Masakari uuid and integer id, write them to labels
// (metadata the operator owns) and to status, and report the outcome in the
// Ready condition. The reconcilers never write spec, so a GitOps tool that
// owns spec is never fought.
import type { ResourceRef } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { CONDITIONS, FIELD_MANAGERS, LABELS } from '../model/constants.ts';
import type { Condition, FailoverSegment, HaHost, MasakariObject, OwnerReference } from '../model/types.ts';
import { NameTakenError } from '../domain/repository.ts';
import type { ClaimKind, IdAllocator, StoreDeps } from '../store/index.ts';
import type { AdmissionWriter } from '../store/index.ts';
import { objectId, withReady, writeStatusUnlessGone } from '../store/index.ts';
import { admissionStatusIfChanged } from '../store/index.ts';
import type { Informer } from '../runtime/types.ts';
import { removeCondition, sameConditions, setCondition } from '../runtime/conditions.ts';
import type { SpecValidators } from '../domain/spec-validators.ts';
import type { NameClaimSnapshot } from './name-claim-snapshot.ts';
import { REASONS } from '../domain/admitted.ts';
import { INDEX } from '../model/indexes.ts';

export interface AdmissionDeps extends StoreDeps {
  validators: SpecValidators;
  /** [DEFAULT] duplicate_notification_detection_interval, for kubectl-created notifications. */
  duplicateWindowSeconds: number;
  pendingClaimMs: number;
  now: () => Date;
  /**
   * uid → generation whose name claim this process has confirmed, so a
   * steady-state reconcile (resync, status-only events) costs no API call.
   */
  confirmedClaims: Map<string, number>;
  /** One list of the claims that confirms most of them when reconciling starts (name-claim-snapshot.ts). */
  nameClaimSnapshot?: Pick<NameClaimSnapshot, 'holds' | 'reset'>;
}

/**
 * Takes (or confirms) the object's name claim; false when another object
 * holds the name. Confirmed once per generation: a spec change re-checks.
 */
export async function holdNameClaim(
  deps: AdmissionDeps,
  kind: ClaimKind,
  obj: FailoverSegment | HaHost,
): Promise<boolean> {
  const uid = obj.metadata.uid ?? '';
  const generation = obj.metadata.generation ?? 0;
  if (deps.confirmedClaims.get(uid) === generation) return true;
  if (await deps.nameClaimSnapshot?.holds(kind, obj)) {
    deps.confirmedClaims.set(uid, generation);
    return true;
  }
  try {
    await deps.claims.take(kind, obj.spec.name, { name: obj.metadata.name ?? '', uid });
  } catch (e) {
    if (e instanceof NameTakenError) return false;
    throw e;
  }
  deps.confirmedClaims.set(uid, generation);
  return true;
}

/**
 * The Masakari uuid: the one already in status, else the uuid label (set by
 * the REST path before a crash, or carried over by a GitOps export) unless
 * another object already uses it, else metadata.uid.
 */
export function chooseUuid<T extends MasakariObject>(obj: T, cache: Informer<T>): string {
  if (obj.status?.uuid) return obj.status.uuid;
  const label = obj.metadata.labels?.[LABELS.uuid];
  if (label && /^[0-9a-f-]{36}$/i.test(label)) {
    const others = cache.byIndex(INDEX.uuid, label).filter((o) => o.metadata.name !== obj.metadata.name);
    if (others.length === 0) return label;
  }
  return obj.metadata.uid ?? '';
}

/**
 * The Masakari id: status first; else the id label if it came from the
 * sequence (below its high-water mark) and no other object uses it (the REST
 * path writes it before a crash could interrupt); else a fresh one. A
 * hand-written label above the mark is never trusted: the sequence would hand
 * the same number out later.
 */
export async function chooseId<T extends MasakariObject>(
  obj: T,
  cache: Informer<T>,
  ids: IdAllocator,
): Promise<number> {
  if (typeof obj.status?.id === 'number') return obj.status.id;
  const label = objectId(obj);
  if (label !== undefined && label < (await ids.highWaterMark())) {
    const others = cache.byIndex(INDEX.id, String(label)).filter((o) => o.metadata.name !== obj.metadata.name);
    if (others.length === 0) return label;
  }
  return ids.next();
}

/** Merge-patches labels (and ownerReferences) when they differ; returns the current object. */
export async function ensureMetadata<T extends MasakariObject>(
  deps: AdmissionDeps,
  ref: ResourceRef,
  obj: T,
  labels: Record<string, string>,
  ownerReferences?: OwnerReference[],
): Promise<T | undefined> {
  const current = obj.metadata.labels ?? {};
  const labelsDiffer = Object.entries(labels).some(([k, v]) => current[k] !== v);
  const refsMissing = (ownerReferences ?? []).some(
    (want) => !(obj.metadata.ownerReferences ?? []).some((have) => have.uid === want.uid),
  );
  if (!labelsDiffer && !refsMissing) return obj;
  const metadata: Record<string, unknown> = { labels };
  if (refsMissing) metadata.ownerReferences = [...(obj.metadata.ownerReferences ?? []), ...(ownerReferences ?? [])];
  // resourceVersion makes it a compare-and-swap (ownerReferences is a list a merge patch replaces whole).
  if (refsMissing) metadata.resourceVersion = obj.metadata.resourceVersion;
  try {
    return await deps.kube.mergePatch<T>(
      ref,
      deps.namespace,
      obj.metadata.name ?? '',
      { metadata },
      {
        fieldManager: FIELD_MANAGERS.reconciler,
      },
    );
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The reconcilers write as FIELD_MANAGERS.reconciler. */
export const reconcilerWriter = (deps: AdmissionDeps): AdmissionWriter => ({
  ...deps,
  fieldManager: FIELD_MANAGERS.reconciler,
});

/**
 * kstatus (Flux's health checks and `wait`, kpt, cli-utils) does not read
 * Ready; it reads the "abnormal-true" conditions. Added with the GitOps work
 * (docs/design/kubectl-gitops.md): a refused object also gets
 * Reconciling=True while it waits for another object (its segment or host
 * may simply not be applied yet), or Stalled=True when a person must act
 * (name taken, invalid spec, host on maintenance, duplicate). An admitted
 * object carries neither, so kstatus reports it Current.
 */
const WAITING_FOR_ANOTHER_OBJECT = new Set<string>([REASONS.segmentNotFound, REASONS.hostNotFound]);

function withKstatus(
  conditions: Condition[],
  refusal: { reason: string; message: string; generation: number | undefined } | undefined,
  now: Date,
): Condition[] {
  const cleared = removeCondition(removeCondition(conditions, CONDITIONS.stalled), CONDITIONS.reconciling);
  if (!refusal) return cleared;
  const type = WAITING_FOR_ANOTHER_OBJECT.has(refusal.reason) ? CONDITIONS.reconciling : CONDITIONS.stalled;
  const { reason, message, generation } = refusal;
  return setCondition(cleared, { type, status: 'True', reason, message, observedGeneration: generation }, now);
}

/** Ready=False with a reason: the object stays invisible to the Masakari API until the cause goes away. */
export async function flagNotReady<T extends MasakariObject>(
  deps: AdmissionDeps,
  ref: ResourceRef,
  obj: T,
  reason: string,
  message: string,
): Promise<void> {
  const generation = obj.metadata.generation;
  const now = deps.now();
  const ready = withReady(obj.status?.conditions, 'False', reason, message, generation, now);
  const conditions = withKstatus(ready, { reason, message, generation }, now);
  if (sameConditions(obj.status?.conditions, conditions)) return;
  deps.log.info({ kind: obj.kind, name: obj.metadata.name, reason, message }, 'object not admitted');
  await writeStatusUnlessGone(reconcilerWriter(deps), ref, obj, { conditions });
}

/** What admitFound needs to know about a segment or host besides the object. */
export interface FoundObject<T extends FailoverSegment | HaHost> {
  ref: ResourceRef;
  kind: ClaimKind;
  cache: Informer<T>;
  ids: IdAllocator;
  /** The finalizer the object must carry before it is admitted (its cleanup on delete). */
  finalizer: string;
  /** The spec's first schema error, if any. */
  invalid: (obj: T) => string | undefined;
  /** Masakari's message when another object holds the name. */
  nameTaken: (obj: T) => string;
  /** Labels and status fields besides uuid and id (a host's segment uuid). */
  labels?: Record<string, string>;
  fields?: Record<string, unknown>;
  ownerReferences?: OwnerReference[];
}

/**
 * The kubectl path's admission of a segment or host: its finalizer first,
 * then a valid spec, the name claim, then uuid and id into labels and into
 * status (admissionStatusIfChanged, written only when something changed). Refusals
 * become Ready=False with their reason.
 */
export async function admitFound<T extends FailoverSegment | HaHost>(
  deps: AdmissionDeps,
  cached: T,
  how: FoundObject<T>,
): Promise<void> {
  const { ref, cache } = how;
  const obj = await deps.lifecycle.addFinalizer(ref, cached, how.finalizer);
  if (!obj || obj.metadata.deletionTimestamp) return;
  const invalid = how.invalid(obj);
  if (invalid) return flagNotReady(deps, ref, obj, REASONS.invalidSpec, invalid);
  if (!(await holdNameClaim(deps, how.kind, obj))) {
    return flagNotReady(deps, ref, obj, REASONS.nameConflict, how.nameTaken(obj));
  }
  const uuid = chooseUuid(obj, cache);
  const id = await chooseId(obj, cache, how.ids);
  const labels = { [LABELS.uuid]: uuid, [LABELS.id]: String(id), ...how.labels };
  const current = await ensureMetadata(deps, ref, obj, labels, how.ownerReferences);
  if (!current) return;
  const status = admissionStatusIfChanged(current, { uuid, id, ...how.fields }, deps.now());
  if (status) {
    const written = await writeStatusUnlessGone(reconcilerWriter(deps), ref, current, status);
    if (written) cache.upsertLocal(written);
  }
}

/**
 * For an object being deleted: runs the finalizer's work (while the object
 * still carries `finalizer`) and forgets its confirmed claim. False when the
 * object is not being deleted.
 */
export async function finishedDeleting<T extends FailoverSegment | HaHost>(
  deps: AdmissionDeps,
  obj: T,
  finalizer: string,
  finish: (obj: T) => Promise<unknown>,
): Promise<boolean> {
  if (!obj.metadata.deletionTimestamp) return false;
  if (obj.metadata.finalizers?.includes(finalizer)) await finish(obj);
  deps.confirmedClaims.delete(obj.metadata.uid ?? '');
  return true;
}
