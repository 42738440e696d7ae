// What the engine does when etcd is restored from a snapshot under it
// (docs/operations.md "Backup and restore", Restoring etcd under a running
// operator). The restored Notifications carry the status they had at the
// snapshot: a recovery that finished since shows `running` or `new` again,
// with a journal that lacks the steps Nova has already seen. Run from there,
// it would be run a second time. A notification never leaves a final status,
// so one that this engine saw final (by uid: a re-created object is another
// notification) and now sees unfinished can only have been rolled back. The engine then holds it (never runs it from the
// restored status), and the leader writes back the status it last saw, which
// is what Nova did, with a Warning Event `RolledBackByRestore` and
// masakari_restore_rollbacks_total{what="status"}; a recovery it had not
// finished then resumes from its own journal, as after any take-over.
// Notifications that were created after the snapshot are gone: when the
// cache reports a rewound history (src/runtime/informer.ts), each one this
// engine remembers and the API server no longer has gets a Warning Event
// `LostInRestore` and masakari_restore_rollbacks_total{what="vanished"}; it
// is not re-created (its sender must send it again if it still matters).
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { isConflict } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { Notification, NotificationStatusBlock } from '../model/types.ts';
import { counter } from '../runtime/metric-registry.ts';
import type { EngineEvents } from './processor-deps.ts';

export const restoreRollbacks = counter(
  undefined,
  'masakari_restore_rollbacks_total',
  'Notifications an etcd restore rolled back, as the leading engine found them: status (its status went back; the engine wrote back the one it had seen) or vanished (created after the snapshot, gone since; reported, not re-created).',
  ['what'] as const,
);

export const RESTORE_EVENT_REASONS = { rolledBack: 'RolledBackByRestore', vanished: 'LostInRestore' } as const;

/** How many notifications the guard remembers (the newest); older ones are past any plausible backup's age. */
const REMEMBERED = 50_000;

const FINAL = new Set(['finished', 'failed', 'ignored']);

/**
 * True when status `now` is behind `seen` so that acting on it would run a finished recovery again:
 * `seen` is final (finished, failed, ignored) and `now` is not. A journal that lags otherwise (a
 * step, a move, a run) is what a crash leaves behind: the engine resumes from it as a new leader
 * does, asking Nova what was done before it sends anything again.
 */
export function statusBehind(
  now: NotificationStatusBlock | undefined,
  seen: NotificationStatusBlock | undefined,
): boolean {
  return FINAL.has(seen?.phase ?? 'new') && !FINAL.has(now?.phase ?? 'new');
}

interface Seen {
  name: string;
  status: NotificationStatusBlock | undefined;
  /** The last copy seen, for the Event of a vanished one. */
  obj: Notification;
}

export class RestoreGuard {
  private readonly seen = new Map<string, Seen>();
  /** By name: rolled back, waiting for the leader to write the seen status back. */
  private readonly rolledBack = new Map<string, { restored: Notification; seen: Seen }>();
  /** uids whose loss was reported, so a second rewind does not report them again. */
  private readonly reported = new Set<string>();
  /** A cache saw history rewind and the losses are not reported yet. */
  private rewindPending = false;

  constructor(
    private readonly o: {
      kube: KubeClient;
      namespace: string;
      events: EngineEvents;
      log: Logger;
      isLeading: () => boolean;
    },
  ) {}

  /** Every add, update and delete of the engine's notification cache, before the engine's own handlers. */
  observe(n: Notification): void {
    const uid = n.metadata.uid;
    const name = n.metadata.name;
    if (!uid || !name) return;
    const before = this.seen.get(uid);
    if (before && statusBehind(n.status, before.status)) {
      if (!this.rolledBack.has(name)) {
        this.o.log.warn(
          { notification: name, uid, phase: n.status?.phase ?? 'new', seenPhase: before.status?.phase ?? 'new' },
          'notification status went back (etcd restored from a snapshot?): held until the status seen before is written back',
        );
      }
      this.rolledBack.set(name, { restored: n, seen: before });
      return;
    }
    this.rolledBack.delete(name);
    this.seen.delete(uid);
    this.seen.set(uid, { name, status: n.status, obj: n });
    if (this.seen.size > REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
  }

  /** True while the notification of this name must not be run: its status was rolled back. */
  holds(name: string): boolean {
    return this.rolledBack.has(name);
  }

  /** The leader's reconcile of a held notification: write the seen status back over the restored one. */
  async reinstate(name: string): Promise<void> {
    const held = this.rolledBack.get(name);
    if (!held) return;
    const { restored, seen } = held;
    const body: Notification = { ...restored, status: seen.status ?? {} };
    try {
      const written = await this.o.kube.replaceStatus<Notification>(
        RESOURCES.notifications,
        this.o.namespace,
        name,
        body,
      );
      this.rolledBack.delete(name);
      this.observe(written);
    } catch (e) {
      // a newer write (another reinstate, the watch's next event) decides again; anything else is retried
      if (!isConflict(e)) throw e;
      return;
    }
    restoreRollbacks.inc({ what: 'status' });
    this.o.events.onNotification(
      restored,
      'Warning',
      RESTORE_EVENT_REASONS.rolledBack,
      `etcd was restored to a state in which this notification was ${restored.status?.phase ?? 'new'} (${restored.status?.runs ?? 0} runs); ` +
        `the engine had seen it ${seen.status?.phase ?? 'new'} (${seen.status?.runs ?? 0} runs) and wrote that status back instead of running it again`,
    );
  }

  /** The notification cache's history was rewound (src/runtime/informer.ts onRewound). */
  rewound(): void {
    this.rewindPending = true;
  }

  /**
   * After a rewind: every remembered notification the API server no longer has (by uid) was
   * created after the snapshot. The leader reports each once; nothing is re-created. A failed
   * list leaves the rewind pending for the next call.
   */
  async reportIfRewound(): Promise<number> {
    if (!this.rewindPending || !this.o.isLeading()) return 0;
    const list = await this.o.kube.list<Notification>(RESOURCES.notifications, this.o.namespace);
    const present = new Set(list.items.map((n) => n.metadata.uid));
    let lost = 0;
    for (const [uid, s] of this.seen) {
      if (present.has(uid) || this.reported.has(uid)) continue;
      this.reported.add(uid);
      this.seen.delete(uid);
      lost++;
      restoreRollbacks.inc({ what: 'vanished' });
      this.o.events.onNotification(
        s.obj,
        'Warning',
        RESTORE_EVENT_REASONS.vanished,
        `etcd was restored to a snapshot older than this notification (last seen ${s.status?.phase ?? 'new'}); ` +
          'it is gone and is not re-created or run: send it again if the host still needs recovering',
      );
    }
    this.rewindPending = false;
    if (lost) this.o.log.warn({ lost }, 'notifications lost in an etcd restore reported');
    return lost;
  }
}
