// One cache per (resource, namespace, selectors) in a process, however many
// components read it (client-go's SharedInformerFactory). The API's store, the
// engine and the remediator each ask for their caches here; in the default
// all-in-one process that means one list and one watch per kind instead of
// one per component (the engine's notification cache is filtered to
// unfinished notifications, so it is a second, smaller watch on that kind).
//
// Each caller gets a handle: its handlers and its stop() are its own; the
// shared informer stops when the last handle has stopped. Indexes from every
// caller are added to the one store.
import type { ResourceRef } from '../k8s/client.ts';
import { KubeInformer } from './informer.ts';
import type { InformerDeps } from './informer-deps.ts';
import type { Informer, InformerEvent, InformerHealth, InformerOptions, KubeObjectLike } from './types.ts';

export interface SharedInformerInfo {
  key: string;
  resource: string;
  namespace: string;
  labelSelector?: string;
  fieldSelector?: string;
  users: number;
  objects: number;
  health: InformerHealth;
}

interface Entry {
  informer: KubeInformer<KubeObjectLike>;
  opts: InformerOptions<KubeObjectLike>;
  handles: Set<SharedInformerHandle<KubeObjectLike>>;
}

export function sharedInformerKey(
  ref: ResourceRef,
  opts: Pick<InformerOptions<unknown>, 'namespace' | 'labelSelector' | 'fieldSelector'>,
): string {
  const resource = `${ref.plural}.${ref.group || 'core'}/${ref.version}`;
  return [resource, opts.namespace || '*', opts.labelSelector ?? '', opts.fieldSelector ?? ''].join('|');
}

export class SharedInformerFactory {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly deps: InformerDeps) {}

  /**
   * The cache for (ref, namespace, labelSelector, fieldSelector), created on
   * first use. Callers sharing a key must agree on transform, keep and the
   * timings (the first caller's win; a different transform or keep throws,
   * as it would silently change what the other reads).
   */
  informer<T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>): Informer<T> & SharedHandle {
    const key = sharedInformerKey(ref, opts);
    let entry = this.entries.get(key);
    if (entry && entry.informer.isStopped()) {
      this.entries.delete(key);
      entry = undefined;
    }
    if (!entry) {
      const informer = new KubeInformer<T>(ref, { ...opts, indexes: {} }, this.deps);
      entry = {
        informer: informer as unknown as KubeInformer<KubeObjectLike>,
        opts: opts as unknown as InformerOptions<KubeObjectLike>,
        handles: new Set(),
      };
      this.entries.set(key, entry);
    } else {
      if (opts.transform !== entry.opts.transform || opts.keep !== entry.opts.keep) {
        throw new Error(`shared informer ${key}: a second caller asked for a different transform or keep`);
      }
    }
    const typed = entry.informer as unknown as KubeInformer<T>;
    // Each caller reads its indexes under its own names, whatever other callers called theirs.
    const indexNames = new Map<string, string>();
    for (const [name, fn] of Object.entries(opts.indexes ?? {})) indexNames.set(name, typed.addIndexAs(name, fn));
    const handle = new SharedInformerHandle<T>(typed, key, indexNames, () => this.release(key, handle as never));
    entry.handles.add(handle as never);
    return handle;
  }

  /** Every shared cache, for tests, /readyz and metrics. */
  describe(): SharedInformerInfo[] {
    return [...this.entries.entries()].map(([key, e]) => {
      const [resource = '', namespace = ''] = key.split('|');
      return {
        key,
        resource,
        namespace,
        ...(e.opts.labelSelector ? { labelSelector: e.opts.labelSelector } : {}),
        ...(e.opts.fieldSelector ? { fieldSelector: e.opts.fieldSelector } : {}),
        users: e.handles.size,
        objects: e.informer.size(),
        health: e.informer.health(),
      };
    });
  }

  /** Caches whose loop died (liveness): retrying cannot help them any more. */
  crashed(): string[] {
    return this.describe()
      .filter((i) => i.health.crashed)
      .map((i) => i.key);
  }

  /** Stops every shared cache (process shutdown). */
  stopAll(): void {
    for (const e of this.entries.values()) e.informer.stop();
    this.entries.clear();
  }

  private release(key: string, handle: SharedInformerHandle<KubeObjectLike>): void {
    const entry = this.entries.get(key);
    if (!entry || !entry.handles.delete(handle)) return;
    if (entry.handles.size === 0) {
      entry.informer.stop();
      this.entries.delete(key);
    }
  }
}

export interface SharedHandle {
  /** The shared informer's key (resource|namespace|labelSelector|fieldSelector). */
  readonly sharedKey: string;
}

/** One caller's view of a shared informer: its own handlers and its own stop(). */
class SharedInformerHandle<T extends KubeObjectLike> implements Informer<T>, SharedHandle {
  private readonly mine: Array<{ event: InformerEvent; handler: (obj: T, old?: T) => void }> = [];
  private stopped = false;

  constructor(
    private readonly shared: KubeInformer<T>,
    readonly sharedKey: string,
    private readonly indexNames: Map<string, string>,
    private readonly onStop: () => void,
  ) {}

  start(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error(`informer ${this.shared.ref.plural}: start() after stop()`));
    return this.shared.start();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const { event, handler } of this.mine) this.shared.off(event, handler);
    this.mine.length = 0;
    this.onStop();
  }

  hasSynced(): boolean {
    return this.shared.hasSynced();
  }

  health(): InformerHealth {
    return this.shared.health();
  }

  get(name: string): T | undefined {
    return this.shared.get(name);
  }

  list(): T[] {
    return this.shared.list();
  }

  byIndex(index: string, value: string): T[] {
    const own = this.indexNames.get(index);
    if (!own) throw new Error(`unknown index "${index}"`);
    return this.shared.byIndex(own, value);
  }

  /**
   * As client-go: a handler added to a cache that has already synced is told
   * about every cached object as an add (on a later turn, like its other events).
   */
  on(event: InformerEvent, handler: (obj: T, old?: T) => void): void {
    if (this.stopped) return;
    this.mine.push({ event, handler });
    this.shared.on(event, handler);
    if (event === 'add' && this.shared.hasSynced()) {
      queueMicrotask(() => {
        if (this.stopped) return;
        for (const obj of this.shared.list()) {
          try {
            handler(obj);
          } catch {
            // Same rule as live events: a throwing handler does not stop the others (the informer logs those).
          }
        }
      });
    }
  }

  onRewound(handler: () => void): void {
    if (!this.stopped) this.shared.onRewound(handler);
  }

  lastResourceVersion(): string | undefined {
    return this.shared.lastResourceVersion();
  }

  upsertLocal(obj: T): void {
    this.shared.upsertLocal(obj);
  }

  deleteLocal(name: string, resourceVersion?: string): void {
    this.shared.deleteLocal(name, resourceVersion);
  }

  waitForResourceVersion(rv: string, timeoutMs: number): Promise<boolean> {
    return this.shared.waitForResourceVersion(rv, timeoutMs);
  }
}
