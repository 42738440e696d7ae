// State metrics from the informer caches, so the
// alerts of docs/operations.md need no kube-state-metrics configuration:
// hosts by segment with their maintenance and reserved flags, notifications
// by type and status, and the age of the oldest running notification.
//
// Label values come from enums (type, status, the two flags) or from
// system-assigned identifiers (the segment uuid), never from request input
// such as names, so a client cannot blow up the series count.
import type { Registry } from 'prom-client';
import { gauge } from '../runtime/metric-registry.ts';
import type { HaHost, Notification, NotificationStatus } from '../model/types.ts';
import { CacheSubset, CacheTally } from './cache-tally.ts';
import type { StoreCaches } from './caches.ts';
import { hostSegmentUuid } from './mapping.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { createdAtMs } from '../domain/created-at.ts';
import { systemClock } from '../time/clock.ts';

export const STATE_METRICS = {
  hosts: 'masakari_hosts',
  notifications: 'masakari_notifications_stored',
  oldestRunning: 'masakari_notification_oldest_running_age_seconds',
} as const;

const NOTIFICATION_TYPES = ['COMPUTE_HOST', 'VM', 'PROCESS'] as const;
const NOTIFICATION_STATUSES: readonly NotificationStatus[] = [
  'new',
  'running',
  'error',
  'failed',
  'ignored',
  'finished',
];

/** The key of a host in the hosts gauge: its labels, in the gauge's label order, joined by tabs. */
function hostKey(h: HaHost): string | undefined {
  if (!isAdmitted(h)) return undefined;
  const flags = effectiveFlags(h);
  return [hostSegmentUuid(h) ?? '', String(flags.onMaintenance), String(flags.reserved)].join('\t');
}

/** The key of a notification in the notifications gauge: `type/status`. */
function notificationKey(n: Notification): string | undefined {
  return isAdmitted(n) ? `${n.spec.type}/${n.status?.phase ?? 'new'}` : undefined;
}

const isRunning = (n: Notification): boolean => n.status?.phase === 'running' && isAdmitted(n);

/**
 * Registers the gauges on registry. Each scrape reads counts the caches'
 * events keep up to date (cache-tally.ts), and the few running
 * notifications: never every cached object.
 */
export function registerStateMetrics(
  registry: Registry,
  caches: Pick<StoreCaches, 'hosts' | 'notifications'>,
  now: () => Date = () => systemClock.now(),
): void {
  if (registry.getSingleMetric(STATE_METRICS.hosts)) return;
  const hosts = new CacheTally(caches.hosts, hostKey);
  const notifications = new CacheTally(caches.notifications, notificationKey);
  const running = new CacheSubset(caches.notifications, isRunning);
  gauge(
    registry,
    STATE_METRICS.hosts,
    'Masakari hosts by segment uuid and by their effective on_maintenance and reserved flags.',
    ['segment_uuid', 'on_maintenance', 'reserved'],
    function () {
      this.reset();
      for (const [key, n] of hosts.entries()) {
        const [segment_uuid = '', on_maintenance = '', reserved = ''] = key.split('\t');
        this.set({ segment_uuid, on_maintenance, reserved }, n);
      }
    },
  );
  gauge(
    registry,
    STATE_METRICS.notifications,
    'Notifications stored, by type and Masakari status (every combination is reported, zeros included).',
    ['type', 'status'],
    function () {
      // an unknown type cannot pass the CRD schema; reporting the known ones only keeps the label set closed anyway
      for (const type of NOTIFICATION_TYPES) {
        for (const status of NOTIFICATION_STATUSES) this.set({ type, status }, notifications.get(`${type}/${status}`));
      }
    },
  );
  gauge(
    registry,
    STATE_METRICS.oldestRunning,
    'Age in seconds (since created_at) of the oldest notification in status running; 0 when none runs.',
    [],
    function () {
      let oldest = Infinity;
      for (const n of running.values()) {
        const since = createdAtMs(n);
        if (!Number.isNaN(since)) oldest = Math.min(oldest, since);
      }
      this.set(oldest === Infinity ? 0 : Math.max(0, (now().getTime() - oldest) / 1000));
    },
  );
}
