// Prometheus metrics of the recovery engine. The workflows call the exported
// helpers (countEvacuation) without holding a registry: the metric objects are
// module singletons, attached to every registry an engine component starts
// with (registerEngineMetrics), so tests with two engines in one process work.

import type { Metric, Registry } from 'prom-client';
import { counter, gauge, histogram, registerOnce } from '../../runtime/metric-registry.ts';
import { NovaError } from '../../openstack/types.ts';
import type { NovaClient } from '../../openstack/types.ts';
import { NOVA_SIDE_EFFECTS } from '../../runtime/lease-fence.ts';

const restoreRollbacks = counter(
  undefined,
  'masakari_restore_rollbacks_total',
  "What an etcd restore rolled back, as the leading engine found it: status (a notification's status went back; the engine wrote back the one it had seen), vanished (a notification created after the snapshot, gone since; reported, not re-created) or host_flags (a host flag a rolled-back recovery had set, written again).",
  ['what'] as const,
);

const notificationsTotal = counter(
  undefined,
  'masakari_notifications_total',
  'Notifications that reached a final status, by type and status (finished, ignored, failed, error).',
  ['type', 'status'] as const,
);

const staleTotal = counter(
  undefined,
  'masakari_notifications_stale_total',
  'Notifications failed without a run because of their generated_time, by type and reason (expired: older than notifications_expired_interval; future: ahead of the clock by more than the skew tolerance).',
  ['type', 'reason'] as const,
);

const recoveryDuration = histogram(
  undefined,
  'masakari_recovery_duration_seconds',
  'Time from the first run of a notification to its final status, by notification type.',
  ['type'] as const,
  [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
);

const evacuationsTotal = counter(
  undefined,
  'masakari_evacuations_total',
  'Per-instance evacuations of host recoveries, by result (succeeded, failed).',
  ['result'] as const,
);

const novaCallDuration = histogram(
  undefined,
  'masakari_nova_call_duration_seconds',
  'Duration of each Nova call the engine makes (retries included), by NovaClient method and final HTTP status (0: no response).',
  ['method', 'status'] as const,
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
);

const novaCallErrors = counter(
  undefined,
  'masakari_nova_call_errors_total',
  'Nova calls of the engine that failed, by NovaClient method and kind (transport, server, client).',
  ['method', 'kind'] as const,
);

/** Per notification uuid, the servers its last lock sweep could not unlock (a notification with none is dropped). */
const leftLocked = new Map<string, number>();

const serversLeftLocked = gauge(
  undefined,
  'masakari_servers_left_locked',
  "Nova servers a recovery locked and could not unlock (as of each notification's last lock sweep in this engine); alert MasakariServerLeftLocked.",
  [],
  function collect() {
    let total = 0;
    for (const n of leftLocked.values()) total += n;
    this.set(total);
  },
);

const recoveryHeld = gauge(
  undefined,
  'masakari_recovery_held_notifications',
  'Notifications the engine holds back by a brake on mass failure, by segment uuid and reason (SegmentUnhealthyLimit, SegmentRecoveringLimit, GlobalRecoveryCap).',
  ['segment_uuid', 'reason'] as const,
);

const fencingAttempts = counter(
  undefined,
  'masakari_fencing_attempts_total',
  'BMC fences of failed hosts (HaHost spec.fencing) by driver (redfish, ipmi) and result (success; unreachable, timeout, refused, error: the BMC failure; force_down_failed: fenced, but Nova refused forced_down).',
  ['driver', 'result'] as const,
);

const fencingHeld = gauge(
  undefined,
  'masakari_fencing_held_notifications',
  'Notifications the engine holds new because the BMC fence of their host failed (retried with backoff), by driver and reason (BmcUnreachable, BmcTimeout, BmcRefused, BmcError, ForceDownFailed); alert MasakariFencingFailed.',
  ['driver', 'reason'] as const,
);

const ALL: Metric<string>[] = [
  fencingAttempts,
  fencingHeld,
  serversLeftLocked,
  notificationsTotal,
  staleTotal,
  recoveryDuration,
  evacuationsTotal,
  novaCallDuration,
  novaCallErrors,
  recoveryHeld,
  restoreRollbacks,
];

/** Attaches the engine metrics to a registry (idempotent). */
export function registerEngineMetrics(registry: Registry): void {
  registerOnce(registry, ALL);
}

/** What an etcd restore rolled back (gates/restore-guard.ts): a status, a notification (vanished), a host flag. */
export function countRestoreRollback(what: 'status' | 'vanished' | 'host_flags'): void {
  restoreRollbacks.inc({ what });
}

/** A notification reached a final status. */
export function countFinalStatus(type: string, status: string, durationSeconds?: number): void {
  notificationsTotal.inc({ type, status });
  if (durationSeconds !== undefined && Number.isFinite(durationSeconds) && durationSeconds >= 0) {
    recoveryDuration.observe({ type }, durationSeconds);
  }
}

/** A notification was failed for its generated_time before it could run (src/domain/freshness.ts). */
export function countStale(type: string, reason: 'expired' | 'future'): void {
  staleTotal.inc({ type, reason });
}

/** A lock sweep of a notification ended: `servers` are still locked by it (none clears it). */
export function recordServersLeftLocked(notificationUuid: string, servers: readonly string[]): void {
  if (servers.length > 0) leftLocked.set(notificationUuid, servers.length);
  else leftLocked.delete(notificationUuid);
}

/** The notifications held by the brakes now, as (segment uuid, reason) pairs, one per notification. */
export function setHeldNotifications(held: Iterable<{ segmentUuid: string; reason: string }>): void {
  const counts = new Map<string, { segment_uuid: string; reason: string; n: number }>();
  for (const { segmentUuid, reason } of held) {
    const key = `${segmentUuid}\t${reason}`;
    const entry = counts.get(key) ?? { segment_uuid: segmentUuid, reason, n: 0 };
    entry.n++;
    counts.set(key, entry);
  }
  recoveryHeld.reset();
  for (const { n, ...labels } of counts.values()) recoveryHeld.set(labels, n);
}

/** One BMC fence attempt ended (src/engine/gates/bmc-fence.ts). */
export function countFencingAttempt(driver: string, result: string): void {
  fencingAttempts.inc({ driver, result });
}

/** The notifications held by failed BMC fences now, one (driver, reason) pair per notification. */
export function setFencingHeld(held: Iterable<{ driver: string; reason: string }>): void {
  const counts = new Map<string, { driver: string; reason: string; n: number }>();
  for (const { driver, reason } of held) {
    const key = `${driver}\t${reason}`;
    const entry = counts.get(key) ?? { driver, reason, n: 0 };
    entry.n++;
    counts.set(key, entry);
  }
  fencingHeld.reset();
  for (const { n, ...labels } of counts.values()) fencingHeld.set(labels, n);
}

/** Called by the host-failure workflow once per instance it tried to evacuate. */
export function countEvacuation(result: 'succeeded' | 'failed'): void {
  evacuationsTotal.inc({ result });
}

/**
 * Wraps the engine's NovaClient so every call the workflows make is timed:
 * `method` is the NovaClient method (getServer, evacuate, ...), `status` the
 * HTTP status of the final answer ('200' on success, 0 for a timeout or
 * connection failure), retries included in the duration. Done here rather
 * than in the HTTP layer's onCall hook because the engine owns these names
 * and the process-wide hook (src/app/run.ts) already feeds
 * masakari_openstack_request_duration_seconds per attempt.
 */
export function instrumentNova(nova: NovaClient): NovaClient {
  const wrapped = {} as Record<string, unknown>;
  for (const method of NOVA_METHODS) {
    const fn = nova[method] as (...args: unknown[]) => Promise<unknown>;
    wrapped[method] = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        const result = await fn.apply(nova, args);
        novaCallDuration.observe({ method, status: '200' }, (performance.now() - started) / 1000);
        return result;
      } catch (err) {
        const status = err instanceof NovaError ? err.status : 0;
        novaCallDuration.observe({ method, status: String(status) }, (performance.now() - started) / 1000);
        novaCallErrors.inc({ method, kind: status === 0 ? 'transport' : status >= 500 ? 'server' : 'client' });
        throw err;
      }
    };
  }
  return wrapped as unknown as NovaClient;
}

/** Every NovaClient method the engine calls: the reads, and the side effects the Lease fences. */
const NOVA_METHODS = [
  ...(['listServices', 'listServersOnHost', 'getServer', 'listAggregates', 'listMigrations', 'getImage'] as const),
  ...NOVA_SIDE_EFFECTS,
] as const satisfies ReadonlyArray<keyof NovaClient>;

// The wrapper has only the listed methods: a NovaClient method missing here would be undefined on
// the engine's client, so a new method fails the typecheck until it is listed.
type Unlisted = Exclude<keyof NovaClient, (typeof NOVA_METHODS)[number]>;
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyMethodListed;
