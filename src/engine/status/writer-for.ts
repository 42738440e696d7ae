// The one way the engine's parts get a status writer for a notification: from
// the notification as cached, or taking over from another writer of it, with
// every write fed back into the engine's cache.

import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import type { Notification } from '../../model/types.ts';
import type { Informer } from '../../runtime/types.ts';
import type { Clock } from '../../time/clock.ts';
import { NotificationStatusWriter } from './writer.ts';
import type { JournalWriteError, NotOwnerError, StatusGuard } from './writer.ts';

/** What a status writer needs of the engine's dependencies (deps/processor-deps.ts ProcessorDeps has it). */
export interface StatusWriterDeps {
  kube: KubeClient;
  namespace: string;
  clock: Clock;
  notifications: Pick<Informer<Notification>, 'upsertLocal'>;
}

/** A status writer for a notification as stored (from the cache), or taking over from another writer of it. */
export function statusWriterFor(
  d: StatusWriterDeps,
  from: Notification | NotificationStatusWriter,
  guard: StatusGuard,
  signal: AbortSignal,
  log: Logger,
  onFatal?: (err: NotOwnerError | JournalWriteError) => void,
): NotificationStatusWriter {
  const handover = from instanceof NotificationStatusWriter;
  return new NotificationStatusWriter({
    kube: d.kube,
    namespace: d.namespace,
    initial: handover ? from.storedObject() : from,
    ...(handover ? { pages: from.journalPages() } : {}),
    guard,
    clock: d.clock,
    log,
    signal,
    onWritten: (x) => d.notifications.upsertLocal(x),
    ...(onFatal ? { onFatal } : {}),
  });
}
