// A shared-informer in the client-go mould for one resource in one
// namespace: a paged list, then a watch from the list's resourceVersion with
// bookmarks; resume from the last seen version when a watch ends or the
// connection drops; relist (in pages) only on 410 Gone or an error answer;
// jittered exponential backoff between failures; restart a watch that has
// gone silent (watchdog). The periodic resync re-announces the cache to the
// handlers and never asks the API server. Handlers run synchronously after
// the cache changed and must only enqueue keys.
//
// The first sync is retried for as long as it takes (start() resolves once it
// succeeds); health() tells readiness when the list/watch keeps failing, and
// liveness when the loop itself has died (the one case a restart can fix).
import type { ResourceRef, WatchEvent } from '../k8s/client.ts';
import type { InformerDeps } from './informer-deps.ts';
import { KubeError } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { BackoffManager, RECONNECT_BACKOFF, sleepUnlessAborted } from './backoff.ts';
import { isOlder } from './resource-version.ts';
import { InformerCache } from './informer-cache.ts';
import type { Informer, InformerHealth, InformerOptions, KubeObjectLike } from './types.ts';
import { systemClock } from '../time/clock.ts';
import type { Clock } from '../time/clock.ts';

const DEFAULT_RESYNC_MS = 10 * 60_000;
const DEFAULT_WATCHDOG_MS = 5 * 60_000;
/** Server-side timeout of the first watch after a failed list/watch (see afterFailure). */
const SHORT_WATCH_SECONDS = 10;
export const DEFAULT_STALE_AFTER_MS = 60_000;
/** A 410 this soon after the previous one is paced by the backoff instead of relisting at once. */
const EXPIRED_AGAIN_MS = 10_000;

export { withoutManagedFields } from './informer-cache.ts';

export class KubeInformer<T extends KubeObjectLike> extends InformerCache<T> implements Informer<T> {
  private readonly backoff: BackoffManager;
  private readonly clock: Clock;

  private readonly stopper = new AbortController();
  private synced = false;
  private started: Promise<void> | undefined;
  /** Where the next watch resumes: the last list, watch event or bookmark. Never a local write. */
  private watchRv: string | undefined;
  private needRelist = true;
  /**
   * The last list/watch failed: the API server may have restarted. The next
   * watch is then a short one (SHORT_WATCH_SECONDS), so a watch opened on a
   * server that was still starting, which may stay silent, is replaced by a
   * new one from the same resourceVersion within seconds instead of at the
   * watchdog (minutes); the new one replays anything missed. A starting
   * API server can replace a custom resource's storage under watches that
   * are already open (when its CRD informer sees the CRD change), and those
   * watches then stay open without events (kubernetes/kubernetes#71138).
   * Found by the chaos suite: a replica's notification cache stayed at
   * `running` after restart-apiserver while the CRs were `finished`.
   */
  private afterFailure = false;
  /** When the last watch answered 410 (its resourceVersion expired). */
  private lastExpiredAt: number | undefined;
  private failingSince: number | undefined;
  private lastError: string | undefined;
  private crashed = false;
  private resyncTimer: NodeJS.Timeout | undefined;
  /** The API server refused opts.fieldSelector (a CRD without selectableFields): filter with keep alone. */
  private fieldSelectorRefused = false;

  constructor(
    ref: ResourceRef,
    opts: InformerOptions<T>,
    private readonly deps: InformerDeps,
  ) {
    super(
      ref,
      opts,
      deps.log.child({ informer: ref.plural, namespace: opts.namespace, fieldSelector: opts.fieldSelector }),
    );
    this.clock = deps.clock ?? systemClock;
    this.backoff = new BackoffManager({ ...RECONNECT_BACKOFF, ...deps.backoff }, deps.backoff?.random);
  }

  start(): Promise<void> {
    if (!this.started && this.stopper.signal.aborted) {
      return Promise.reject(new Error(`informer ${this.ref.plural}: start() after stop()`));
    }
    this.started ??= new Promise<void>((resolve, reject) => {
      const warnAfter = this.deps.slowSyncWarnMs ?? 120_000;
      const slow = setTimeout(
        () =>
          this.log.warn(
            { waitedMs: warnAfter, lastError: this.lastError },
            'cache has not synced yet; still retrying (readiness stays false until it does)',
          ),
        warnAfter,
      ).unref(); // this timer and the watch's two below only time I/O that keeps the process alive itself
      const onSynced = (): void => {
        clearTimeout(slow);
        resolve();
      };
      this.stopper.signal.addEventListener('abort', () => {
        clearTimeout(slow);
        if (!this.synced) reject(new Error(`informer ${this.ref.plural}: stopped before the cache synced`));
      });
      this.run(onSynced).catch((err: unknown) => {
        this.crashed = true;
        this.lastError = errorText(err);
        this.log.error({ err }, 'informer loop crashed; liveness fails so the process is restarted');
      });
      const resyncMs = this.opts.resyncMs ?? DEFAULT_RESYNC_MS;
      if (resyncMs > 0) {
        this.resyncTimer = setInterval(() => this.resync(), resyncMs);
        this.resyncTimer.unref();
      }
    });
    return this.started;
  }

  stop(): void {
    if (this.stopper.signal.aborted) return;
    this.stopper.abort();
    clearInterval(this.resyncTimer);
    this.versions.stop();
  }

  isStopped(): boolean {
    return this.stopper.signal.aborted;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  health(now = this.nowMs()): InformerHealth {
    const staleAfter = this.deps.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    const stale = this.failingSince !== undefined && now - this.failingSince >= staleAfter;
    return {
      synced: this.synced,
      ...(this.failingSince !== undefined ? { failingSince: this.failingSince } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      crashed: this.crashed,
      serving: this.synced && !stale && !this.crashed,
    };
  }

  /** A version the server sent: where the next watch resumes. */
  private observe(rv: string | undefined): void {
    if (rv === undefined) return;
    this.watchRv = rv;
    this.versions.observe(rv);
  }

  private nowMs(): number {
    return this.clock.now().getTime();
  }

  /** client-go resync: every cached object is re-announced as an update with old === obj; no API request. */
  private resync(): void {
    if (!this.synced || this.stopper.signal.aborted) return;
    for (const obj of this.store.list()) this.emit({ type: 'update', obj, old: obj });
  }

  private failed(err: unknown): void {
    this.failingSince ??= this.nowMs();
    this.lastError = errorText(err);
  }

  private healthy(): void {
    this.failingSince = undefined;
  }

  private fieldSelector(): string | undefined {
    return this.fieldSelectorRefused ? undefined : this.opts.fieldSelector;
  }

  /** 400 "field label not supported": only worth a fallback when keep can do the filtering here. */
  private refusesFieldSelector(err: unknown): boolean {
    return (
      !this.fieldSelectorRefused &&
      !!this.opts.fieldSelector &&
      !!this.opts.keep &&
      err instanceof KubeError &&
      err.code === 400 &&
      /field label|field selector|fieldSelector/i.test(err.message)
    );
  }

  private async run(onSynced: () => void): Promise<void> {
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      try {
        if (this.needRelist) {
          await this.relist();
          if (!this.synced) {
            this.synced = true;
            onSynced();
          }
        }
        await this.watchOnce(signal);
      } catch (err) {
        if (signal.aborted) break;
        this.failed(err);
        this.afterFailure = true;
        const code = err instanceof KubeError ? err.code : 0;
        if (this.refusesFieldSelector(err)) {
          this.log.warn(
            { err, fieldSelector: this.opts.fieldSelector },
            'the API server does not support this field selector (CRD without selectableFields?); listing everything and filtering here',
          );
          this.fieldSelectorRefused = true;
          this.needRelist = true;
          continue;
        }
        // An error answer (403 after an RBAC change, 500, ...) may mean events were missed: relist.
        // A dropped connection or a silent watch resumes from watchRv (a 410 then relists).
        if (code >= 400) this.needRelist = true;
        if (code === 410) {
          // The resume point was compacted away. The server answered, so it is
          // up, whatever failed before (an API server restart escalates the
          // backoff to tens of seconds, and the first watch after it often
          // gets this 410): relist at once, with the backoff started afresh.
          // Only a 410 soon after another is paced, so a server that keeps
          // answering 410 is not listed in a tight loop.
          this.log.info({ rv: this.watchRv }, 'watch resourceVersion expired; relisting');
          const now = this.nowMs();
          const repeated = this.lastExpiredAt !== undefined && now - this.lastExpiredAt < EXPIRED_AGAIN_MS;
          this.lastExpiredAt = now;
          if (!repeated) {
            this.backoff.reset();
            this.backoff.next();
            continue;
          }
        }
        const delay = this.backoff.next();
        this.log.warn(
          { err, delayMs: delay, attempt: this.backoff.attempts, relist: this.needRelist },
          'list/watch failed; retrying',
        );
        await sleepUnlessAborted(delay, signal);
      }
    }
  }

  /**
   * A paged full list replaces the cache wholesale: vanished objects are
   * announced as deletes, listed ones replace the cached copy whatever its
   * version. A list older than where the watch had got to means etcd's
   * history went backwards (a restore from backup): then not even this
   * process's own recent writes are kept.
   */
  private async relist(): Promise<void> {
    // Shaped (no managedFields) and filtered page by page: with 100,000
    // objects the API server's full copies would not fit the heap all at once.
    const list = await listAllPages<T>(
      this.deps.kube,
      this.ref,
      this.opts.namespace,
      { labelSelector: this.opts.labelSelector, fieldSelector: this.fieldSelector() },
      this.deps.pageSize,
      (o) => {
        const shaped = this.shape(o);
        return this.kept(shaped) ? shaped : undefined;
      },
    );
    const rv = list.metadata.resourceVersion;
    const historyRewound = isOlder(rv, this.watchRv);
    if (historyRewound) {
      this.log.warn({ listRv: rv, watchRv: this.watchRv }, 'resourceVersion went backwards (etcd restored?)');
    }
    const items = list.items;
    const changes = this.store.replaceAll(items, rv, { historyRewound });
    for (const c of changes) this.emit(c);
    this.needRelist = false;
    this.healthy();
    if (historyRewound) {
      this.watchRv = rv;
      this.versions.rewind(rv);
      this.announceRewound();
    } else {
      this.observe(rv);
    }
    this.log.debug({ rv, items: items.length, changes: changes.length }, 'listed');
  }

  /**
   * One watch from watchRv, until the server ends it (timeoutSeconds), the
   * watchdog sees silence, or the informer stops.
   */
  private async watchOnce(stop: AbortSignal): Promise<void> {
    const local = new AbortController();
    const signal = AbortSignal.any([stop, local.signal]);
    const watchdogMs = this.opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    const healthyAfterMs = this.deps.healthyAfterMs ?? 30_000;
    let lastHeard = this.nowMs();
    let silent = false;
    const watchdog = setInterval(
      () => {
        if (this.nowMs() - lastHeard > watchdogMs) {
          silent = true;
          local.abort();
        }
      },
      Math.max(10, watchdogMs / 4),
    ).unref();
    // A watch that has stayed up a while is working, even if nothing changed.
    const upForAWhile = setTimeout(() => {
      this.backoff.reset();
      this.healthy();
    }, healthyAfterMs).unref();
    const base = this.deps.watchTimeoutSeconds ?? 300;
    const short = this.afterFailure;
    const timeoutSeconds = short
      ? Math.min(base, SHORT_WATCH_SECONDS)
      : Math.max(1, Math.round(base * (0.9 + 0.2 * Math.random())));
    const startedAt = this.nowMs();
    try {
      await this.deps.kube.watch<T>(
        this.ref,
        this.opts.namespace,
        {
          resourceVersion: this.watchRv,
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.fieldSelector(),
        },
        (e) => {
          lastHeard = this.nowMs();
          this.onWatchEvent(e);
        },
        signal,
      );
    } finally {
      clearInterval(watchdog);
      clearTimeout(upForAWhile);
    }
    if (silent) {
      throw new KubeError(0, 'Timeout', `watch ${this.ref.plural} silent for ${watchdogMs} ms; restarting`);
    }
    if (short) {
      // The short watch after a failure ran its course: the server is up; resume (from watchRv) at full length.
      this.afterFailure = false;
      this.backoff.reset();
      this.healthy();
      return;
    }
    if (this.nowMs() - startedAt >= healthyAfterMs) {
      this.backoff.reset();
      this.healthy();
    } else if (!stop.aborted) {
      // Ended early without an error (a proxy closing idle streams?): pace reconnects like failures.
      await sleepUnlessAborted(this.backoff.next(), stop);
    }
  }

  private onWatchEvent(e: WatchEvent<T>): void {
    const rv = e.object?.metadata?.resourceVersion;
    switch (e.type) {
      case 'ADDED':
      case 'MODIFIED': {
        this.healthy();
        const shaped = this.shape(e.object);
        this.emit(this.kept(shaped) ? this.store.upsert(shaped) : this.store.removeObserved(shaped));
        break;
      }
      case 'DELETED':
        this.healthy();
        this.emit(this.store.removeObserved(this.shape(e.object)));
        break;
      case 'BOOKMARK':
        this.healthy();
        break;
      case 'ERROR':
        // KubeClient.watch rejects right after delivering this; the run loop handles it.
        return;
    }
    this.observe(rv);
  }
}

function errorText(err: unknown): string {
  if (err instanceof KubeError) return `${err.code} ${err.reason}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
