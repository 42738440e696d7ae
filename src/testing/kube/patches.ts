// The two patch formats FakeKube applies: JSON merge patch (RFC 7386) and
// JSON patch (RFC 6902, the ops KubeClient sends), with the API server's
// answers to a bad patch (422).
import { KubeError } from '../../k8s/client.ts';
import type { JsonPatchOp } from '../../k8s/client.ts';

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

const unescape = (k: string): string => k.replace(/~1/g, '/').replace(/~0/g, '~');

/** Applies ops to doc in place and returns it; a missing parent or a failed test is a 422, as on the API server. */
export function applyJsonPatch<T>(doc: T, ops: JsonPatchOp[]): T {
  for (const o of ops) {
    const keys = o.path.split('/').slice(1).map(unescape);
    const last = keys.pop() ?? '';
    let parent = doc as unknown as Record<string, unknown>;
    for (const k of keys) {
      if (typeof parent[k] !== 'object' || parent[k] === null) {
        throw new KubeError(422, 'Invalid', `path ${o.path} does not exist`);
      }
      parent = parent[k] as Record<string, unknown>;
    }
    if (o.op === 'test') {
      if (JSON.stringify(parent[last]) !== JSON.stringify(o.value)) {
        throw new KubeError(422, 'Invalid', `test of ${o.path} failed`);
      }
    } else if (o.op === 'remove') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (Array.isArray(parent)) {
      if (last === '-') parent.push(structuredClone(o.value));
      else if (o.op === 'add') parent.splice(Number(last), 0, structuredClone(o.value));
      else parent[Number(last)] = structuredClone(o.value);
    } else parent[last] = structuredClone(o.value);
  }
  return doc;
}
