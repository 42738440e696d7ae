// A status write as a JSON patch (RFC 6902) of only what changed, with the
// resourceVersion the change was computed against as its precondition.
//
// The first op sets metadata.resourceVersion to the version the writer read:
// the API server then refuses the patch with 409 Conflict when the object has
// changed since, exactly as for a PUT carrying that resourceVersion. JSON
// patch rather than merge patch because a merge patch cannot set a value to
// null (it means "delete"), and the journal stores nulls (a vmove's
// dest_host, an intent's target).
//
// Objects are compared member by member, recursively; an array that kept its
// length or grew is compared element by element, with new elements appended
// (progress lines, new vmoves); anything else that differs is replaced whole
// ("add" on an existing member replaces it).

import type { JsonPatchOp } from '../../k8s/client.ts';
import type { NotificationStatusBlock } from '../../model/types.ts';
import { statusAsStored, withoutSealMarker } from '../../store/index.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

/** RFC 6901 escaping of one path segment. */
const segment = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');

function diff(from: Record<string, unknown>, to: Record<string, unknown>, path: string, ops: JsonPatchOp[]): void {
  for (const k of Object.keys(from)) {
    if (from[k] !== undefined && to[k] === undefined) ops.push({ op: 'remove', path: `${path}/${segment(k)}` });
  }
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    const old = from[k];
    if (old !== undefined && same(old, v)) continue;
    const at = `${path}/${segment(k)}`;
    if (isObject(old) && isObject(v)) diff(old, v, at, ops);
    else if (Array.isArray(old) && Array.isArray(v) && v.length >= old.length) diffArray(old, v, at, ops);
    else ops.push({ op: 'add', path: at, value: v });
  }
}

/** An array that kept its length or grew: changed elements in place, new ones appended ("-"). */
function diffArray(from: unknown[], to: unknown[], path: string, ops: JsonPatchOp[]): void {
  for (let i = 0; i < from.length; i++) {
    const a = from[i];
    const b = to[i];
    if (same(a, b)) continue;
    if (isObject(a) && isObject(b)) diff(a, b, `${path}/${i}`, ops);
    else if (Array.isArray(a) && Array.isArray(b) && b.length >= a.length) diffArray(a, b, `${path}/${i}`, ops);
    else ops.push({ op: 'replace', path: `${path}/${i}`, value: b });
  }
  for (let i = from.length; i < to.length; i++) ops.push({ op: 'add', path: `${path}/-`, value: to[i] });
}

/**
 * The ops turning status `from` into `to` on an object at `resourceVersion`.
 * With nothing to change, the patch only restates the resourceVersion: the
 * API server stores nothing new, but still answers 409 when the object
 * changed meanwhile (or 404 when it is gone), so a write of nothing still
 * checks that what the writer holds is current.
 */
export function statusPatch(
  from: Record<string, unknown> | undefined,
  to: Record<string, unknown>,
  resourceVersion: string | undefined,
): JsonPatchOp[] {
  // `from` may be a seal's view (src/store/admission/seal.ts): the API server holds no status yet, so the
  // first write stores all of `to`, its admission included, and never the view's marker.
  const stored = statusAsStored(from as NotificationStatusBlock | undefined) as Record<string, unknown> | undefined;
  const next = withoutSealMarker(to as NotificationStatusBlock) as Record<string, unknown>;
  const ops: JsonPatchOp[] = [];
  if (stored === undefined) ops.push({ op: 'add', path: '/status', value: next });
  else diff(stored, next, '/status', ops);
  if (resourceVersion === undefined) return ops;
  return [{ op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops];
}
