// The cache half of an informer: the objects (an ObjectStore with its
// indexes), the handlers that hear every change, the process's own writes
// put in before their watch event (upsertLocal, deleteLocal) and the
// versions seen. Keeping it in step with the API server (list, watch,
// backoff, health) is the other half, KubeInformer in informer.ts.
import type { Logger } from 'pino';
import type { ResourceRef } from '../k8s/client.ts';
import { ObjectStore } from './store.ts';
import type { StoreChange } from './store.ts';
import type { IndexFunc, InformerEvent, InformerOptions, KubeObjectLike } from './types.ts';
import { VersionWaiters } from './version-waiters.ts';

type Handler<T> = (obj: T, old?: T) => void;

/** Drops metadata.managedFields (server-side-apply bookkeeping): no cache keeps them. */
export function withoutManagedFields<T extends KubeObjectLike>(obj: T): T {
  const meta = obj.metadata as T['metadata'] & { managedFields?: unknown };
  if (!meta || meta.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = meta;
  return { ...obj, metadata };
}

export abstract class InformerCache<T extends KubeObjectLike> {
  protected readonly store: ObjectStore<T>;
  protected readonly versions = new VersionWaiters();
  private readonly handlers: Record<InformerEvent, Handler<T>[]> = { add: [], update: [], delete: [] };
  private readonly rewoundHandlers: Array<() => void> = [];

  constructor(
    readonly ref: ResourceRef,
    protected readonly opts: InformerOptions<T>,
    protected readonly log: Logger,
  ) {
    this.store = new ObjectStore<T>(opts.indexes ?? {}, (index, name, err) =>
      this.log.error({ err, index, name }, 'index function threw; object left out of that index'),
    );
  }

  get(name: string): T | undefined {
    return this.store.get(name);
  }

  list(): T[] {
    return this.store.list();
  }

  /** Objects cached now. */
  size(): number {
    return this.store.size;
  }

  byIndex(index: string, value: string): T[] {
    return this.store.byIndex(index, value);
  }

  /** More secondary indexes, e.g. from a second component sharing this cache. */
  addIndexes(indexes: Record<string, IndexFunc<T>>): void {
    this.store.addIndexes(indexes);
  }

  /**
   * Adds index `name` (or finds it, when the same function is already there)
   * and returns the name it is stored under: another caller's different
   * index of the same name keeps its own, and this one gets a suffix.
   */
  addIndexAs(name: string, fn: IndexFunc<T>): string {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? name : `${name}#${n}`;
      const existing = this.store.indexer(candidate);
      if (existing === fn) return candidate;
      if (!existing) {
        this.store.addIndexes({ [candidate]: fn });
        return candidate;
      }
    }
  }

  on(event: InformerEvent, handler: Handler<T>): void {
    this.handlers[event].push(handler);
  }

  /** Called after a relist found the API server's history older than this cache's (an etcd restore), its changes emitted. */
  onRewound(handler: () => void): void {
    this.rewoundHandlers.push(handler);
  }

  /** Tells the onRewound handlers; one that throws does not stop the others. */
  protected announceRewound(): void {
    for (const handler of this.rewoundHandlers) {
      try {
        handler();
      } catch (err) {
        this.log.error({ err }, 'rewound handler threw');
      }
    }
  }

  off(event: InformerEvent, handler: Handler<T>): void {
    this.handlers[event] = this.handlers[event].filter((h) => h !== handler);
  }

  lastResourceVersion(): string | undefined {
    return this.versions.seen;
  }

  /**
   * Resolves true once lastResourceVersion() >= rv (numeric etcd revisions,
   * see resource-version.ts), false after timeoutMs or on stop. A version
   * that does not parse as an integer is reached only when seen exactly.
   */
  waitForResourceVersion(rv: string, timeoutMs: number): Promise<boolean> {
    return this.versions.wait(rv, timeoutMs);
  }

  upsertLocal(obj: T): void {
    const shaped = this.shape(obj);
    const name = shaped.metadata.name ?? '';
    if (this.kept(shaped)) this.emit(this.store.upsert(shaped, { local: true }));
    else if (name) {
      // announced as the watch would: the copy that left the cache is the one just written
      const removed = this.store.removeLocal(name, shaped.metadata.resourceVersion);
      if (removed) this.emit({ type: 'delete', obj: shaped, old: removed.obj });
    }
    this.versions.observe(obj.metadata.resourceVersion);
  }

  deleteLocal(name: string, resourceVersion?: string): void {
    this.emit(this.store.removeLocal(name, resourceVersion));
    this.versions.observe(resourceVersion);
  }

  /** managedFields dropped, then the options' transform (objects are cached as this returns them). */
  protected shape(obj: T): T {
    const slim = withoutManagedFields(obj);
    return this.opts.transform ? this.opts.transform(slim) : slim;
  }

  protected kept(obj: T): boolean {
    return this.opts.keep ? this.opts.keep(obj) : true;
  }

  protected emit(change: StoreChange<T> | undefined): void {
    if (!change) return;
    for (const handler of this.handlers[change.type]) {
      try {
        handler(change.obj, change.old);
      } catch (err) {
        this.log.error({ err, event: change.type, name: change.obj.metadata.name }, 'informer handler threw');
      }
    }
  }
}
