// Finalizers, added and removed with a JSON patch that first tests the
// resourceVersion we read: a concurrent writer makes the patch fail instead
// of being silently overwritten, and the reconcile retries from fresh state.
import type { JsonPatchOp, KubeClient, ResourceRef } from '../k8s/client.ts';
import { KubeError, isNotFound } from '../k8s/client.ts';

export interface FinalizerTarget {
  metadata: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
}

export const hasFinalizer = (obj: FinalizerTarget, finalizer: string): boolean =>
  (obj.metadata.finalizers ?? []).includes(finalizer);

/**
 * A failed "test" op comes back as 422 Invalid with the generic message "the
 * server rejected our request due to an error in our request" and no causes
 * (a real validation error lists its causes). Callers think of it as what it
 * is, a lost optimistic-concurrency race, so it becomes 409 Conflict.
 */
function isFailedTest(err: unknown): boolean {
  if (!(err instanceof KubeError) || err.code !== 422) return false;
  const causes = (err.body as { details?: { causes?: unknown[] } } | undefined)?.details?.causes;
  return !causes || causes.length === 0;
}

async function patchWithTest<T>(
  kube: KubeClient,
  ref: ResourceRef,
  obj: FinalizerTarget,
  ops: JsonPatchOp[],
  fieldManager?: string,
): Promise<T> {
  const { name, namespace, resourceVersion } = obj.metadata;
  if (!name) throw new KubeError(400, 'BadRequest', 'finalizer patch: object has no name');
  if (!resourceVersion) throw new KubeError(400, 'BadRequest', `finalizer patch: ${name} has no resourceVersion`);
  const guarded: JsonPatchOp[] = [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops];
  try {
    return await kube.jsonPatch<T>(ref, namespace, name, guarded, fieldManager ? { fieldManager } : undefined);
  } catch (err) {
    if (isFailedTest(err)) {
      throw new KubeError(409, 'Conflict', `${ref.plural} ${name} changed since resourceVersion ${resourceVersion}`);
    }
    throw err;
  }
}

/**
 * Adds finalizer unless present. Never adds one to an object that is being
 * deleted (that would block a delete the finalizer's owner never saw coming);
 * such an object is returned unchanged. Throws 409 Conflict if obj is stale.
 */
export async function addFinalizer<T extends FinalizerTarget>(
  kube: KubeClient,
  ref: ResourceRef,
  obj: T,
  finalizer: string,
  fieldManager?: string,
): Promise<T> {
  if (hasFinalizer(obj, finalizer) || obj.metadata.deletionTimestamp) return obj;
  const ops: JsonPatchOp[] = obj.metadata.finalizers
    ? [{ op: 'add', path: '/metadata/finalizers/-', value: finalizer }]
    : [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
  return patchWithTest<T>(kube, ref, obj, ops, fieldManager);
}

/**
 * Removes finalizer if present (testing both the resourceVersion and the
 * entry at its index). Returns the object after the write, obj itself when
 * there was nothing to remove, or undefined when the object no longer exists.
 */
export async function removeFinalizer<T extends FinalizerTarget>(
  kube: KubeClient,
  ref: ResourceRef,
  obj: T,
  finalizer: string,
  fieldManager?: string,
): Promise<T | undefined> {
  const index = (obj.metadata.finalizers ?? []).indexOf(finalizer);
  if (index < 0) return obj;
  const path = `/metadata/finalizers/${index}`;
  try {
    return await patchWithTest<T>(
      kube,
      ref,
      obj,
      [
        { op: 'test', path, value: finalizer },
        { op: 'remove', path },
      ],
      fieldManager,
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
