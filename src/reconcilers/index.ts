// The kubectl/GitOps path: three reconcilers (segments, hosts, notifications)
// fed by the store's informer caches, plus the periodic sweep of orphaned
// name claims and expired duplicate claims, and the notification retention
// task (src/store/retention.ts). Informer handlers only enqueue keys; all work happens in the
// controllers' workers. Built per leadership term: start(signal) runs until
// the signal aborts (leadership lost or shutdown).
import type { Logger } from 'pino';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { ControllerFactory, QueueingController } from '../runtime/controller.ts';
import type { AdmissionDeps } from './admission.ts';
import { reconcileHost } from './host-reconciler.ts';
import { reconcileNotification } from './notification-reconciler.ts';
import { reconcileSegment } from './segment-reconciler.ts';
import { isAdmittedNotification } from '../domain/admitted.ts';
import { INDEX } from '../model/indexes.ts';

export interface StoreReconcilersOptions {
  deps: AdmissionDeps;
  makeController: ControllerFactory;
  /** Removes stale name claims and expired duplicate claims; returns how many. */
  sweep: () => Promise<number>;
  sweepIntervalMs: number;
  /** Deletes notifications past [operator] notification_retention_days (a no-op when disabled). */
  retention?: { run: (signal: AbortSignal) => Promise<unknown>; intervalMs: number; firstAfterMs: number };
  log: Logger;
}

export const CONTROLLER_NAMES = {
  segments: 'store-failoversegments',
  hosts: 'store-hahosts',
  notifications: 'store-notifications',
} as const;

export class StoreReconcilers {
  private active:
    { segments: QueueingController; hosts: QueueingController; notifications: QueueingController } | undefined;

  constructor(private readonly opts: StoreReconcilersOptions) {
    const { caches } = opts.deps;
    const onSegment = (s: FailoverSegment, old?: FailoverSegment) => {
      this.enqueue('segments', s.metadata.name);
      // Hosts waiting for this segment (SegmentNotFound / not yet admitted), or orphaned by its deletion.
      for (const h of caches.hosts.byIndex(INDEX.segmentRef, s.metadata.name ?? ''))
        this.enqueue('hosts', h.metadata.name);
      if (old && old.spec?.name !== s.spec?.name) this.requeueSegmentName(old.spec?.name);
    };
    caches.segments.on('add', onSegment);
    caches.segments.on('update', onSegment);
    caches.segments.on('delete', (s) => {
      for (const h of caches.hosts.byIndex(INDEX.segmentRef, s.metadata.name ?? ''))
        this.enqueue('hosts', h.metadata.name);
      // A segment that lost a NameConflict may now get the name.
      this.requeueSegmentName(s.spec?.name);
    });

    const onHost = (h: HaHost, old?: HaHost) => {
      this.enqueue('hosts', h.metadata.name);
      // Notifications that were waiting for this host (HostNotFound).
      for (const n of caches.notifications.byIndex(INDEX.unadmittedHostname, h.spec?.name ?? ''))
        this.enqueue('notifications', n.metadata.name);
      if (old && old.spec?.name !== h.spec?.name) this.requeueHostName(old.spec?.name);
    };
    caches.hosts.on('add', onHost);
    caches.hosts.on('update', onHost);
    caches.hosts.on('delete', (h) => this.requeueHostName(h.spec?.name));

    const onNotification = (n: Notification) => {
      if (!isAdmittedNotification(n)) this.enqueue('notifications', n.metadata.name);
    };
    caches.notifications.on('add', onNotification);
    caches.notifications.on('update', onNotification);
  }

  /** Runs until the signal aborts: every known object is reconciled once, then on events; claims are swept periodically. */
  async start(signal: AbortSignal): Promise<void> {
    const { deps, makeController, log } = this.opts;
    const controllers = {
      segments: makeController(CONTROLLER_NAMES.segments, (key) => reconcileSegment(deps, key)),
      hosts: makeController(CONTROLLER_NAMES.hosts, (key) => reconcileHost(deps, key)),
      notifications: makeController(CONTROLLER_NAMES.notifications, (key) => reconcileNotification(deps, key)),
    };
    this.active = controllers;
    // A new term confirms the claims from one fresh list (name-claim-snapshot.ts).
    deps.nameClaimSnapshot?.reset();
    for (const s of deps.caches.segments.list()) controllers.segments.enqueue(s.metadata.name ?? '');
    for (const h of deps.caches.hosts.list()) controllers.hosts.enqueue(h.metadata.name ?? '');
    for (const n of deps.caches.notifications.list()) {
      if (!isAdmittedNotification(n)) controllers.notifications.enqueue(n.metadata.name ?? '');
    }
    const sweep = () => {
      this.opts.sweep().catch((err: unknown) => log.warn({ err }, 'name-claim sweep failed; next one retries'));
    };
    // The first sweep one interval into the term, not with the first reconcile of every object: orphans only
    // wait (a take removes a stale claim in its way itself), and the start of a term has enough to list.
    const timer = setInterval(sweep, this.opts.sweepIntervalMs);
    const stopRetention = this.scheduleRetention(signal);
    try {
      await Promise.all(Object.values(controllers).map((c) => c.start(signal)));
    } finally {
      clearInterval(timer);
      stopRetention();
      if (this.active === controllers) this.active = undefined;
    }
  }

  /** Runs the retention task periodically while leading, never two passes at once; returns the canceller. */
  private scheduleRetention(signal: AbortSignal): () => void {
    const retention = this.opts.retention;
    if (!retention) return () => undefined;
    let running = false;
    const pass = () => {
      if (running || signal.aborted) return;
      running = true;
      retention
        .run(signal)
        .catch((err: unknown) => this.opts.log.warn({ err }, 'notification retention pass failed; next one retries'))
        .finally(() => {
          running = false;
        });
    };
    let interval: NodeJS.Timeout | undefined;
    const first = setTimeout(() => {
      pass();
      interval = setInterval(pass, retention.intervalMs);
    }, retention.firstAfterMs);
    return () => {
      clearTimeout(first);
      if (interval) clearInterval(interval);
    };
  }

  private enqueue(kind: 'segments' | 'hosts' | 'notifications', name: string | undefined): void {
    if (name) this.active?.[kind].enqueue(name);
  }

  private requeueSegmentName(name: string | undefined): void {
    if (name === undefined) return;
    for (const s of this.opts.deps.caches.segments.byIndex(INDEX.name, name)) this.enqueue('segments', s.metadata.name);
  }

  private requeueHostName(name: string | undefined): void {
    if (name === undefined) return;
    for (const h of this.opts.deps.caches.hosts.byIndex(INDEX.name, name)) this.enqueue('hosts', h.metadata.name);
  }
}
