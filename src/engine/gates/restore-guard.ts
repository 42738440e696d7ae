// What the engine does when etcd is restored from a snapshot under it
// (docs/operations.md "Backup and restore", Restoring etcd under a running
// operator). The restored Notifications carry the status they had at the
// snapshot: a recovery that ended since shows `running` or `new` again, with
// a journal that lacks the steps Nova has already seen. Run from there, it
// would be run a second time. A notification that left the engine's cache of
// unfinished ones (it ended, or was deleted) never comes back to it under the
// same uid, so one that does was brought back by a restore. The engine then
// holds it (never runs it from the restored status) and the leader writes
// back the final status it had seen (a standby reads how each one ended when
// it leaves), or, when it never learnt it, ends it `failed` saying why; a Warning Event `RolledBackByRestore` and
// masakari_restore_rollbacks_total{what="status"}. A notification rolled
// back within its run is resumed from the restored journal, as after a crash
// (Nova is asked before anything is sent again). Notifications created after
// the snapshot are gone: once a rollback shows a restore happened, or the
// cache reports a rewound history (src/runtime/informer.ts), each one this
// engine remembers and the API server no longer has gets a Warning Event
// `LostInRestore` and masakari_restore_rollbacks_total{what="vanished"}; it
// is not re-created (its sender must send it again if it still matters).
// The host flags a rolled-back notification's runs had set are written back
// with its status (restored-host-flags.ts).
import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { isConflict } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification, NotificationStatusBlock } from '../../model/types.ts';
import type { Informer } from '../../runtime/types.ts';
import type { EngineEvents } from '../deps/processor-deps.ts';
import { countRestoreRollback } from '../telemetry/metrics.ts';

export const RESTORE_EVENT_REASONS = { rolledBack: 'RolledBackByRestore', vanished: 'LostInRestore' } as const;

/** How many notifications the guard remembers (the newest), as uid, name and final phase: a few MB. */
const REMEMBERED = 50_000;
/** Of those, how many keep their whole final status (journal included) to write back; the older keep the phase. */
const FULL_STATUSES = 2_000;
/** Reads of ended notifications in flight at once (a standby engine learning how each one ended). */
const LEARN_CONCURRENCY = 4;

const FINAL = new Set(['finished', 'failed', 'ignored']);

const isFinal = (s: NotificationStatusBlock | undefined): boolean => FINAL.has(s?.phase ?? 'new');

interface Seen {
  name: string;
  /** The final status, once this engine wrote it; only phase, message and runs for the older ones. */
  status: NotificationStatusBlock | undefined;
  /** What an Event about it needs once it is gone. */
  ref: Notification;
  /** It left the engine's cache of unfinished notifications: it ended (or was deleted). */
  left: boolean;
  /** metadata.creationTimestamp (ms): after the newest restored one, an absent notification was lost. */
  created: number;
}

/** Only what an Event's `regarding` takes: the object itself may be large (its journal). */
const refOf = (n: Notification): Notification => ({
  apiVersion: n.apiVersion,
  kind: n.kind,
  metadata: {
    name: n.metadata.name,
    uid: n.metadata.uid,
    ...(n.metadata.namespace ? { namespace: n.metadata.namespace } : {}),
  },
  spec: {} as Notification['spec'],
});

/** How the guard saw a notification: in the cache, leaving it, or in this engine's own status write. */
export type Sighting = 'cached' | 'left' | 'written';

export class RestoreGuard {
  private readonly seen = new Map<string, Seen>();
  /** By name: rolled back, waiting for the leader to write its status. */
  private readonly rolledBack = new Map<string, { restored: Notification; seen: Seen }>();
  /** uids whose loss was reported, so a second rewind does not report them again. */
  private readonly reported = new Set<string>();
  /** A cache saw history rewind and the losses are not reported yet. */
  private rewindPending = false;
  /** uids whose whole final status is kept, oldest first. */
  private readonly fullStatuses: string[] = [];

  constructor(
    private readonly o: {
      kube: KubeClient;
      namespace: string;
      events: EngineEvents;
      log: Logger;
      isLeading: () => boolean;
      /**
       * Writes back the host flags the notification's runs had set (restored-host-flags.ts), before its
       * status; returns one line per host written. Throws to be retried with the notification still held.
       */
      reapplyHostFlags?: (restored: Notification, final: NotificationStatusBlock, known: boolean) => Promise<string[]>;
    },
  ) {}

  /**
   * Every add and update (cached) and delete (left) of the engine's notification cache, before the
   * engine's own handlers, and every status this engine writes (written). A uid that left the
   * cache of unfinished notifications never comes back to it: when it does, etcd was restored.
   */
  observe(n: Notification, how: Sighting = 'cached'): void {
    const uid = n.metadata.uid;
    const name = n.metadata.name;
    if (!uid || !name) return;
    const before = this.seen.get(uid);
    if (how === 'cached' && before?.left && !isFinal(n.status)) {
      // proof of a restore: look for what it lost, too (a restore that bumps revisions rewinds no cache)
      this.rewindPending = true;
      if (!this.rolledBack.has(name)) {
        this.o.log.warn(
          { notification: name, uid, phase: n.status?.phase ?? 'new', seenPhase: before.status?.phase ?? 'new' },
          'a notification that had ended is unfinished again (etcd restored from a snapshot?): held, not run',
        );
      }
      this.rolledBack.set(name, { restored: n, seen: before });
      return;
    }
    if (how === 'cached') this.rolledBack.delete(name);
    // a final status is kept: the watch announces a notification leaving the cache with its last unfinished copy
    let status = before?.status;
    if (!isFinal(status) && isFinal(n.status)) {
      status = n.status;
      this.keepFull(uid);
    }
    this.seen.delete(uid);
    this.seen.set(uid, {
      name,
      status,
      ref: refOf(n),
      created: Date.parse(n.metadata.creationTimestamp ?? '') || (before?.created ?? 0),
      left: how === 'left' || (how === 'written' && (before?.left ?? false)),
    });
    if (this.seen.size > REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
    // left without a final status seen (another engine ended it): read how it ended while it is still there
    if (how === 'left' && !isFinal(status)) this.learnFinal(name, uid);
  }

  private readonly toLearn: Array<{ name: string; uid: string }> = [];
  private learning = 0;

  /** Reads an ended notification once, a few at a time, to remember its final status. */
  private learnFinal(name: string, uid: string): void {
    this.toLearn.push({ name, uid });
    this.drain();
  }

  private drain(): void {
    while (this.learning < LEARN_CONCURRENCY && this.toLearn.length) {
      const next = this.toLearn.shift()!;
      this.learning++;
      void this.o.kube
        .get<Notification>(RESOURCES.notifications, this.o.namespace, next.name)
        .then(
          (got) => {
            const seen = this.seen.get(next.uid);
            if (got.metadata.uid !== next.uid || !seen || isFinal(seen.status) || !isFinal(got.status)) return;
            seen.status = got.status;
            this.keepFull(next.uid);
          },
          // gone (deleted) or unreadable now: it stays remembered as ended, outcome unknown
          () => undefined,
        )
        .finally(() => {
          this.learning--;
          this.drain();
        });
    }
  }

  /** Bounds the memory of whole final statuses: past FULL_STATUSES the oldest keeps phase, message and runs. */
  private keepFull(uid: string): void {
    this.fullStatuses.push(uid);
    if (this.fullStatuses.length <= FULL_STATUSES) return;
    const old = this.seen.get(this.fullStatuses.shift()!);
    if (old?.status) {
      const { phase, message, runs } = old.status;
      old.status = { phase, ...(message !== undefined ? { message } : {}), ...(runs !== undefined ? { runs } : {}) };
    }
  }

  /** True while the notification of this name must not be run: its status was rolled back. */
  holds(name: string): boolean {
    return this.rolledBack.has(name);
  }

  /**
   * The leader's reconcile of a held notification: the final status this engine saw is written back
   * over the restored one; if it only saw the notification leave (another engine ended it), it ends
   * it `failed`, saying why, rather than run a recovery that already ran.
   */
  async reinstate(name: string): Promise<void> {
    const held = this.rolledBack.get(name);
    if (!held) return;
    const { restored, seen } = held;
    const known = isFinal(seen.status);
    const whole = known && seen.status?.recoveryWorkflowDetails !== undefined;
    const status: NotificationStatusBlock = whole
      ? (seen.status ?? {})
      : known
        ? // an older one: its final phase over the restored journal, which lacks what came after the snapshot
          { ...restored.status, ...seen.status }
        : {
            ...restored.status,
            phase: 'failed',
            message:
              'This notification had ended before etcd was restored to a snapshot taken earlier; the engine saw it end but ' +
              'not how, so it is not run again. Check its host and servers in Nova.',
          };
    // the hosts first: a failure leaves the notification held, and the next reconcile tries both again
    const hosts = (await this.o.reapplyHostFlags?.(restored, status, known)) ?? [];
    const body: Notification = { ...restored, status };
    try {
      const written = await this.o.kube.replaceStatus<Notification>(
        RESOURCES.notifications,
        this.o.namespace,
        name,
        body,
      );
      this.rolledBack.delete(name);
      this.observe(written, 'written');
    } catch (e) {
      // a newer write (another reinstate, the watch's next event) decides again; anything else is retried
      if (!isConflict(e)) throw e;
      return;
    }
    countRestoreRollback('status');
    this.o.events.onNotification(
      restored,
      'Warning',
      RESTORE_EVENT_REASONS.rolledBack,
      `etcd was restored to a state in which this notification was ${restored.status?.phase ?? 'new'}; it had ended ` +
        (known
          ? `${seen.status?.phase}, and the engine wrote that status back instead of running it again`
          : 'before (ended by another engine, outcome unknown here), so the engine ended it failed instead of running it again') +
        (hosts.length ? `; host flags set again: ${hosts.join('; ')}` : ''),
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
    // Absent and created before the newest restored notification: deleted before the snapshot (a purge),
    // not lost. Absent and created after it: it came after the snapshot.
    const newest = Math.max(0, ...list.items.map((n) => Date.parse(n.metadata.creationTimestamp ?? '') || 0));
    let lost = 0;
    for (const [uid, s] of this.seen) {
      if (present.has(uid) || this.reported.has(uid) || s.created <= newest) continue;
      this.reported.add(uid);
      this.seen.delete(uid);
      lost++;
      countRestoreRollback('vanished');
      this.o.events.onNotification(
        s.ref,
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

/** The informer as the processor uses it, with every status it stores also shown to the guard. */
export function observingWrites(inf: Informer<Notification>, guard: RestoreGuard): Informer<Notification> {
  return new Proxy(inf, {
    get(target, prop) {
      if (prop === 'upsertLocal')
        return (n: Notification) => {
          guard.observe(n, 'written');
          target.upsertLocal(n);
        };
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
