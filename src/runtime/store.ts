// The informer's cache: objects by name, secondary indexes, and the
// read-your-writes bookkeeping that lets a process put its own writes in the
// cache before the watch delivers them without a late, older event undoing
// them. Pure and synchronous; the informer feeds it list and watch results.
import type { IndexFunc, InformerEvent, KubeObjectLike } from './types.ts';
import { isNotNewer, isOlder } from './resource-version.ts';
import { systemNowMs } from '../time/clock.ts';

export interface StoreChange<T> {
  type: InformerEvent;
  obj: T;
  old?: T;
}

/** A locally deleted object's last known version; older events for it are dropped. */
interface Tombstone {
  resourceVersion: string | undefined;
  at: number;
}

/** Tombstones outlive any plausible watch lag, then go (a safety net; most are cleared by events). */
const TOMBSTONE_TTL_MS = 10 * 60_000;

const nameOf = (obj: KubeObjectLike): string => obj.metadata.name ?? '';
const rvOf = (obj: KubeObjectLike | undefined): string | undefined => obj?.metadata.resourceVersion;

export class ObjectStore<T extends KubeObjectLike> {
  private readonly objects = new Map<string, T>();
  private readonly tombstones = new Map<string, Tombstone>();
  /**
   * index name → index value → the name of the one object filed under it, or
   * the names when there are several. Most values (uuid, id, fingerprint) name
   * one object: a Set each would cost more than the object's other entries.
   * Where an object is filed is not stored either: it is recomputed from the
   * cached object when it changes or goes (as client-go's indexer does), so
   * the per-object cost of an index is one map entry.
   */
  private readonly indexed = new Map<string, Map<string, string | Set<string>>>();

  /** index name → function (a copy: addIndexes extends it). */
  private readonly indexers: Record<string, IndexFunc<T>>;

  constructor(
    indexers: Record<string, IndexFunc<T>> = {},
    private readonly onIndexError: (index: string, name: string, err: unknown) => void = () => undefined,
    private readonly now: () => number = systemNowMs,
  ) {
    this.indexers = { ...indexers };
    for (const index of Object.keys(indexers)) this.indexed.set(index, new Map());
  }

  get size(): number {
    return this.objects.size;
  }

  get(name: string): T | undefined {
    return this.objects.get(name);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  names(): string[] {
    return [...this.objects.keys()];
  }

  byIndex(index: string, value: string): T[] {
    const values = this.indexed.get(index);
    if (!values) throw new Error(`unknown index "${index}"`);
    const filed = values.get(value);
    if (filed === undefined) return [];
    const out: T[] = [];
    for (const name of typeof filed === 'string' ? [filed] : filed) {
      const obj = this.objects.get(name);
      if (obj) out.push(obj);
    }
    return out;
  }

  /**
   * Stores obj unless the cache already holds the same or a newer version, or
   * this process deleted it at the same or a newer version. Returns the
   * change to announce, or undefined when nothing changed.
   */
  upsert(obj: T, o: { local?: boolean } = {}): StoreChange<T> | undefined {
    const name = nameOf(obj);
    if (!name) return undefined;
    const rv = rvOf(obj);
    const tomb = this.liveTombstone(name);
    if (tomb && isNotNewer(rv, tomb.resourceVersion)) return undefined;
    const old = this.objects.get(name);
    // A local write at the same version as the cached object replaces it: the
    // watch may deliver an object before its writer has the response, and the
    // writer's copy may carry more (e.g. a view of a status being written).
    if (old && (o.local ? isOlder(rv, rvOf(old)) : isNotNewer(rv, rvOf(old)))) return undefined;
    this.tombstones.delete(name);
    this.objects.set(name, obj);
    this.reindex(name, old, obj);
    return old ? { type: 'update', obj, old } : { type: 'add', obj };
  }

  /**
   * A DELETED watch event (final state in obj). Ignored when the cache holds
   * a newer incarnation (re-created and stored locally after this delete).
   */
  removeObserved(obj: T): StoreChange<T> | undefined {
    const name = nameOf(obj);
    this.tombstones.delete(name);
    const cached = this.objects.get(name);
    if (!cached || isOlder(rvOf(obj), rvOf(cached))) return undefined;
    this.drop(name);
    return { type: 'delete', obj, old: cached };
  }

  /**
   * This process deleted the object: drop it now and ignore any event at or
   * below resourceVersion (default: the cached version) that is still in flight.
   */
  removeLocal(name: string, resourceVersion?: string): StoreChange<T> | undefined {
    const cached = this.objects.get(name);
    const rv = resourceVersion ?? rvOf(cached);
    this.tombstones.set(name, { resourceVersion: rv, at: this.now() });
    if (!cached) return undefined;
    this.drop(name);
    return { type: 'delete', obj: cached };
  }

  /**
   * Replaces the contents wholesale with a full list taken at snapshot
   * listRv: every listed object is stored as listed (whatever its cached
   * version), every cached object missing from the list is deleted. The one
   * exception is this process's own writes newer than the snapshot (local
   * upserts and deletes made while the list was in flight): the list simply
   * predates them, and the watch from listRv will confirm them.
   *
   * `historyRewound` (the list is older than what the watch had reached: etcd
   * was restored from a backup) drops that exception too. Versions from
   * before the restore mean nothing any more, so nothing cached survives
   * unless the list has it.
   */
  replaceAll(items: T[], listRv: string | undefined, o: { historyRewound?: boolean } = {}): StoreChange<T>[] {
    const keepNewer = !o.historyRewound;
    const changes: StoreChange<T>[] = [];
    // Which names the list has matters only for what was cached before it: a
    // first list (a cold start: 100,000 notifications) builds no set of them.
    const listed = this.objects.size || this.tombstones.size ? new Set<string>() : undefined;
    for (const item of items) {
      const name = nameOf(item);
      if (!name) continue;
      listed?.add(name);
      const rv = rvOf(item);
      const cached = this.objects.get(name);
      if (keepNewer) {
        const tomb = this.liveTombstone(name);
        if (tomb && isOlder(listRv, tomb.resourceVersion) && isNotNewer(rv, tomb.resourceVersion)) continue;
        if (cached && isOlder(listRv, rvOf(cached))) continue;
      }
      this.tombstones.delete(name);
      if (cached && rvOf(cached) === rv) continue;
      this.objects.set(name, item);
      this.reindex(name, cached, item);
      changes.push(cached ? { type: 'update', obj: item, old: cached } : { type: 'add', obj: item });
    }
    if (!listed) return changes;
    // A Map may lose entries while it is iterated: no copy of 100,000 pairs.
    for (const [name, cached] of this.objects) {
      if (listed.has(name) || (keepNewer && isOlder(listRv, rvOf(cached)))) continue;
      this.drop(name);
      changes.push({ type: 'delete', obj: cached });
    }
    for (const [name, tomb] of this.tombstones) {
      if (!keepNewer || listed.has(name) || !isOlder(listRv, tomb.resourceVersion)) this.tombstones.delete(name);
    }
    return changes;
  }

  /** The function behind an index, if it exists. */
  indexer(index: string): IndexFunc<T> | undefined {
    return this.indexers[index];
  }

  /** Adds secondary indexes after construction and files every cached object under them (client-go AddIndexers). */
  addIndexes(indexers: Record<string, IndexFunc<T>>): void {
    for (const [index, fn] of Object.entries(indexers)) {
      const existing = this.indexers[index];
      if (existing === fn) continue;
      if (existing) throw new Error(`index "${index}" is already defined differently`);
      this.indexers[index] = fn;
      this.indexed.set(index, new Map());
    }
    for (const [name, obj] of this.objects) this.reindex(name, obj, obj);
  }

  private liveTombstone(name: string): Tombstone | undefined {
    const tomb = this.tombstones.get(name);
    if (tomb && this.now() - tomb.at > TOMBSTONE_TTL_MS) {
      this.tombstones.delete(name);
      return undefined;
    }
    return tomb;
  }

  private drop(name: string): void {
    const cached = this.objects.get(name);
    this.objects.delete(name);
    this.reindex(name, cached, undefined);
  }

  /** The values obj is filed under in one index (none when its function throws). */
  private valuesOf(index: string, fn: IndexFunc<T>, name: string, obj: T, report: boolean): string[] {
    try {
      const values = fn(obj);
      // Most index functions give one value or none; a Set only where repeats are possible.
      if (values.length < 2 || (values.length === 2 && values[0] !== values[1])) return values;
      return [...new Set(values)];
    } catch (err) {
      if (report) this.onIndexError(index, name, err);
      return [];
    }
  }

  /** Moves `name` from where `old` is filed to where `obj` is (either may be absent). */
  private reindex(name: string, old: T | undefined, obj: T | undefined): void {
    for (const index in this.indexers) {
      const fn = this.indexers[index]!;
      const byValue = this.indexed.get(index)!;
      const before = old ? this.valuesOf(index, fn, name, old, false) : [];
      const after = obj ? this.valuesOf(index, fn, name, obj, true) : [];
      for (const v of before) {
        if (after.includes(v)) continue;
        const filed = byValue.get(v);
        if (filed === name) byValue.delete(v);
        else if (typeof filed === 'object') {
          filed.delete(name);
          if (filed.size === 1) byValue.set(v, filed.values().next().value as string);
          else if (filed.size === 0) byValue.delete(v);
        }
      }
      for (const v of after) {
        const filed = byValue.get(v);
        if (filed === undefined) byValue.set(v, name);
        else if (typeof filed === 'string') {
          if (filed !== name) byValue.set(v, new Set([filed, name]));
        } else filed.add(name);
      }
    }
  }
}
