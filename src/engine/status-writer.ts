// Durable, coalesced writes of one Notification's status.
//
// Every mutation is a function applied to a copy of the latest status; the
// result is written with PUT /status carrying metadata.resourceVersion, so a
// concurrent writer makes the API server answer 409. On 409 the writer
// re-reads the object, re-checks its guard (is this engine still the owner of
// a running notification?) and re-applies every mutation of the batch: the
// mutations are deterministic given the status (any ids and uuids they insert
// were chosen before the call), so re-applying them is safe.
//
// Mutations that arrive while a write is in flight, or within COALESCE_MS of
// each other, go out together in the next write, and each caller's promise
// resolves only when the write that carried its mutation succeeded. That is
// how three concurrent evacuations share writes instead of queueing one PUT
// per progress line.

import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { KubeError, isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { Notification, NotificationStatusBlock } from '../model/types.ts';
import { syncNotificationConditions } from '../store/conditions.ts';
import type { Clock } from './workflows/context.ts';

/** Window in which separate mutations are merged into one write. */
export const COALESCE_MS = 5;
/** 409s in a row before giving up: each means another writer changed the object in between. */
const MAX_CONFLICTS = 20;
/** Attempts for transport errors, 429 and 5xx, with exponential backoff from 200 ms (about 6 s in all). */
const MAX_TRANSIENT_ATTEMPTS = 6;

/** The engine bookkeeping kept in status.engine (typed view of an open record). */
export interface EngineBookkeeping {
  /** Fencing token of the engine process that runs the current run. */
  owner?: string;
  /** Set when the current run is the notification's last chance: an error then ends `failed` (Masakari §3.7). */
  finalAttempt?: boolean;
  /** When the first run started (RFC 3339 ms), for the recovery duration metric. */
  firstStartedAt?: string;
  /** Monotonic counter ordering effect records. */
  effectSeq?: number;
  effects?: Record<string, EffectRecord>;
  /** The reason of the last error outcome (Masakari only logs it; kept for operators). */
  lastError?: string;
}

export interface EffectRecord {
  state: 'intended' | 'done';
  at: string;
  seq: number;
  data?: Record<string, unknown>;
}

export type StatusMutation = (status: NotificationStatusBlock, engine: EngineBookkeeping) => void;
/** Returns a reason when the write must not happen (the caller lost ownership, the notification ended...). */
export type StatusGuard = (n: Notification) => string | undefined;

/** The write was refused by the guard: another engine owns the run, or the notification left `running`. */
export class NotOwnerError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'NotOwnerError';
  }
}

/** Bounded retries ran out, or the API server refused the status for good. */
export class JournalWriteError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'JournalWriteError';
  }
}

export function engineOf(status: NotificationStatusBlock): EngineBookkeeping {
  if (!status.engine || typeof status.engine !== 'object') status.engine = {};
  return status.engine as EngineBookkeeping;
}

/** Guard for a run's journal: still `running` and still owned by this token. */
export function ownsRun(token: string): StatusGuard {
  return (n) => {
    const phase = n.status?.phase ?? 'new';
    if (phase !== 'running') return `notification is now '${phase}'`;
    const owner = (n.status?.engine as EngineBookkeeping | undefined)?.owner;
    if (owner !== token) return `run taken over by ${owner ?? 'nobody'}`;
    return undefined;
  };
}

interface Pending {
  mutate: StatusMutation;
  guard: StatusGuard;
  resolve: (n: Notification) => void;
  reject: (e: unknown) => void;
}

export interface StatusWriterOptions {
  kube: KubeClient;
  namespace: string;
  initial: Notification;
  guard: StatusGuard;
  clock: Clock;
  log: Logger;
  /** Aborted when this engine must stop writing (leadership lost, shutdown, expiry). */
  signal?: AbortSignal;
  /** Called with every object this writer stored (the informer's upsertLocal). */
  onWritten?: (n: Notification) => void;
}

export class NotificationStatusWriter {
  private latest: Notification;
  private queue: Pending[] = [];
  private scheduled = false;
  private writing = false;
  private readonly name: string;

  constructor(private readonly o: StatusWriterOptions) {
    this.latest = o.initial;
    this.name = o.initial.metadata.name ?? '';
  }

  /** The first NotOwnerError or JournalWriteError a write hit: the run must stop writing. */
  fatal: NotOwnerError | JournalWriteError | undefined;

  /** Replaces the writer's copy with a newer object (e.g. from the informer). */
  reset(n: Notification): void {
    const have = Number(this.latest.metadata.resourceVersion ?? 0);
    const got = Number(n.metadata.resourceVersion ?? 0);
    if (!(got < have)) this.latest = n;
  }

  /** The object as last read or written by this writer. */
  current(): Notification {
    return this.latest;
  }

  /** Applies `mutate` durably; resolves with the stored object that includes it. */
  mutate(mutate: StatusMutation, guard: StatusGuard = this.o.guard): Promise<Notification> {
    return new Promise<Notification>((resolve, reject) => {
      this.queue.push({ mutate, guard, resolve, reject });
      this.schedule();
    });
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
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.writing = true;
    try {
      const stored = await this.writeBatch(batch);
      this.latest = stored;
      this.o.onWritten?.(stored);
      for (const p of batch) p.resolve(stored);
    } catch (err) {
      if ((err instanceof NotOwnerError || err instanceof JournalWriteError) && !this.fatal) this.fatal = err;
      for (const p of batch) p.reject(err);
    } finally {
      this.writing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async writeBatch(batch: Pending[]): Promise<Notification> {
    let conflicts = 0;
    let transient = 0;
    for (;;) {
      if (this.o.signal?.aborted) throw this.o.signal.reason ?? new NotOwnerError('writer cancelled');
      for (const p of batch) {
        const refusal = p.guard(this.latest);
        if (refusal) throw new NotOwnerError(`${this.name}: ${refusal}`);
      }
      const body = structuredClone(this.latest);
      const status = (body.status ??= {});
      const engine = engineOf(status);
      for (const p of batch) p.mutate(status, engine);
      syncNotificationConditions(body, this.o.clock.now());
      try {
        return await this.o.kube.replaceStatus<Notification>(
          RESOURCES.notifications,
          this.o.namespace,
          this.name,
          body,
          {
            fieldManager: FIELD_MANAGERS.engine,
          },
        );
      } catch (err) {
        if (isConflict(err) && ++conflicts <= MAX_CONFLICTS) {
          this.latest = await this.reread();
          continue;
        }
        if (isNotFound(err)) throw new NotOwnerError(`${this.name}: notification was deleted`);
        if (isTransient(err) && ++transient < MAX_TRANSIENT_ATTEMPTS) {
          this.o.log.warn({ err, attempt: transient }, 'status write failed; retrying');
          await this.o.clock.sleep(200 * 2 ** (transient - 1), this.o.signal);
          continue;
        }
        throw new JournalWriteError(
          `could not write status of notification ${this.name}: ${(err as Error).message}`,
          err,
        );
      }
    }
  }

  private async reread(): Promise<Notification> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.o.kube.get<Notification>(RESOURCES.notifications, this.o.namespace, this.name);
      } catch (err) {
        if (isNotFound(err)) throw new NotOwnerError(`${this.name}: notification was deleted`);
        if (!isTransient(err) || attempt >= MAX_TRANSIENT_ATTEMPTS) {
          throw new JournalWriteError(`could not re-read notification ${this.name}: ${(err as Error).message}`, err);
        }
        await this.o.clock.sleep(200 * 2 ** (attempt - 1), this.o.signal);
      }
    }
  }
}

export function isTransient(err: unknown): boolean {
  return err instanceof KubeError && (err.code === 0 || err.code === 429 || err.code >= 500);
}
