// FakeKube's object tracker (controller-runtime's testing.ObjectTracker):
// objects by (resource, namespace, name), one resourceVersion counter for
// all of them as etcd has, a history of changes that a watch resumes from
// (410 Gone below the compaction point), and the open watches, which are told
// about every change synchronously, before the write returns.
import { KubeError } from '../../k8s/client.ts';
import type { WatchEvent } from '../../k8s/client.ts';
import type { ObjectMeta } from '../../model/types.ts';
import { selectorMatcher } from './selectors.ts';

export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [k: string]: unknown;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Change {
  rv: number;
  plural: string;
  type: ChangeType;
  obj: StoredObject;
  old: StoredObject | undefined;
}

export interface WatchFilter {
  plural: string;
  /** undefined or '' = every namespace. */
  namespace: string | undefined;
  labelSelector?: string;
  fieldSelector?: string;
}

interface Watcher {
  filter: WatchFilter;
  matches: (obj: unknown) => boolean;
  send: (e: WatchEvent<StoredObject>) => void;
  end: () => void;
}

export const objectKey = (plural: string, namespace: string | undefined, name: string): string =>
  `${plural}/${namespace ?? ''}/${name}`;

const inNamespace = (obj: StoredObject, namespace: string | undefined): boolean =>
  !namespace || (obj.metadata.namespace ?? '') === namespace;

export class ObjectTracker {
  private readonly objects = new Map<string, StoredObject>();
  private readonly history: Change[] = [];
  private readonly watchers = new Set<Watcher>();
  /** Watches are held: changes queue here until resumeWatches (a watch that lags behind the store). */
  private held: Array<() => void> | undefined;
  private compactedAt = 0;
  rv: number;

  constructor(firstResourceVersion = 100) {
    this.rv = firstResourceVersion;
  }

  get(plural: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const o = this.objects.get(objectKey(plural, namespace, name));
    return o && structuredClone(o);
  }

  /** Objects of a resource in a namespace (every namespace when undefined), by key order. */
  list(plural: string, namespace: string | undefined, matches: (o: unknown) => boolean = () => true): StoredObject[] {
    return [...this.objects.entries()]
      .filter(([k, o]) => k.startsWith(`${plural}/`) && inNamespace(o, namespace) && matches(o))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => structuredClone(o));
  }

  /** Stores obj under a new resourceVersion and tells the watches; returns a copy. */
  put(plural: string, obj: StoredObject): StoredObject {
    const key = objectKey(plural, obj.metadata.namespace, obj.metadata.name ?? '');
    const old = this.objects.get(key);
    const stored = structuredClone(obj);
    stored.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key, stored);
    this.record({ rv: this.rv, plural, type: old ? 'MODIFIED' : 'ADDED', obj: stored, old });
    return structuredClone(stored);
  }

  remove(plural: string, obj: StoredObject): void {
    const key = objectKey(plural, obj.metadata.namespace, obj.metadata.name ?? '');
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    // A deleted object's last state, under the deletion's resourceVersion (as the API server reports it).
    const gone = { ...structuredClone(old), metadata: { ...old.metadata, resourceVersion: String(++this.rv) } };
    this.record({ rv: this.rv, plural, type: 'DELETED', obj: gone, old });
  }

  /** Forgets the history up to now: a watch resuming from an older version gets 410 Gone, as after etcd compaction. */
  compact(): void {
    this.compactedAt = this.rv;
    this.history.length = 0;
  }

  isCompacted(rv: number): boolean {
    return rv < this.compactedAt;
  }

  holdWatches(): void {
    this.held ??= [];
  }

  resumeWatches(): void {
    const queued = this.held ?? [];
    this.held = undefined;
    for (const deliver of queued) deliver();
  }

  /** Ends every open watch (the server closing its streams); watchers resume from their last version. */
  endWatches(): void {
    for (const w of [...this.watchers]) w.end();
  }

  /** Open watches, e.g. to count the caches a process keeps. */
  openWatches(): WatchFilter[] {
    return [...this.watchers].map((w) => ({ ...w.filter }));
  }

  /**
   * Opens a watch: replays the changes after fromRv (410 when compacted),
   * then streams every change until end() or the returned close function.
   */
  watch(
    filter: WatchFilter,
    fromRv: string | undefined,
    send: (e: WatchEvent<StoredObject>) => void,
    end: () => void,
  ): () => void {
    const since = fromRv ? Number(fromRv) : this.rv;
    if (fromRv && (!Number.isFinite(since) || this.isCompacted(since))) {
      throw new KubeError(410, 'Expired', `too old resource version: ${fromRv} (${this.compactedAt})`);
    }
    const watcher: Watcher = {
      filter,
      matches: selectorMatcher(filter.labelSelector, filter.fieldSelector),
      send,
      end,
    };
    for (const c of this.history) if (c.rv > since) this.deliver(watcher, c);
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private record(c: Change): void {
    this.history.push(c);
    for (const w of this.watchers) {
      const deliver = (): void => {
        if (this.watchers.has(w)) this.deliver(w, c);
      };
      if (this.held) this.held.push(deliver);
      else deliver();
    }
  }

  /** As the API server's watch cache: an object entering the selector is ADDED, one leaving it DELETED. */
  private deliver(w: Watcher, c: Change): void {
    if (c.plural !== w.filter.plural || !inNamespace(c.obj, w.filter.namespace)) return;
    const now = c.type !== 'DELETED' && w.matches(c.obj);
    const before = c.old !== undefined && w.matches(c.old);
    let type: ChangeType | undefined;
    if (c.type === 'DELETED') type = before ? 'DELETED' : undefined;
    else if (now) type = before ? 'MODIFIED' : 'ADDED';
    else if (before) type = 'DELETED';
    if (type) w.send({ type, object: structuredClone(c.obj) });
  }
}
