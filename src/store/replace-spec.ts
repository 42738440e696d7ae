// Read-modify-write of a FailoverSegment's or HaHost's spec, shared by the
// REST PUT (src/store/spec-writes.ts) and the import (src/store/import.ts):
// a replace carrying the resourceVersion read (compare-and-swap), retried on
// 409 with a fresh read (src/k8s/retry-on-conflict.ts). A rename claims the
// new Masakari name before the write; the caller releases the old one after
// it. Claims taken for a name the final write does not carry are released.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { CONFLICT_BACKOFF, retryOnConflictOr } from '../k8s/retry-on-conflict.ts';
import type { FailoverSegment, HaHost } from '../model/types.ts';
import { NotFoundInStoreError } from '../domain/repository.ts';
import type { NameClaims } from './claims.ts';
import type { ClaimKind } from './names.ts';

export interface ReplaceSpecDeps {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  fieldManager: string;
  claims: NameClaims;
}

export interface ReplaceSpecOptions {
  /**
   * Also confirm the object's own claim before each write (the import: an
   * object made before the operator ran may have none yet).
   */
  confirmOwnClaim?: boolean;
  /** The error for a deleted object or for conflicts that did not stop; default NotFoundInStoreError / Error. */
  error?: (message: string) => Error;
}

export async function replaceSpec<T extends FailoverSegment | HaHost>(
  deps: ReplaceSpecDeps,
  ref: ResourceRef,
  kind: ClaimKind,
  start: T,
  edit: (obj: T) => T['spec'],
  opts: ReplaceSpecOptions = {},
): Promise<{ updated: T; previousName: string }> {
  const { kube, namespace, claims } = deps;
  const name = start.metadata.name ?? '';
  const what = `${ref.plural}/${name}`;
  const gone = opts.error ?? ((m: string) => new NotFoundInStoreError(m));
  const owner = { name, uid: start.metadata.uid ?? '' };
  const taken = new Set<string>();
  let kept: string | undefined;
  try {
    return await retryOnConflictOr(
      CONFLICT_BACKOFF,
      async (attempt) => {
        const obj = attempt === 1 ? start : await getIfExists<T>(deps.kube, ref, deps.namespace, name);
        if (!obj || obj.metadata.uid !== start.metadata.uid) throw gone(`${what} was deleted`);
        if (obj.metadata.deletionTimestamp) throw gone(`${what} is being deleted`);
        const spec = edit(obj);
        if (opts.confirmOwnClaim) await claims.take(kind, obj.spec.name, owner);
        if (spec.name !== obj.spec.name && !taken.has(spec.name)) {
          await claims.take(kind, spec.name, owner);
          taken.add(spec.name);
        }
        // Nothing to change: no write (a replace would not bump the generation either).
        if (JSON.stringify(spec) === JSON.stringify(obj.spec)) {
          kept = obj.spec.name;
          return { updated: obj, previousName: obj.spec.name };
        }
        try {
          const updated = await kube.replace<T>(
            ref,
            namespace,
            name,
            { ...obj, spec },
            {
              fieldManager: deps.fieldManager,
            },
          );
          kept = updated.spec.name;
          return { updated, previousName: obj.spec.name };
        } catch (e) {
          if (isNotFound(e)) throw gone(`${what} was deleted`);
          throw e;
        }
      },
      () => (opts.error ?? ((m: string) => new Error(m)))(`${what}: ${CONFLICT_BACKOFF.steps} conflicting updates`),
    );
  } finally {
    // Claims taken in earlier attempts (or for a write that failed) that the final name does not need.
    for (const extra of taken) {
      if (extra === kept) continue;
      await claims.release(kind, extra, name).catch((err: unknown) => {
        deps.log.warn({ err, claim: extra }, 'could not release an unused name claim; the sweeper will');
      });
    }
  }
}
