// The store reconcilers as a runnable of the process's manager
// (src/runtime/manager.ts): the kubectl/GitOps admission of src/reconcilers/,
// the periodic sweeps of orphaned name claims, journal pages and expired
// duplicate claims, and the notification retention task, run by the one
// replica holding the Lease `masakari-store-reconcilers`. They work on the
// caches, claims and id allocators of the API's store (StoreParts), so both
// paths share one cache per kind and one id sequence.
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { ControllerFactory } from '../runtime/controller.ts';
import type { Manager } from '../runtime/manager.ts';
import type { StoreParts } from '../store/index.ts';
import { Lifecycle, runRetention, sweepNotificationClaims } from '../store/index.ts';
import { addStoreControllers } from './index.ts';
import { NameClaimSnapshot } from './name-claim-snapshot.ts';
import { MASAKARI_VALIDATORS } from '../domain/spec-validators.ts';
import type { SpecValidators } from '../domain/spec-validators.ts';
import { systemClock } from '../time/clock.ts';

/** Lease held by the replica that runs the store reconcilers. */
export const STORE_LEASE_NAME = 'masakari-store-reconcilers';
/**
 * Orphan sweep every five minutes: it reads every name claim (one per segment
 * and host) to find the rare one a crash left, and a
 * create that meets a stale claim removes it itself, so nothing waits for
 * the sweep; run every minute, its pages were a steady share of the API
 * server's work and garbage (docs/benchmarks.md, "Scale"). Retention every hour, the
 * first pass a minute after leading starts; two workers per controller
 * (admission is a handful of small API calls).
 */
const DEFAULTS = {
  sweepIntervalMs: 300_000,
  retentionIntervalMs: 3_600_000,
  retentionFirstAfterMs: 60_000,
  workers: 2,
};

export interface StoreReconcilerOptions {
  validators?: SpecValidators;
  sweepIntervalMs?: number;
  /** Period of the notification retention task (default 1 h) and delay of its first pass (default 1 min). */
  retentionIntervalMs?: number;
  retentionFirstAfterMs?: number;
  /** Default: the runtime's Controller (src/runtime/controller.ts) with DEFAULTS.workers workers, from the manager's builder. */
  makeController?: ControllerFactory;
}

/** Adds the store reconcilers of `store` to the manager, under the Lease STORE_LEASE_NAME. */
export function addStoreReconcilers(manager: Manager, store: StoreParts, opts: StoreReconcilerOptions = {}): void {
  const { kube, namespace, config, caches, claims } = store;
  const log = store.log.child({ component: 'store-reconcilers' });
  const windowSeconds = config.DEFAULT.duplicate_notification_detection_interval;
  addStoreControllers(manager, {
    lease: STORE_LEASE_NAME,
    workers: DEFAULTS.workers,
    ...(opts.makeController ? { makeController: opts.makeController } : {}),
    deps: {
      kube,
      namespace,
      log,
      caches,
      claims,
      lifecycle: new Lifecycle({ kube, namespace, claims, caches, log, fieldManager: FIELD_MANAGERS.reconciler }),
      ids: store.ids,
      validators: opts.validators ?? MASAKARI_VALIDATORS,
      duplicateWindowSeconds: windowSeconds,
      pendingClaimMs: store.pendingClaimMs,
      now: () => systemClock.now(),
      confirmedClaims: new Map(),
      nameClaimSnapshot: new NameClaimSnapshot((keep) => claims.listAll(keep), log),
    },
    sweep: async () =>
      (await store.sweepOrphans()) + (await sweepNotificationClaims(kube, namespace, systemClock.now(), log)),
    sweepIntervalMs: opts.sweepIntervalMs ?? DEFAULTS.sweepIntervalMs,
    retention: {
      run: (signal) =>
        runRetention(
          {
            kube,
            namespace,
            retentionDays: config.operator.notification_retention_days,
            log: log.child({ component: 'retention' }),
            // The leader caches every notification: no hourly list of them all from the API server.
            cached: () => caches.notifications.list(),
          },
          signal,
        ),
      intervalMs: opts.retentionIntervalMs ?? DEFAULTS.retentionIntervalMs,
      firstAfterMs: opts.retentionFirstAfterMs ?? DEFAULTS.retentionFirstAfterMs,
    },
  });
}
