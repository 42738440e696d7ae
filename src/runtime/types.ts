// CONTRACT (implemented by the runtime helper in src/runtime/*.ts).
// The informer keeps a local cache of one resource type in one namespace,
// kept current by list + watch. It never does work in its callbacks; handlers
// typically only enqueue keys.

export interface KubeObjectLike {
  metadata: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    /** Read by ControllerBuilder.owns (controller-builder.ts). */
    ownerReferences?: ReadonlyArray<{ kind: string; name: string }>;
  };
}

export type InformerEvent = 'add' | 'update' | 'delete';

export interface Informer<T extends KubeObjectLike> {
  /** Lists, then watches; resolves once the first list is in the cache. */
  start(): Promise<void>;
  stop(): void;
  hasSynced(): boolean;
  /** Object by metadata.name (namespace is the informer's). */
  get(name: string): T | undefined;
  list(): T[];
  /** Secondary index lookup; indexes are declared at construction. */
  byIndex(index: string, value: string): T[];
  on(event: InformerEvent, handler: (obj: T, old?: T) => void): void;
  /** Highest resourceVersion the cache has seen (list or watch or local write). */
  lastResourceVersion(): string | undefined;
  /**
   * Read-your-writes: store an object this process just wrote. Later events
   * carrying an older resourceVersion for the same object are ignored.
   */
  upsertLocal(obj: T): void;
  /** Read-your-writes for deletes: drop it now, and ignore older events for it. */
  deleteLocal(name: string, resourceVersion?: string): void;
  /** Resolves when the cache has seen resourceVersion >= rv (or after timeoutMs, resolving false). */
  waitForResourceVersion(rv: string, timeoutMs: number): Promise<boolean>;
  /** How the list/watch is doing (test doubles may leave it out: then synced is all there is). */
  health?(): InformerHealth;
  /**
   * Called after a relist found the API server's resourceVersions older than the cache had reached
   * (etcd restored from a snapshot), once its changes were emitted. Test doubles may leave it out.
   */
  onRewound?(handler: () => void): void;
}

/** What readiness and liveness read from an informer (see informerReady and docs/operations.md). */
export interface InformerHealth {
  synced: boolean;
  /** When the current run of failed lists/watches began; undefined while the watch is healthy. */
  failingSince?: number;
  /** The last failure, for /readyz and logs. */
  lastError?: string;
  /**
   * The informer's loop ended although nobody stopped it (a bug: every API
   * error is retried). Retrying cannot help any more; liveness fails.
   */
  crashed: boolean;
  /** True while the cache is serving: synced, and not failing for longer than the staleness bound. */
  serving: boolean;
}

/** Ready to be read from: synced, and its watch not failing for long (health() decides when it has one). */
export function informerReady(i: Pick<Informer<KubeObjectLike>, 'hasSynced' | 'health'>): boolean {
  return i.health ? i.health().serving : i.hasSynced();
}

export type IndexFunc<T> = (obj: T) => string[];

export interface InformerOptions<T> {
  namespace: string;
  labelSelector?: string;
  /**
   * Server-side field selector for list and watch (e.g. on a CRD's
   * selectableFields). The API server sends DELETED when an object stops
   * matching. Pair it with `keep`, its client-side twin.
   */
  fieldSelector?: string;
  /**
   * Which objects this cache holds, checked after transform on everything
   * (listed, watched, written locally): an object that fails it is removed as
   * if deleted. Mirrors fieldSelector so local writes follow the same rule.
   */
  keep?: (obj: T) => boolean;
  indexes?: Record<string, IndexFunc<T>>;
  /**
   * Resync period: every cached object is re-announced to the handlers as an
   * update with old === obj, from the cache (client-go semantics; no request
   * to the API server). Default 10 min; 0 turns it off.
   */
  resyncMs?: number;
  /**
   * Applied to every object before it is cached (list, watch, local writes),
   * after metadata.managedFields have been dropped (no cache keeps them: on
   * small objects they are most of the memory, and no reader needs them).
   */
  transform?: (obj: T) => T;
  /** Restart a watch that delivered nothing (not even a bookmark) for this long; default 5 min. */
  watchdogMs?: number;
}

/** Outcome of one reconcile, as in controller-runtime. */
export interface ReconcileResult {
  /** Requeue after this many ms (resets the rate-limiter history for the key). */
  requeueAfterMs?: number;
}

/** Throw this from a reconciler for errors a retry cannot fix: no requeue. */
export class TerminalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TerminalError';
  }
}

export type Reconciler = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;
