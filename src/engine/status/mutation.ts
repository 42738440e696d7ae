// What a status write of the engine carries and who may make it: a mutation
// of the status (and of the engine's bookkeeping in status.engine), the guard
// that refuses it when this engine no longer owns the run, and the two ways a
// write ends badly. The writer itself is writer.ts.
import type { Notification, NotificationStatusBlock } from '../../model/types.ts';

/** The engine bookkeeping kept in status.engine (typed view of an open record). */
export interface EngineBookkeeping {
  /** Fencing token of the engine process that runs the current run. */
  owner?: string;
  /** Set when the current run is the notification's last chance: an error then ends `failed` (masakari/engine/manager.py). */
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
