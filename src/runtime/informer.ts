// A shared-informer in the client-go mould for one resource in one
// namespace: list, then watch from the list's resourceVersion with bookmarks;
// resume from the last seen version when a watch ends; relist on 410 Gone;
// restart on any error with jittered exponential backoff; restart a watch
// that has gone silent (watchdog); relist periodically as a safety net
// against missed events. Handlers run synchronously after the cache changed
// and must only enqueue keys.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef, WatchEvent } from '../k8s/client.ts';
import { KubeError } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { Backoff, sleepUnlessAborted } from './backoff.ts';
import type { BackoffOptions } from './backoff.ts';
import { compareResourceVersions, maxResourceVersion } from './resource-version.ts';
import { ObjectStore } from './store.ts';
import type { StoreChange } from './store.ts';
import type { Informer, InformerEvent, InformerOptions, KubeObjectLike } from './types.ts';

export interface InformerDeps {
  kube: KubeClient;
  log: Logger;
  /** Server-side watch timeout; each watch gets this ±10% so replicas do not reconnect in lockstep. Default 300. */
  watchTimeoutSeconds?: number;
  /** A watch that stayed up this long counts as healthy and resets the backoff; default 30 s. */
  healthyAfterMs?: number;
  /** start() rejects if the first list has not succeeded by then (controller-runtime's CacheSyncTimeout); default 2 min. */
  syncTimeoutMs?: number;
  backoff?: BackoffOptions;
  pageSize?: number;
}

const DEFAULT_RESYNC_MS = 10 * 60_000;
const DEFAULT_WATCHDOG_MS = 5 * 60_000;

type Handler<T> = (obj: T, old?: T) => void;

export class KubeInformer<T extends KubeObjectLike> implements Informer<T> {
  private readonly store: ObjectStore<T>;
  private readonly handlers: Record<InformerEvent, Handler<T>[]> = { add: [], update: [], delete: [] };
  private readonly backoff: Backoff;
  private readonly log: Logger;
  private readonly stopper = new AbortController();
  private synced = false;
  private started: Promise<void> | undefined;
  /** Where the next watch resumes: the last list, watch event or bookmark. Never a local write. */
  private watchRv: string | undefined;
  /** Highest version seen including local writes (lastResourceVersion, waitForResourceVersion). */
  private seenRv: string | undefined;
  private needRelist = true;
  private lastListAt = 0;
  private rvWaiters: Array<{ rv: string; resolve: (ok: boolean) => void }> = [];

  constructor(
    private readonly ref: ResourceRef,
    private readonly opts: InformerOptions<T>,
    private readonly deps: InformerDeps,
  ) {
    this.log = deps.log.child({ informer: ref.plural, namespace: opts.namespace });
    this.store = new ObjectStore<T>(opts.indexes ?? {}, (index, name, err) =>
      this.log.error({ err, index, name }, 'index function threw; object left out of that index'),
    );
    this.backoff = new Backoff(deps.backoff);
  }

  /** The options' transform, if any (objects are cached as it returns them). */
  private shape(obj: T): T {
    return this.opts.transform ? this.opts.transform(obj) : obj;
  }

  start(): Promise<void> {
    if (!this.started && this.stopper.signal.aborted) {
      return Promise.reject(new Error(`informer ${this.ref.plural}: start() after stop()`));
    }
    this.started ??= new Promise<void>((resolve, reject) => {
      const timeoutMs = this.deps.syncTimeoutMs ?? 120_000;
      const timer = setTimeout(() => {
        reject(new Error(`informer ${this.ref.plural}: cache did not sync within ${timeoutMs} ms`));
        this.stop();
      }, timeoutMs);
      const onSynced = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.stopper.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        if (!this.synced) reject(new Error(`informer ${this.ref.plural}: stopped before the cache synced`));
      });
      this.run(onSynced).catch((err: unknown) => this.log.error({ err }, 'informer loop crashed'));
    });
    return this.started;
  }

  stop(): void {
    if (this.stopper.signal.aborted) return;
    this.stopper.abort();
    for (const w of this.rvWaiters) w.resolve(false);
    this.rvWaiters = [];
  }

  hasSynced(): boolean {
    return this.synced;
  }

  get(name: string): T | undefined {
    return this.store.get(name);
  }

  list(): T[] {
    return this.store.list();
  }

  byIndex(index: string, value: string): T[] {
    return this.store.byIndex(index, value);
  }

  on(event: InformerEvent, handler: Handler<T>): void {
    this.handlers[event].push(handler);
  }

  lastResourceVersion(): string | undefined {
    return this.seenRv;
  }

  upsertLocal(obj: T): void {
    this.emit(this.store.upsert(this.shape(obj), { local: true }));
    this.observe(obj.metadata.resourceVersion, false);
  }

  deleteLocal(name: string, resourceVersion?: string): void {
    this.emit(this.store.removeLocal(name, resourceVersion));
    this.observe(resourceVersion, false);
  }

  /**
   * Resolves true once lastResourceVersion() >= rv (numeric etcd revisions,
   * see resource-version.ts), false after timeoutMs or on stop. A version
   * that does not parse as an integer is reached only when seen exactly.
   */
  waitForResourceVersion(rv: string, timeoutMs: number): Promise<boolean> {
    if (this.reached(rv)) return Promise.resolve(true);
    if (this.stopper.signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => {
        this.rvWaiters = this.rvWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.rvWaiters.push(waiter);
    });
  }

  private reached(rv: string): boolean {
    const c = compareResourceVersions(this.seenRv, rv);
    return c === 0 || c === 1;
  }

  private observe(rv: string | undefined, fromServer: boolean): void {
    if (rv === undefined) return;
    if (fromServer) this.watchRv = rv;
    this.seenRv = maxResourceVersion(this.seenRv, rv);
    if (this.rvWaiters.length === 0) return;
    const still: typeof this.rvWaiters = [];
    for (const w of this.rvWaiters) {
      if (this.reached(w.rv)) w.resolve(true);
      else still.push(w);
    }
    this.rvWaiters = still;
  }

  private emit(change: StoreChange<T> | undefined): void {
    if (!change) return;
    for (const handler of this.handlers[change.type]) {
      try {
        handler(change.obj, change.old);
      } catch (err) {
        this.log.error({ err, event: change.type, name: change.obj.metadata.name }, 'informer handler threw');
      }
    }
  }

  private async run(onSynced: () => void): Promise<void> {
    const signal = this.stopper.signal;
    const resyncMs = this.opts.resyncMs ?? DEFAULT_RESYNC_MS;
    while (!signal.aborted) {
      try {
        const resync = this.synced && Date.now() - this.lastListAt >= resyncMs;
        if (this.needRelist || resync) {
          await this.relist(resync && !this.needRelist);
          if (!this.synced) {
            this.synced = true;
            onSynced();
          }
        }
        await this.watchOnce(signal, resyncMs);
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof KubeError && err.code === 410) {
          // The resume point was compacted away: relist at once (no backoff for the first one).
          this.log.info({ rv: this.watchRv }, 'watch resourceVersion expired; relisting');
          this.needRelist = true;
          if (this.backoff.attempts === 0) {
            this.backoff.next();
            continue;
          }
        }
        const delay = this.backoff.next();
        this.log.warn({ err, delayMs: delay, attempt: this.backoff.attempts }, 'list/watch failed; retrying');
        await sleepUnlessAborted(delay, signal);
      }
    }
  }

  /** A full list replaces the cache: vanished objects are announced as deletes. */
  private async relist(periodic: boolean): Promise<void> {
    const list = await listAllPages<T>(
      this.deps.kube,
      this.ref,
      this.opts.namespace,
      { labelSelector: this.opts.labelSelector },
      this.deps.pageSize,
    );
    const rv = list.metadata.resourceVersion;
    const changes = this.store.replaceAll(
      list.items.map((o) => this.shape(o)),
      rv,
    );
    const changed = new Set(changes.map((c) => c.obj.metadata.name));
    for (const c of changes) this.emit(c);
    if (periodic) {
      // client-go resync semantics: unchanged objects are re-announced as updates (old === obj).
      for (const obj of this.store.list())
        if (!changed.has(obj.metadata.name)) this.emit({ type: 'update', obj, old: obj });
    }
    this.needRelist = false;
    this.lastListAt = Date.now();
    this.observe(rv, true);
    this.log.debug({ rv, items: list.items.length, changes: changes.length, periodic }, 'listed');
  }

  /**
   * One watch from watchRv, until the server ends it (timeoutSeconds), the
   * watchdog sees silence, the resync period is due, or the informer stops.
   */
  private async watchOnce(stop: AbortSignal, resyncMs: number): Promise<void> {
    const local = new AbortController();
    const signal = AbortSignal.any([stop, local.signal]);
    const watchdogMs = this.opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    let lastHeard = Date.now();
    let silent = false;
    const watchdog = setInterval(
      () => {
        if (Date.now() - lastHeard > watchdogMs) {
          silent = true;
          local.abort();
        }
        if (Date.now() - this.lastListAt >= resyncMs) local.abort();
      },
      Math.max(10, Math.min(watchdogMs, resyncMs) / 4),
    );
    const base = this.deps.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.max(1, Math.round(base * (0.9 + 0.2 * Math.random())));
    const startedAt = Date.now();
    try {
      await this.deps.kube.watch<T>(
        this.ref,
        this.opts.namespace,
        {
          resourceVersion: this.watchRv,
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: this.opts.labelSelector,
        },
        (e) => {
          lastHeard = Date.now();
          this.onWatchEvent(e);
        },
        signal,
      );
    } finally {
      clearInterval(watchdog);
    }
    if (silent) {
      throw new KubeError(0, 'Timeout', `watch ${this.ref.plural} silent for ${watchdogMs} ms; restarting`);
    }
    if (Date.now() - startedAt >= (this.deps.healthyAfterMs ?? 30_000)) this.backoff.reset();
    else if (!stop.aborted && !local.signal.aborted) {
      // Ended early without an error (a proxy closing idle streams?): pace reconnects like failures.
      await sleepUnlessAborted(this.backoff.next(), stop);
    }
  }

  private onWatchEvent(e: WatchEvent<T>): void {
    const rv = e.object?.metadata?.resourceVersion;
    switch (e.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.emit(this.store.upsert(this.shape(e.object)));
        break;
      case 'DELETED':
        this.emit(this.store.removeObserved(this.shape(e.object)));
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR':
        // KubeClient.watch rejects right after delivering this; the run loop handles it.
        return;
    }
    this.observe(rv, true);
  }
}

/** The factory shape the store and the engine take (InformerFactory). */
export function createInformerFactory(deps: InformerDeps) {
  return <T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>): KubeInformer<T> =>
    new KubeInformer<T>(ref, opts, deps);
}
