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
}

export type IndexFunc<T> = (obj: T) => string[];

export interface InformerOptions<T> {
  namespace: string;
  labelSelector?: string;
  indexes?: Record<string, IndexFunc<T>>;
  /** Full relist period (a safety net against missed events); default 10 min. */
  resyncMs?: number;
  /**
   * Applied to every object before it is cached (list, watch, local writes),
   * e.g. to drop metadata.managedFields from a cache that never reads them:
   * on small objects they are most of the memory.
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
