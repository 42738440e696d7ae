// Why a run's signal aborts, and what is left to do once it stopped. A run
// handed over (lost Lease, engine stopping) keeps status `running` for the
// next leader, which resumes it; a graceful stop, which still holds the
// Lease, unlocks its servers first. An expired run was already written
// `failed` by the expiry task; its locks are released here.

import type { Logger } from 'pino';
import type { NovaClient } from '../../openstack/types.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { statusWriterFor } from '../status/writer-for.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import type { LeadershipTerm } from '../deps/leadership-term.ts';
import { refreshFromCache, sweepExpiredRunLocks, sweepRunServerLocks } from './server-lock-sweep.ts';
import { ownsRun } from '../status/writer.ts';
import type { NotificationStatusWriter } from '../status/writer.ts';

/** Abort reason when the expiry task cancels a run. */
export class NotificationExpired extends Error {
  constructor(uuid: string) {
    super(`Notification ${uuid} is expired.`);
    this.name = 'NotificationExpired';
  }
}

/** Abort reason when leadership is lost or the engine stops: the run is handed over, not ended. */
export class HandedOver extends Error {
  constructor(
    why: string,
    /** Graceful stop while still holding the Lease: release the run's server locks before letting go. */
    public readonly releaseLocks = false,
  ) {
    super(why);
    this.name = 'HandedOver';
  }
}

/** How long a graceful stop may spend unlocking the servers of a cancelled run. */
const RELEASE_LOCKS_TIMEOUT_MS = 15_000;

export interface CancelledRun {
  n: AdmittedNotification;
  token: string;
  writer: NotificationStatusWriter;
  signal: AbortSignal;
  log: Logger;
  requestId: string;
  nova: NovaClient | undefined;
}

/** What is left to do after a run was cancelled, by the reason its signal carries. */
export async function afterCancel(
  d: ProcessorDeps,
  term: LeadershipTerm | undefined,
  run: CancelledRun,
): Promise<void> {
  const { token, writer, signal, log, requestId, nova } = run;
  const reason: unknown = signal.reason;
  if (reason instanceof HandedOver && reason.releaseLocks) {
    const deadline = AbortSignal.timeout(RELEASE_LOCKS_TIMEOUT_MS);
    const releaser = statusWriterFor(d, writer, ownsRun(token), deadline, log);
    await refreshFromCache(d, releaser);
    await sweepRunServerLocks(d, releaser, { log, requestId, signal: deadline, nova }).catch((err) =>
      log.warn({ err }, 'could not release locks at shutdown'),
    );
    log.info('run handed over at shutdown; the servers it had locked were unlocked');
    return;
  }
  if (!(reason instanceof NotificationExpired)) {
    log.info(
      { reason: reason instanceof Error ? reason.message : String(reason) },
      'run cancelled; it resumes on the next leader',
    );
    return;
  }
  if (!term) return;
  await sweepExpiredRunLocks(d, writer, { log, requestId, signal: term.signal, nova });
}
