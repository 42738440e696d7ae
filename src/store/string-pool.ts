// One copy of the strings, condition lists and such that many cached
// objects repeat (src/store/slim-notification.ts, slim-host.ts). JSON
// parsing gives every object its own copy of every string; a cache of
// 100,000 notifications and 10,000 hosts repeats its uuids, names, kinds and
// condition texts hundreds of thousands of times. Cached objects are only
// ever replaced, never changed in place (src/runtime/informer.ts), so
// sharing between them is safe.
import type { Condition } from '../model/types.ts';
import { compact } from './compact-object.ts';

/**
 * Distinct strings the pool holds before it starts again. Bounded so strings
 * of deleted objects cannot pile up; starting again only costs sharing for
 * strings first seen afterwards.
 */
const POOL_LIMIT = 50_000;
const pool = new Map<string, string>();

export function shared<T extends string | undefined | null>(s: T): T {
  if (typeof s !== 'string') return s;
  const found = pool.get(s);
  if (found !== undefined) return found as T;
  if (pool.size >= POOL_LIMIT) pool.clear();
  pool.set(s, s);
  return s;
}

/** The values shared, but those of `unique` keys (one object's own: pooling them would only cost pool entries). */
export function sharedValues(
  o: Record<string, string> | undefined,
  unique?: ReadonlySet<string>,
): Record<string, string> | undefined {
  if (!o) return o;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) out[k] = unique?.has(k) ? v : shared(v);
  return compact(out);
}

const sharedCondition = (c: Condition): Condition =>
  compact({
    ...c,
    type: shared(c.type),
    status: shared(c.status),
    reason: shared(c.reason),
    message: shared(c.message),
    lastTransitionTime: shared(c.lastTransitionTime),
  });

/**
 * Condition lists seen recently, by their JSON: notifications that reached
 * the same state in the same second (a storm's, or a restore's), and hosts
 * admitted alike, carry equal lists, an array and an object each that one
 * copy serves. Bounded, as the string pool is.
 */
const CONDITIONS_POOL_LIMIT = 5_000;
const conditionLists = new Map<string, Condition[]>();

export function sharedConditions(list: Condition[]): Condition[] {
  const key = JSON.stringify(list);
  const found = conditionLists.get(key);
  if (found !== undefined) return found;
  if (conditionLists.size >= CONDITIONS_POOL_LIMIT) conditionLists.clear();
  const kept = list.map(sharedCondition);
  conditionLists.set(key, kept);
  return kept;
}
