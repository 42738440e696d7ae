// The recovery engine assembled from its parts: informers on notifications,
// hosts and segments; the notification state machine on a work-queue
// controller (the manager's controller builder); Masakari's two periodic
// tasks (Manager.every); all of it run by the process's manager
// (src/runtime/manager.ts) only while this process holds the engine Lease,
// one controller per term. The caches and the leader election are the
// manager's; the controller and events are injected, so the engine runs the
// same way on the real runtime (src/engine/component.ts) and on test doubles.

import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { NovaClient } from '../openstack/types.ts';
import type { ControllerFactory } from '../runtime/controller.ts';
import type { Informer, InformerOptions } from '../runtime/types.ts';
import { informerReady } from '../runtime/types.ts';
import { isUnfinishedNotification, UNFINISHED_FIELD_SELECTOR } from '../model/notification-phase.ts';
import { slimHost } from '../store/index.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { INDEX } from '../model/indexes.ts';
import type { Manager } from '../runtime/manager.ts';
import { bmcForHost } from '../fencing/bmc/factory.ts';
import { NotificationProcessor } from './notification-processor.ts';
import type { EngineEvents, FencingPrecondition, IdSource, ProcessorDeps } from './deps/processor-deps.ts';
import type { RecoveryDriver } from './workflows/recovery-driver.ts';
import { periodicTask } from './periodic/notification-tasks.ts';
import { observingWrites, RestoreGuard } from './gates/restore-guard.ts';
import { reapplyRestoredHostFlags } from './gates/restored-host-flags.ts';
import { HaHostFlags } from './run/ha-host-flags.ts';
import { planOf } from './deps/lookups.ts';
import type { AdmittedNotification } from './intake/admitted-notification.ts';

/** Lease held by the engine replica that processes notifications. */
export const ENGINE_LEASE_NAME = 'masakari-engine';
/** How often the leader looks for notifications an etcd restore lost, after a cache saw history rewind. */
const RESTORE_REPORT_SECONDS = 5;
/** Work-queue controller name (metrics label). */
export const ENGINE_CONTROLLER_NAME = 'masakari-engine-notifications';

export type EngineInformerFactory = <T extends FailoverSegment | HaHost | Notification>(
  ref: ResourceRef,
  opts: InformerOptions<T>,
) => Informer<T>;

export interface EngineOptions {
  kube: KubeClient;
  namespace: string;
  config: Config;
  nova?: NovaClient;
  log: Logger;
  identity: string;
  /** Runs the engine's caches and, under the Lease ENGINE_LEASE_NAME, the engine itself. */
  manager: Manager;
  /** Default: the manager's shared informers. Caches from another factory (test doubles) are handed to the manager. */
  informerFactory?: EngineInformerFactory;
  /** Concurrent reconciles of the runtime's Controller (the builder's default). */
  workers?: number;
  /** Tests: a controller double in place of the runtime's Controller. */
  makeController?: ControllerFactory;
  events: EngineEvents;
  /** The recovery workflows (src/engine/workflows/driver.ts taskflowDriver). */
  driver: RecoveryDriver;
  vmoveIds: IdSource;
  /** Fencing precondition for requireFencing segments (see ProcessorDeps.fencing). */
  fencing?: FencingPrecondition;
  /** The BMC of a host with spec.fencing; default bmcForHost with this engine's KubeClient. */
  bmcFor?: ProcessorDeps['bmcFor'];
  /** Whether a recovery-released-by may be honoured (see ProcessorDeps.approvalGuard). */
  approvalGuard?: ProcessorDeps['approvalGuard'];
}

/** The engine registered on its manager; it runs once the manager starts, and stops with it. */
export interface Engine {
  ready(): boolean;
  isLeading(): boolean;
  readonly processor: NotificationProcessor;
}

export function createEngine(o: EngineOptions): Engine {
  const log = o.log.child({ component: 'engine' });
  // Only unfinished notifications: finished, failed and ignored ones need no more work, and
  // they are what grows without bound. The API server filters (the CRD's selectable field
  // status.phase) and sends DELETED when one finishes; keep applies the same rule to the
  // engine's own status writes.
  const { manager } = o;
  const custom = o.informerFactory;
  const informerFactory: EngineInformerFactory = custom
    ? (ref, opts) => manager.addCache(custom(ref, opts))
    : manager.informerFactory;
  const notifications = informerFactory<Notification>(RESOURCES.notifications, {
    namespace: o.namespace,
    fieldSelector: UNFINISHED_FIELD_SELECTOR,
    keep: isUnfinishedNotification,
  });
  const hosts = informerFactory<HaHost>(RESOURCES.hosts, {
    namespace: o.namespace,
    // The store's transform: one shared cache per kind when the api runs in the same process.
    transform: slimHost,
    indexes: {
      [INDEX.name]: (h) => (h.spec?.name ? [h.spec.name] : []),
      [INDEX.uuid]: (h) => (h.status?.uuid ? [h.status.uuid] : []),
    },
  });
  const segments = informerFactory<FailoverSegment>(RESOURCES.segments, {
    namespace: o.namespace,
    indexes: { [INDEX.uuid]: (s) => (s.status?.uuid ? [s.status.uuid] : []) },
  });
  const informers = [notifications, hosts, segments];

  // Before the engine's own handlers, so a notification an etcd restore rolled back is held before it is queued.
  let leading = false;
  const restoredFlags = {
    hosts,
    flags: new HaHostFlags({ kube: o.kube, namespace: o.namespace, hosts, clock: manager.clock, log }),
    events: o.events,
    log,
    plan: (n: AdmittedNotification) => planOf({ hosts, segments, config: o.config }, n),
  };
  const guard = new RestoreGuard({
    kube: o.kube,
    namespace: o.namespace,
    events: o.events,
    log,
    isLeading: () => leading,
    reapplyHostFlags: (restored, final, known) => reapplyRestoredHostFlags(restoredFlags, restored, final, known),
  });
  notifications.on('add', (n) => guard.observe(n));
  notifications.on('update', (n) => guard.observe(n));
  notifications.on('delete', (n) => guard.observe(n, 'left'));
  notifications.onRewound?.(() => guard.rewound());

  const processor = new NotificationProcessor({
    kube: o.kube,
    namespace: o.namespace,
    config: o.config,
    ...(o.nova ? { nova: o.nova } : {}),
    log: o.log,
    clock: manager.clock,
    identity: o.identity,
    notifications: observingWrites(notifications, guard),
    hosts,
    segments,
    events: o.events,
    vmoveIds: o.vmoveIds,
    driver: o.driver,
    ...(o.fencing ? { fencing: o.fencing } : {}),
    bmcFor: o.bmcFor ?? ((host) => bmcForHost(o.kube, host)),
    ...(o.approvalGuard ? { approvalGuard: o.approvalGuard } : {}),
    // Into the current term's controller (below); dropped between terms.
    enqueue: (key) => controller.enqueue(key),
  });

  // One controller per term of the engine Lease. New notifications are processed on the watch event (Masakari's
  // RPC cast), not by the periodic task; the processor enqueues every cached one when it takes the term.
  const lease = ENGINE_LEASE_NAME;
  const controller = manager
    .controller(ENGINE_CONTROLLER_NAME, {
      lease,
      ...(o.workers ? { workers: o.workers } : {}),
      ...(o.makeController ? { makeController: o.makeController } : {}),
      onTermStart: (signal, hold) => {
        leading = true;
        processor.startLeading(signal, {
          isGracefulStop: () => manager.isStopping(),
          ...(hold ? { holdsLease: () => hold.held() } : {}),
        });
      },
    })
    .watches(notifications, (n) => [n.metadata.name])
    // Brakes on mass failure: a host back in service (its on_maintenance cleared) or gone may let a held notification start.
    .watches(hosts, (h, old, event) =>
      event === 'delete' || (old && effectiveFlags(old).onMaintenance && !effectiveFlags(h).onMaintenance)
        ? processor.heldKeys()
        : [],
    )
    .reconcile(async (key) => {
      if (!guard.holds(key)) return processor.reconcile(key);
      await guard.reinstate(key);
      return {};
    });
  const d = o.config.DEFAULT;
  for (const job of [
    periodicTask('process_unfinished_notifications', d.process_unfinished_notifications_interval, () =>
      processor.processUnfinished(),
    ),
    periodicTask('report_restore_losses', RESTORE_REPORT_SECONDS, async () => void (await guard.reportIfRewound())),
    periodicTask('check_expired_notifications', d.check_expired_notifications_interval, () => processor.checkExpired()),
  ]) {
    manager.every(job, { lease });
  }
  // Once the term's controller and periodic tasks stopped. A graceful stop still holds the Lease here (it is
  // released after the term ends), so runs unlock their servers.
  manager.onTermEnd(lease, async () => {
    try {
      const graceful = manager.isStopping();
      await processor.stopLeading(graceful ? 'engine stopping' : 'leadership lost', { releaseLocks: graceful });
      log.info({ graceful }, 'engine stopped leading');
    } finally {
      leading = false;
    }
  });

  return {
    processor,
    ready: () => informers.every(informerReady),
    isLeading: () => leading,
  };
}
