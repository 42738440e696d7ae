// Releasing the Nova server locks a run left behind (src/engine/nova/server-locks.ts
// finds and unlocks them): before a resumed run re-enters its workflow, after
// every run, when a graceful stop hands a run over, and when the expiry task
// ends a run. Each unlock is journalled, so a sweep that is interrupted
// resumes where it stopped. What a sweep could not release is returned (the
// executor then ends the run `error`) and counted in masakari_servers_left_locked.

import type { Logger } from 'pino';
import type { Notification } from '../../model/types.ts';
import type { NovaClient } from '../../openstack/types.ts';
import { phaseOf } from '../intake/admitted-notification.ts';
import { EVENT_REASONS } from '../telemetry/event-reasons.ts';
import { recordServersLeftLocked } from '../telemetry/metrics.ts';
import { serverLockKey, sweepLeftoverServerLocks, unreleasedServerLocks } from '../nova/server-locks.ts';
import { statusWriterFor } from '../status/writer-for.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import type { NotificationStatusWriter, StatusGuard } from '../status/writer.ts';

export interface SweepScope {
  log: Logger;
  requestId: string;
  signal: AbortSignal;
  nova: NovaClient | undefined;
}

/**
 * Unlocks the servers the notification's journal says are still locked,
 * journalling each unlock; returns the servers it could not unlock.
 */
export async function sweepRunServerLocks(
  d: ProcessorDeps,
  writer: NotificationStatusWriter,
  o: SweepScope,
): Promise<string[]> {
  await writer.load();
  const current = writer.current();
  const uuid = current.status?.uuid ?? current.metadata.name ?? '';
  const held = unreleasedServerLocks(current);
  if (!o.nova || held.length === 0) {
    recordServersLeftLocked(uuid, held);
    return held;
  }
  const result = await sweepLeftoverServerLocks(
    current,
    o.nova,
    async (server) => {
      await writer.mutate((_s, e) => {
        const seq = (e.effectSeq ?? 0) + 1;
        e.effectSeq = seq;
        const effects = (e.effects ??= {});
        const data = { ...effects[serverLockKey(server)]?.data, unlockedBy: 'engine-sweep' };
        effects[serverLockKey(server)] = { state: 'done', at: d.clock.now().toISOString(), seq, data };
      });
    },
    o.log,
    { requestId: o.requestId, signal: o.signal, clock: d.clock },
  );
  if (result.unlocked.length > 0) {
    d.events.onNotification(
      writer.current(),
      'Normal',
      EVENT_REASONS.serversUnlocked,
      `Unlocked servers left locked by an interrupted run: ${result.unlocked.join(', ')}`,
    );
  }
  if (result.failed.length > 0) {
    d.events.onNotification(
      writer.current(),
      'Warning',
      EVENT_REASONS.unlockFailed,
      `Could not unlock servers this recovery locked (the run ends error and is retried): ${result.failed.map((f) => `${f.server}: ${f.error}`).join('; ')}`,
    );
  }
  const left = result.failed.map((f) => f.server);
  recordServersLeftLocked(uuid, left);
  return left;
}

/** Only an expired (failed) notification's locks are swept this way: any other phase means someone else owns it. */
const stillFailed: StatusGuard = (x) => (phaseOf(x) === 'failed' ? undefined : `notification is '${phaseOf(x)}'`);

/**
 * After the expiry task wrote `failed`: unlock what the ended run had locked.
 * `from` is the notification as cached, or the writer of the run (its journal
 * pages are taken over).
 */
export async function sweepExpiredRunLocks(
  d: ProcessorDeps,
  from: Notification | NotificationStatusWriter,
  o: SweepScope,
): Promise<void> {
  const sweeper = statusWriterFor(d, from, stillFailed, o.signal, o.log);
  await refreshFromCache(d, sweeper);
  await sweepRunServerLocks(d, sweeper, o);
}

/** Points a writer at the cache's newest version of its notification (it may have changed since the writer was made). */
export async function refreshFromCache(d: ProcessorDeps, w: NotificationStatusWriter): Promise<void> {
  const latest = d.notifications.get(w.storedObject().metadata.name ?? '');
  if (latest) w.reset(latest);
}
