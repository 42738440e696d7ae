// resourceVersion comparison. The API contract says resourceVersions are
// opaque strings that may only be compared for equality. Every API server
// backed by etcd (all of them in practice) uses the etcd revision, a
// monotonically increasing integer shared by all resources, so when BOTH
// values parse as non-negative integers we compare them numerically; that is
// what read-your-writes and "has the cache caught up" need. When either does
// not parse, the order is unknown and callers must treat the newer event as
// authoritative (the safe default: never drop an event we cannot order).

const INTEGER = /^\d+$/;

/** -1, 0, 1 as a < b, a == b, a > b; undefined when the order is unknown. */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a === b) return 0;
  if (!INTEGER.test(a) || !INTEGER.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** True only when a is known to be strictly older than b. */
export const isOlder = (a: string | undefined, b: string | undefined): boolean => compareResourceVersions(a, b) === -1;

/** True only when a is known to be the same as or older than b. */
export const isNotNewer = (a: string | undefined, b: string | undefined): boolean => {
  const c = compareResourceVersions(a, b);
  return c === -1 || c === 0;
};

/** The later of two versions; on unknown order, the most recent observation (b). */
export function maxResourceVersion(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareResourceVersions(a, b) === 1 ? a : b;
}
