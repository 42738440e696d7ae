// State metrics computed from the informer caches at scrape time, so the
// alerts of docs/operations.md need no kube-state-metrics configuration:
// hosts by segment with their maintenance and reserved flags, notifications
// by type and status, and the age of the oldest running notification.
//
// Label values come from enums (type, status, the two flags) or from
// system-assigned identifiers (the segment uuid), never from request input
// such as names, so a client cannot blow up the series count.
import type { Registry } from 'prom-client';
import { gauge } from '../runtime/metric-registry.ts';
import type { NotificationStatus } from '../model/types.ts';
import type { StoreCaches } from './caches.ts';
import { hostSegmentUuid } from './mapping.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { createdAtMs } from '../domain/created-at.ts';

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

/** Registers the gauges on registry; each scrape reads the caches' current contents. */
export function registerStateMetrics(
  registry: Registry,
  caches: Pick<StoreCaches, 'hosts' | 'notifications'>,
  now: () => Date = () => new Date(),
): void {
  if (registry.getSingleMetric(STATE_METRICS.hosts)) return;
  gauge(
    registry,
    STATE_METRICS.hosts,
    'Masakari hosts by segment uuid and by their effective on_maintenance and reserved flags.',
    ['segment_uuid', 'on_maintenance', 'reserved'],
    function () {
      this.reset();
      const counts = new Map<string, { labels: Record<string, string>; n: number }>();
      for (const h of caches.hosts.list()) {
        if (!isAdmitted(h)) continue;
        const flags = effectiveFlags(h);
        const labels = {
          segment_uuid: hostSegmentUuid(h) ?? '',
          on_maintenance: String(flags.onMaintenance),
          reserved: String(flags.reserved),
        };
        const key = JSON.stringify(labels);
        const entry = counts.get(key) ?? { labels, n: 0 };
        entry.n++;
        counts.set(key, entry);
      }
      for (const { labels, n } of counts.values()) this.set(labels, n);
    },
  );
  gauge(
    registry,
    STATE_METRICS.notifications,
    'Notifications stored, by type and Masakari status (every combination is reported, zeros included).',
    ['type', 'status'],
    function () {
      const counts = new Map<string, number>();
      for (const t of NOTIFICATION_TYPES) for (const s of NOTIFICATION_STATUSES) counts.set(`${t}/${s}`, 0);
      for (const n of caches.notifications.list()) {
        if (!isAdmitted(n)) continue;
        const key = `${n.spec.type}/${n.status?.phase ?? 'new'}`;
        // an unknown type cannot pass the CRD schema; skipping it keeps the label set closed anyway
        if (counts.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const [key, n] of counts) {
        const [type = '', status = ''] = key.split('/');
        this.set({ type, status }, n);
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
      for (const n of caches.notifications.list()) {
        if (n.status?.phase !== 'running' || !isAdmitted(n)) continue;
        const since = createdAtMs(n);
        if (!Number.isNaN(since)) oldest = Math.min(oldest, since);
      }
      this.set(oldest === Infinity ? 0 : Math.max(0, (now().getTime() - oldest) / 1000));
    },
  );
}
