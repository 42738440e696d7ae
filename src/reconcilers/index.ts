// The kubectl/GitOps path: three controllers (segments, hosts, notifications)
// over the store's informer caches, plus the periodic sweep of orphaned name
// claims and expired duplicate claims, and the notification retention task
// (src/store/retention.ts), all on the process's manager under one Lease
// (the manager's controller builder and scheduler: src/runtime/
// controller-builder.ts, scheduler.ts). Each controller declares which
// changes enqueue which keys; all work happens in its workers, once per
// leadership term.
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { ControllerFactory } from '../runtime/controller.ts';
import type { ControllerBuilder, ControllerBuilderOptions } from '../runtime/controller-builder.ts';
import type { PeriodicJob } from '../runtime/scheduler.ts';
import type { AdmissionDeps } from './admission.ts';
import { reconcileHost } from './host-reconciler.ts';
import { reconcileNotification } from './notification-reconciler.ts';
import { reconcileSegment } from './segment-reconciler.ts';
import { isAdmittedNotification } from '../domain/admitted.ts';
import { INDEX } from '../model/indexes.ts';

/** What the store controllers need of the manager (src/runtime/manager.ts). */
export interface StoreControllerHost {
  controller(name: string, opts: ControllerBuilderOptions): ControllerBuilder;
  every(job: PeriodicJob, opts: { lease?: string }): void;
}

export interface StoreControllersOptions {
  deps: AdmissionDeps;
  /** The Lease whose holder runs them. */
  lease: string;
  workers: number;
  /** Test seam; default the runtime's Controller. */
  makeController?: ControllerFactory;
  /** Removes stale name claims and expired duplicate claims; returns how many. */
  sweep: () => Promise<number>;
  sweepIntervalMs: number;
  /** Deletes notifications past [operator] notification_retention_days (a no-op when disabled). */
  retention?: { run: (signal: AbortSignal) => Promise<unknown>; intervalMs: number; firstAfterMs: number };
}

export const CONTROLLER_NAMES = {
  segments: 'store-failoversegments',
  hosts: 'store-hahosts',
  notifications: 'store-notifications',
} as const;

/** The names whose objects may change when one taking or giving up `name` changes (NameConflict). */
const named = <T extends FailoverSegment | HaHost>(cache: { byIndex(i: string, v: string): T[] }) =>
  function* (name: string | undefined): Iterable<string | undefined> {
    if (name === undefined) return;
    for (const o of cache.byIndex(INDEX.name, name)) yield o.metadata.name;
  };

/** A rename frees the old name, a delete the object's name: whoever lost a NameConflict for it may take it now. */
const freedName = <T extends FailoverSegment | HaHost>(obj: T, old: T | undefined, event: string) =>
  event === 'delete' ? obj.spec?.name : old && old.spec?.name !== obj.spec?.name ? old.spec?.name : undefined;

/** Registers the store controllers and their periodic jobs with the manager, under opts.lease. */
export function addStoreControllers(manager: StoreControllerHost, opts: StoreControllersOptions): void {
  const { deps, lease } = opts;
  const { caches } = deps;
  const base = {
    lease,
    workers: opts.workers,
    ...(opts.makeController ? { makeController: opts.makeController } : {}),
  };
  const segmentsNamed = named<FailoverSegment>(caches.segments);
  const hostsNamed = named<HaHost>(caches.hosts);

  manager
    // A new term confirms the claims from one fresh list (name-claim-snapshot.ts).
    .controller(CONTROLLER_NAMES.segments, { ...base, onTermStart: () => deps.nameClaimSnapshot?.reset() })
    .for(caches.segments)
    .watches(caches.segments, (s, old, event) => segmentsNamed(freedName(s, old, event)))
    .reconcile((key) => reconcileSegment(deps, key));

  manager
    .controller(CONTROLLER_NAMES.hosts, base)
    .for(caches.hosts)
    // Hosts waiting for their segment (SegmentNotFound / not yet admitted), or orphaned by its deletion.
    .watches(caches.segments, (s) =>
      caches.hosts.byIndex(INDEX.segmentRef, s.metadata.name ?? '').map((h) => h.metadata.name),
    )
    .watches(caches.hosts, (h, old, event) => hostsNamed(freedName(h, old, event)))
    .reconcile((key) => reconcileHost(deps, key));

  manager
    .controller(CONTROLLER_NAMES.notifications, base)
    .for(caches.notifications, (n: Notification) => !isAdmittedNotification(n))
    // Notifications that were waiting for this host (HostNotFound).
    .watches(caches.hosts, (h, _old, event) =>
      event === 'delete'
        ? []
        : caches.notifications.byIndex(INDEX.unadmittedHostname, h.spec?.name ?? '').map((n) => n.metadata.name),
    )
    .reconcile((key) => reconcileNotification(deps, key));

  // The first sweep one interval into the term, not with the first reconcile of every object: orphans only
  // wait (a take removes a stale claim in its way itself), and the start of a term has enough to list.
  manager.every({ name: 'store-claim-sweep', intervalMs: opts.sweepIntervalMs, run: () => opts.sweep() }, { lease });
  const retention = opts.retention;
  if (retention) {
    manager.every(
      {
        name: 'notification-retention',
        intervalMs: retention.intervalMs,
        firstAfterMs: retention.firstAfterMs,
        run: (signal) => retention.run(signal),
      },
      { lease },
    );
  }
}
