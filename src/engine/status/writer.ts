// Durable, coalesced writes of one Notification's status.
//
// Every mutation is a function applied to a copy of the latest (assembled)
// status. The writer then derives what is to be stored: history a journal
// page already holds is left out, and when the object would exceed its byte
// budget (src/engine/status/budget.ts) settled history moves into new pages
// first (src/store/journal-pages.ts). The status goes out as a JSON patch of
// only what changed, on the status subresource, carrying
// metadata.resourceVersion (src/engine/status/patch.ts), so a concurrent
// writer makes the API server answer 409. On 409 the writer re-reads the object (and its pages, when the
// other writer added some), re-checks its guard (is this engine still the
// owner of a running notification?) and re-applies every mutation of the
// batch: the mutations are deterministic given the status (any ids and uuids
// they insert were chosen before the call), so re-applying them is safe.
//
// Mutations that arrive while a write is in flight, or within COALESCE_MS of
// each other, go out together in the next write, and each caller's promise
// resolves only when the write that carried its mutation succeeded. That is
// how three concurrent evacuations share writes instead of queueing one
// write per progress line.
//
// Journal entries nobody waits on (a task's RUNNING state, the REVERTED of a
// failed flow) are applied with the next write instead of one of their own
// (mutateLater), or after DEFERRED_WRITE_MS when none comes: the task's first
// progress line or the run's final status carries them. A run whose Nova call
// fails at once (an instance Nova does not know) is then two writes, its
// claim and its final status, not four.

import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { isAlreadyExists, isNotFound, isTransient } from '../../k8s/client.ts';
import {
  backoffDelay,
  CONFLICT_BACKOFF,
  isStaleWrite,
  lostRace,
  retryOnConflictOr,
  retryOnError,
  TRANSIENT_BACKOFF,
} from '../../k8s/retry-on-conflict.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import type { Notification, NotificationStatusBlock } from '../../model/types.ts';
import type { JournalPage } from '../../store/index.ts';
import {
  assembleNotification,
  countedPages,
  notificationUuidOf,
  pageObject,
  readPages,
  syncNotificationConditions,
} from '../../store/index.ts';
import type { PageIndex, StatusBudget } from './budget.ts';
import { HARD_OBJECT_LIMIT, jsonBytes, pageIndex, spill, STATUS_BUDGET, storedStatus } from './budget.ts';
import { statusPatch } from './patch.ts';
import type { Clock } from '../../time/clock.ts';
import type { StatusGuard, StatusMutation } from './mutation.ts';
import { engineOf, JournalWriteError, NotOwnerError } from './mutation.ts';

/** Window in which separate mutations are merged into one write. */
export const COALESCE_MS = 5;
/** The longest a mutateLater mutation waits for a write to carry it before it gets its own. */
export const DEFERRED_WRITE_MS = 1_000;

export type { EffectRecord, EngineBookkeeping, StatusGuard, StatusMutation } from './mutation.ts';
export { engineOf, JournalWriteError, NotOwnerError, ownsRun } from './mutation.ts';

interface Pending {
  mutate: StatusMutation;
  guard: StatusGuard;
  resolve: (n: Notification) => void;
  reject: (e: unknown) => void;
}

export interface StatusWriterOptions {
  kube: KubeClient;
  namespace: string;
  /** The object as stored (e.g. from the informer); its pages are read by load() or before the first write. */
  initial: Notification;
  /** The pages of `initial` when already known (a writer taking over from another one). */
  pages?: readonly JournalPage[];
  guard: StatusGuard;
  clock: Clock;
  log: Logger;
  /** Aborted when this engine must stop writing (leadership lost, shutdown, expiry). */
  signal?: AbortSignal;
  /** Called with every object this writer stored, as stored (the informer's upsertLocal). */
  onWritten?: (n: Notification) => void;
  /** Called once, with the first NotOwnerError or JournalWriteError (see `fatal`): the run must stop. */
  onFatal?: (err: NotOwnerError | JournalWriteError) => void;
  /** Default STATUS_BUDGET. */
  budget?: StatusBudget;
}

export class NotificationStatusWriter {
  /** The object as last stored (or read): what the API server holds. */
  private stored: Notification;
  /** `stored` with its pages put back: the whole status the workflows see. */
  private latest: Notification;
  private pages: JournalPage[];
  private pagesLoaded: boolean;
  /** What the pages hold, computed once per set of pages (not at every write). */
  private index: { counted: number; pages: number; index: PageIndex } | undefined;
  private queue: Pending[] = [];
  /** mutateLater mutations, in call order: they go out first in the next batch. */
  private deferred: Pending[] = [];
  private deferredTimer: ReturnType<typeof setTimeout> | undefined;
  /** current() with the deferred mutations applied, for the `latest` and deferred count it was made from. */
  private deferredView: { base: Notification; applied: number; view: Notification } | undefined;
  private scheduled = false;
  private writing = false;
  private readonly name: string;

  constructor(private readonly options: StatusWriterOptions) {
    this.stored = options.initial;
    this.pages = [...(options.pages ?? [])];
    this.pagesLoaded = options.pages !== undefined || countedPages(options.initial.status) === 0;
    this.latest = assembleNotification(options.initial, this.pages);
    this.name = options.initial.metadata.name ?? '';
  }

  /** The first NotOwnerError or JournalWriteError a write hit: the run must stop writing. */
  fatal: NotOwnerError | JournalWriteError | undefined;

  /** Reads the notification's journal pages, if it has any this writer has not read yet. */
  async load(): Promise<void> {
    if (this.pagesLoaded && countedPages(this.stored.status) <= this.pages.length) return;
    this.pages = await this.withTransientRetries('read the journal pages of', () =>
      readPages(this.options.kube, this.options.namespace, notificationUuidOf(this.stored)),
    );
    this.pagesLoaded = true;
    this.latest = assembleNotification(this.stored, this.pages);
  }

  /** The journal pages this writer knows (to hand over to another writer of the same notification). */
  journalPages(): readonly JournalPage[] {
    return this.pages;
  }

  /** The object as the API server holds it (status without what the pages hold). */
  storedObject(): Notification {
    return this.stored;
  }

  /** Replaces the writer's copy with a newer stored object (e.g. from the informer). */
  reset(n: Notification): void {
    const have = Number(this.stored.metadata.resourceVersion ?? 0);
    const got = Number(n.metadata.resourceVersion ?? 0);
    if (got < have) return;
    this.stored = n;
    if (countedPages(n.status) > this.pages.length) this.pagesLoaded = false;
    this.latest = assembleNotification(n, this.pages);
  }

  /**
   * The object as last read or written by this writer, with its whole status
   * (pages included) and the mutateLater mutations not written yet.
   */
  current(): Notification {
    if (this.deferred.length === 0) return this.latest;
    if (this.deferredView?.base !== this.latest || this.deferredView.applied !== this.deferred.length) {
      const status = structuredClone(this.latest.status ?? {});
      const engine = engineOf(status);
      for (const p of this.deferred) p.mutate(status, engine);
      this.deferredView = { base: this.latest, applied: this.deferred.length, view: { ...this.latest, status } };
    }
    return this.deferredView.view;
  }

  /** Applies `mutate` durably; resolves with the stored object that includes it (whole status). */
  mutate(mutate: StatusMutation, guard: StatusGuard = this.options.guard): Promise<Notification> {
    return new Promise<Notification>((resolve, reject) => {
      this.queue.push({ mutate, guard, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Applies `mutate` with the next write, whatever carries it, or on its own
   * after DEFERRED_WRITE_MS. For journal entries nothing waits on; it is not
   * durable when this returns, and a failure of its write is the failure of
   * the write that carried it (or, on its own, only logged).
   */
  mutateLater(mutate: StatusMutation): void {
    const ignore = () => undefined;
    this.deferred.push({ mutate, guard: this.options.guard, resolve: ignore, reject: ignore });
    this.deferredTimer ??= setTimeout(() => {
      this.deferredTimer = undefined;
      if (this.deferredDue()) this.schedule();
    }, DEFERRED_WRITE_MS);
    this.deferredTimer.unref?.();
  }

  /** Deferred mutations waiting for no timer of their own, in a run still going: they are written now. */
  private deferredDue(): boolean {
    return this.deferred.length > 0 && !this.deferredTimer && !this.options.signal?.aborted;
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      void this.flush();
    }, COALESCE_MS);
  }

  private async flush(): Promise<void> {
    const batch = [...this.deferred, ...this.queue];
    this.deferred = [];
    this.queue = [];
    if (this.deferredTimer) clearTimeout(this.deferredTimer);
    this.deferredTimer = undefined;
    if (batch.length === 0) return;
    this.writing = true;
    try {
      const whole = await this.writeBatch(batch);
      for (const p of batch) p.resolve(whole);
    } catch (err) {
      if ((err instanceof NotOwnerError || err instanceof JournalWriteError) && !this.fatal) {
        this.fatal = err;
        this.options.onFatal?.(err);
      }
      for (const p of batch) p.reject(err);
    } finally {
      this.writing = false;
      // A mutateLater whose wait ran out during this write found it busy: it goes now.
      if (this.queue.length > 0 || this.deferredDue()) this.schedule();
    }
  }

  /** One batch: on 409 (another writer changed the object) re-read and re-apply, on the one conflict backoff. */
  private async writeBatch(batch: Pending[]): Promise<Notification> {
    return retryOnConflictOr(
      CONFLICT_BACKOFF,
      async (attempt) => {
        if (attempt > 1) this.reset(await this.reread());
        return this.writeBatchOnce(batch);
      },
      (last) =>
        new JournalWriteError(`could not write status of notification ${this.name}: ${(last as Error).message}`, last),
      { sleep: (ms) => this.options.clock.sleep(ms, this.options.signal) },
    );
  }

  /** One write of the batch on the latest object; transient errors retried here, a conflict thrown to writeBatch. */
  private async writeBatchOnce(batch: Pending[]): Promise<Notification> {
    let transient = 0;
    for (;;) {
      if (this.options.signal?.aborted) throw this.options.signal.reason ?? new NotOwnerError('writer cancelled');
      try {
        await this.load();
      } catch (err) {
        if (isNotFound(err)) throw new NotOwnerError(`${this.name}: notification was deleted`);
        throw err;
      }
      for (const p of batch) {
        const refusal = p.guard(this.latest);
        if (refusal) throw new NotOwnerError(`${this.name}: ${refusal}`);
      }
      const whole = structuredClone(this.latest.status ?? {});
      const engine = engineOf(whole);
      for (const p of batch) p.mutate(whole, engine);
      syncNotificationConditions(whole, this.options.clock.now(), this.latest.metadata.generation);
      try {
        const { status, pages } = this.budgeted(whole);
        for (const page of pages) await this.writePage(page);
        const patch = statusPatch(
          this.stored.status as Record<string, unknown> | undefined,
          status as Record<string, unknown>,
          this.stored.metadata.resourceVersion,
        );
        const stored = await this.options.kube.jsonPatch<Notification>(
          RESOURCES.notifications,
          this.options.namespace,
          this.name,
          patch,
          { fieldManager: FIELD_MANAGERS.engine, status: true },
        );
        this.pages.push(...pages);
        this.stored = stored;
        this.latest = assembleNotification(stored, this.pages);
        this.options.onWritten?.(stored);
        return this.latest;
      } catch (err) {
        if (err instanceof JournalWriteError || isStaleWrite(err)) throw err;
        if (isNotFound(err)) throw new NotOwnerError(`${this.name}: notification was deleted`);
        if (isTransient(err) && ++transient < TRANSIENT_BACKOFF.steps) {
          this.options.log.warn({ err, attempt: transient }, 'status write failed; retrying');
          await this.options.clock.sleep(backoffDelay(TRANSIENT_BACKOFF, transient - 1), this.options.signal);
          continue;
        }
        throw new JournalWriteError(
          `could not write status of notification ${this.name}: ${(err as Error).message}`,
          err,
        );
      }
    }
  }

  /** The status to store for `whole`: without what pages hold, and under the byte budget. */
  private budgeted(whole: NotificationStatusBlock): { status: NotificationStatusBlock; pages: JournalPage[] } {
    const budget = this.options.budget ?? STATUS_BUDGET;
    const overhead = jsonBytes({ ...this.stored, status: undefined });
    const counted = countedPages(whole);
    if (this.index?.counted !== counted || this.index.pages !== this.pages.length) {
      this.index = { counted, pages: this.pages.length, index: pageIndex(this.pages, counted) };
    }
    const result = spill(storedStatus(whole, this.pages, this.index.index), overhead, budget);
    const bytes = overhead + jsonBytes(result.status);
    if (bytes > HARD_OBJECT_LIMIT) {
      throw new JournalWriteError(
        `notification ${this.name}: its status would be ${bytes} bytes even with its history in journal pages ` +
          `(limit ${HARD_OBJECT_LIMIT}); not written`,
      );
    }
    return result;
  }

  /**
   * Creates one page. A page with this seq may exist already without being
   * counted (a status write after its create failed): it is replaced.
   */
  private async writePage(page: JournalPage): Promise<void> {
    const body = pageObject(this.stored, page);
    if (jsonBytes(body) > HARD_OBJECT_LIMIT) {
      throw new JournalWriteError(`notification ${this.name}: journal page ${page.seq} would exceed the object limit`);
    }
    try {
      await this.options.kube.create(RESOURCES.configMaps, this.options.namespace, body, {
        fieldManager: FIELD_MANAGERS.engine,
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Counted by another writer meanwhile: never overwrite it; start over from the newer status.
      const fresh = await this.reread();
      if (countedPages(fresh.status) > page.seq) {
        throw lostRace(`journal page ${page.seq} of ${this.name} was written by another writer`);
      }
      await this.options.kube.replace(RESOURCES.configMaps, this.options.namespace, body.metadata.name ?? '', body, {
        fieldManager: FIELD_MANAGERS.engine,
      });
    }
  }

  private async reread(): Promise<Notification> {
    try {
      return await this.withTransientRetries('re-read', () =>
        this.options.kube.get<Notification>(RESOURCES.notifications, this.options.namespace, this.name),
      );
    } catch (err) {
      if (isNotFound(err)) throw new NotOwnerError(`${this.name}: notification was deleted`);
      throw err;
    }
  }

  private async withTransientRetries<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await retryOnError(TRANSIENT_BACKOFF, (e) => isTransient(e) && !isNotFound(e), call, {
        sleep: (ms) => this.options.clock.sleep(ms, this.options.signal),
      });
    } catch (err) {
      if (isNotFound(err)) throw err;
      throw new JournalWriteError(`could not ${what} notification ${this.name}: ${(err as Error).message}`, err);
    }
  }
}
