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

import type { Logger } from 'pino';
import { NovaNotFound } from '../openstack/types.ts';
import type { NovaClient } from '../openstack/types.ts';
import type { Notification } from '../model/types.ts';
import type { EngineBookkeeping } from './status-writer.ts';

export const SERVER_LOCK_PREFIX = 'lock:';
export const SERVER_UNLOCK_PREFIX = 'unlock:';
export const serverLockKey = (serverUuid: string): string => `${SERVER_LOCK_PREFIX}${serverUuid}`;
export const serverUnlockKey = (serverUuid: string): string => `${SERVER_UNLOCK_PREFIX}${serverUuid}`;

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
 * persists the release (`lock:<uuid>` done). Failures are returned, not thrown: the next sweep retries.
 */
export async function sweepLeftoverServerLocks(
  n: Notification,
  nova: NovaClient,
  recordUnlocked: (server: string) => Promise<void>,
  log: Logger,
  opts: { requestId: string; signal?: AbortSignal },
): Promise<SweepResult> {
  const result: SweepResult = { unlocked: [], alreadyUnlocked: [], failed: [] };
  for (const server of unreleasedServerLocks(n)) {
    try {
      let locked = true;
      try {
        locked = (await nova.getServer(server, opts)).locked !== false;
      } catch (err) {
        if (!(err instanceof NovaNotFound)) throw err;
        locked = false;
      }
      if (locked) {
        await nova.unlockServer(server, opts);
        result.unlocked.push(server);
        log.info({ server }, 'unlocked a server a cancelled or interrupted run left locked');
      } else {
        result.alreadyUnlocked.push(server);
      }
      await recordUnlocked(server);
    } catch (err) {
      result.failed.push({ server, error: (err as Error).message });
      log.warn({ server, err }, 'could not release a server lock; the next sweep retries');
    }
  }
  return result;
}
