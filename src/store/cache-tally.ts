// Counts of a cache's objects by a key, kept up to date from the cache's
// events, so that a reader asking "how many of each" (a Prometheus scrape
// of the state metrics) costs the number of keys, not the number of objects.
// Iterating 100,000 cached notifications on every scrape held the api's
// event loop for tens of milliseconds, every scrape interval, on each replica:
// a stall every intake that arrived meanwhile waited out.
//
// The informer hands every handler the object a change replaces (old), so
// a change is "uncount old, count new". A resync re-announces every object
// unchanged (old === obj) and is skipped: otherwise the periodic resync
// held the event loop while the index and these counts refiled every one.
import type { Informer, KubeObjectLike } from '../runtime/types.ts';

type TalliedCache<T extends KubeObjectLike> = Pick<Informer<T>, 'list' | 'on'>;

export class CacheTally<T extends KubeObjectLike> {
  private readonly counts = new Map<string, number>();

  /** `keyOf` undefined: the object is not counted (not admitted, say). */
  constructor(
    cache: TalliedCache<T>,
    private readonly keyOf: (obj: T) => string | undefined,
  ) {
    for (const obj of cache.list()) this.count(obj, 1);
    cache.on('add', (obj) => this.count(obj, 1));
    cache.on('update', (obj, old) => {
      if (old === obj) return; // a resync: unchanged
      if (old) this.count(old, -1);
      this.count(obj, 1);
    });
    cache.on('delete', (obj, old) => this.count(old ?? obj, -1));
  }

  /** Every key with at least one object, and its count. */
  entries(): IterableIterator<[string, number]> {
    return this.counts.entries();
  }

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  private count(obj: T, delta: 1 | -1): void {
    const key = this.keyOf(obj);
    if (key === undefined) return;
    const n = (this.counts.get(key) ?? 0) + delta;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }
}

/**
 * The cache's objects that match `member`, by name, kept up to date from its
 * events: for readers that need a few objects out of many (the running
 * notifications among every stored one).
 */
export class CacheSubset<T extends KubeObjectLike> {
  private readonly members = new Map<string, T>();

  constructor(
    cache: TalliedCache<T>,
    private readonly member: (obj: T) => boolean,
  ) {
    for (const obj of cache.list()) this.put(obj);
    cache.on('add', (obj) => this.put(obj));
    cache.on('update', (obj, old) => old !== obj && this.put(obj));
    cache.on('delete', (obj, old) => this.members.delete((old ?? obj).metadata.name ?? ''));
  }

  values(): IterableIterator<T> {
    return this.members.values();
  }

  private put(obj: T): void {
    const name = obj.metadata.name ?? '';
    if (this.member(obj)) this.members.set(name, obj);
    else this.members.delete(name);
  }
}
