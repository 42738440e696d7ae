// The admission status and its writes: what every writer (the REST path, the
// import, the kubectl/GitOps reconcilers) puts into status to make an object
// visible through the Masakari API (src/domain/admitted.ts isAdmitted), and
// the one way it is written, a merge patch of the status subresource.
//
// Vocabulary (docs/design/store.md, "Admission"): admissionStatus is the
// status that admits; admissionStatusIfChanged the same, or nothing when the
// object already carries it; writeStatus writes a status (optionally as a
// compare-and-swap on one resourceVersion), writeStatusUnlessGone the same
// with a vanished object as undefined; admitCreated the second write of a
// create.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../../k8s/client.ts';
import { KubeError, isNotFound } from '../../k8s/client.ts';
import { getIfExists } from '../../k8s/get-if-exists.ts';
import { CONFLICT_BACKOFF, retryOnConflict } from '../../k8s/retry-on-conflict.ts';
import { CONDITIONS } from '../../model/constants.ts';
import type { Condition, MasakariObject, NotificationStatus } from '../../model/types.ts';
import { removeCondition, sameConditions } from '../../runtime/conditions.ts';
import { rfc3339Seconds } from '../../time/format.ts';
import { admittedConditions, notificationConditions } from '../conditions.ts';

/**
 * The status that admits `obj`: the caller's fields (uuid, id, and what else
 * its kind needs), observedGeneration, createdAt once (status survives a backup
 * and restore, creationTimestamp does not) and the conditions: Ready=True for a
 * segment or host, without kstatus' Stalled or Reconciling left from a refusal;
 * a notification's conditions follow its phase.
 */
export function admissionStatus(
  obj: MasakariObject,
  fields: Record<string, unknown>,
  now: Date,
): Record<string, unknown> {
  const generation = obj.metadata.generation;
  const previous = obj.status?.conditions;
  const phase = fields.phase as NotificationStatus | undefined;
  const conditions =
    phase !== undefined
      ? notificationConditions(previous, phase, generation, now)
      : removeCondition(
          removeCondition(admittedConditions(previous, generation, now), CONDITIONS.stalled),
          CONDITIONS.reconciling,
        );
  const status: Record<string, unknown> = { ...fields, observedGeneration: generation, conditions };
  if (!obj.status?.createdAt && obj.metadata.creationTimestamp) status.createdAt = obj.metadata.creationTimestamp;
  return status;
}

/**
 * admissionStatus (ids, observedGeneration, Ready=True, createdAt once) and updatedAt = now
 * when the spec changed since the last admission (a generation bump seen
 * after the first one). Returns undefined if nothing would change, so
 * steady-state reconciles write nothing.
 */
export function admissionStatusIfChanged(
  obj: MasakariObject,
  fields: Record<string, unknown>,
  now: Date,
): Record<string, unknown> | undefined {
  const st = (obj.status ?? {}) as Record<string, unknown>;
  const generation = obj.metadata.generation;
  const status = admissionStatus(obj, fields, now);
  const observed = obj.status?.observedGeneration;
  if (observed !== undefined && generation !== undefined && observed < generation)
    status.updatedAt = rfc3339Seconds(now);
  const { conditions, ...rest } = status;
  const changed =
    Object.entries(rest).some(([k, v]) => JSON.stringify(st[k]) !== JSON.stringify(v)) ||
    !sameConditions(obj.status?.conditions, conditions as Condition[]);
  return changed ? status : undefined;
}

export interface AdmissionWriter {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  /** Field manager of every write (api, import, reconciler). */
  fieldManager: string;
  now: () => Date;
}

/** Merge-patches status; with `resourceVersion` only onto that version (409 otherwise). Errors pass through. */
export function writeStatus<T extends MasakariObject>(
  w: AdmissionWriter,
  ref: ResourceRef,
  obj: T,
  status: Record<string, unknown>,
  resourceVersion?: string,
): Promise<T> {
  return w.kube.mergePatch<T>(
    ref,
    w.namespace,
    obj.metadata.name ?? '',
    resourceVersion ? { metadata: { resourceVersion }, status } : { status },
    { status: true, fieldManager: w.fieldManager },
  );
}

/**
 * Second write of a create: admissionStatus(fields) on exactly the version
 * created. On 409 it reads the object again: admitted meanwhile with our uuid
 * (the reconciler was faster) is the answer; changed without being admitted (a
 * label edit) is admitted on top of that version, rather than waiting for the
 * reconciler's grace period; gone is 404.
 */
export async function admitCreated<T extends MasakariObject>(
  w: AdmissionWriter,
  ref: ResourceRef,
  created: T,
  fields: Record<string, unknown>,
): Promise<T> {
  const name = created.metadata.name ?? '';
  return retryOnConflict(CONFLICT_BACKOFF, async (attempt) => {
    const basis = attempt === 1 ? created : await getIfExists<T>(w.kube, ref, w.namespace, name);
    if (!basis || basis.metadata.uid !== created.metadata.uid) {
      throw new KubeError(404, 'NotFound', `${ref.plural}/${name} was deleted before it was admitted`);
    }
    if (basis.status?.uuid === fields.uuid) return basis;
    if (basis.status?.uuid !== undefined) {
      throw new Error(`${ref.plural}/${name} was admitted as ${basis.status.uuid} by another writer`);
    }
    const status = admissionStatus(basis, fields, w.now());
    return writeStatus(w, ref, basis, status, basis.metadata.resourceVersion);
  });
}

/** writeStatus; undefined when the object is gone (404). */
export async function writeStatusUnlessGone<T extends MasakariObject>(
  w: AdmissionWriter,
  ref: ResourceRef,
  obj: T,
  status: Record<string, unknown>,
): Promise<T | undefined> {
  try {
    return await writeStatus(w, ref, obj, status);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
