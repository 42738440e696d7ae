// Never leave a server locked. The host-failure workflow locks each server it
// evacuates (Masakari host_failure.py, N11). Its journal convention
// (src/engine/workflows/evacuate-instance.ts): the effect `lock:<server uuid>`
// is recorded `intended` BEFORE the lock call and marked `done` AFTER the
// unlock. So `lock:<uuid>` still `intended` means "this notification may hold
// that server's lock". An engine killed or cancelled in between leaves such a
// record behind, and the engine core sweeps: when a run is resumed (before the
// workflow re-enters), when a run ends (a safety net if the workflow's own
// unlock failed), and after an expired run was cancelled.
//
// An `unlock:<uuid>` record `done` that is newer (journal sequence) than the
// lock record also counts as released. For an unreleased lock the sweep asks
// Nova first, unlocks only a server that is still locked, then marks
// `lock:<uuid>` done as the workflow would have.
//
// Every unlock, the workflow's and the sweep's, is unlockWithRetry: bounded
// attempts with backoff, each bounded by the run's signal and its own timeout.
// A lock that survives them stays `intended` in the journal, and the engine
// core ends the run `error` naming the server (run/executor.ts), never
// `finished`: Masakari's unlock_server raises (masakari/compute/nova.py), so
// its host-failure flow fails and the periodic task retries the notification
// (masakari/engine/drivers/taskflow/host_failure.py _evacuate_and_confirm).

import type { Logger } from 'pino';
import { backoffDelays } from '../../k8s/retry-on-conflict.ts';
import type { Backoff } from '../../k8s/retry-on-conflict.ts';
import { NovaNotFound } from '../../openstack/types.ts';
import type { NovaClient } from '../../openstack/types.ts';
import type { Notification } from '../../model/types.ts';
import type { Clock } from '../../time/clock.ts';
import type { EngineBookkeeping } from '../status/writer.ts';

export const SERVER_LOCK_PREFIX = 'lock:';
export const SERVER_UNLOCK_PREFIX = 'unlock:';
export const serverLockKey = (serverUuid: string): string => `${SERVER_LOCK_PREFIX}${serverUuid}`;
export const serverUnlockKey = (serverUuid: string): string => `${SERVER_UNLOCK_PREFIX}${serverUuid}`;

/**
 * Unlock calls per server before the lock counts as left behind, and the waits
 * between them: 200 ms doubling to a 5 s cap, without jitter (about 16 s of
 * waiting over all attempts). The project's one backoff shape (client-go's
 * wait.Backoff, src/k8s/retry-on-conflict.ts).
 */
const UNLOCK_BACKOFF: Readonly<Backoff> = Object.freeze({ steps: 8, delayMs: 200, factor: 2, jitter: 0, capMs: 5_000 });
export const UNLOCK_ATTEMPTS = UNLOCK_BACKOFF.steps;
/** How long one unlock attempt may take, within the run's own signal. */
export const UNLOCK_ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Unlocks a server, retrying up to UNLOCK_ATTEMPTS times. Each attempt ends
 * with the run's signal or after UNLOCK_ATTEMPT_TIMEOUT_MS; once the signal is
 * aborted no attempt follows (whoever takes the run over sweeps). Throws the
 * last error when every attempt failed.
 */
export async function unlockWithRetry(
  nova: NovaClient,
  server: string,
  clock: Clock,
  o: { requestId: string; signal: AbortSignal },
): Promise<void> {
  let lastError: unknown;
  for (const delay of [0, ...backoffDelays(UNLOCK_BACKOFF)]) {
    if (delay > 0) await clock.sleep(delay, o.signal).catch(() => undefined);
    if (o.signal.aborted) break;
    try {
      await nova.unlockServer(server, {
        requestId: o.requestId,
        signal: AbortSignal.any([o.signal, AbortSignal.timeout(UNLOCK_ATTEMPT_TIMEOUT_MS)]),
      });
      return;
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError ?? o.signal.reason;
}

/** Servers whose `lock:` record is still `intended` and has no newer `unlock:` record. */
export function unreleasedServerLocks(n: Notification): string[] {
  const effects = (n.status?.engine as EngineBookkeeping | undefined)?.effects ?? {};
  const out: string[] = [];
  for (const [key, rec] of Object.entries(effects)) {
    if (!key.startsWith(SERVER_LOCK_PREFIX) || rec.state !== 'intended') continue;
    const server = key.slice(SERVER_LOCK_PREFIX.length);
    const unlock = effects[serverUnlockKey(server)];
    if (!unlock || unlock.state !== 'done' || unlock.seq < rec.seq) out.push(server);
  }
  return out.sort();
}

export interface SweepResult {
  unlocked: string[];
  alreadyUnlocked: string[];
  failed: Array<{ server: string; error: string }>;
}

/**
 * Unlocks every server this notification may have left locked. `recordUnlocked`
 * persists the release (`lock:<uuid>` done). Failures (after unlockWithRetry's
 * attempts) are returned, not thrown: the caller decides what the run's end is.
 */
export async function sweepLeftoverServerLocks(
  n: Notification,
  nova: NovaClient,
  recordUnlocked: (server: string) => Promise<void>,
  log: Logger,
  opts: { requestId: string; signal: AbortSignal; clock: Clock },
): Promise<SweepResult> {
  const result: SweepResult = { unlocked: [], alreadyUnlocked: [], failed: [] };
  for (const server of unreleasedServerLocks(n)) {
    try {
      let locked = true;
      try {
        locked = (await nova.getServer(server, { requestId: opts.requestId, signal: opts.signal })).locked !== false;
      } catch (err) {
        if (!(err instanceof NovaNotFound)) throw err;
        locked = false;
      }
      if (locked) {
        await unlockWithRetry(nova, server, opts.clock, opts);
        result.unlocked.push(server);
        log.info({ server }, 'unlocked a server a cancelled or interrupted run left locked');
      } else {
        result.alreadyUnlocked.push(server);
      }
      await recordUnlocked(server);
    } catch (err) {
      result.failed.push({ server, error: (err as Error).message });
      log.warn({ server, err }, 'could not release a server lock');
    }
  }
  return result;
}
