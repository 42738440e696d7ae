// The state metrics read counts the caches' events keep (cache-tally.ts), not
// every cached object per scrape; after any sequence of creates, changes and
// deletes they equal a full recount of the caches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { RESOURCES } from '../k8s/resources.ts';
import type { HaHost, Notification } from '../model/types.ts';
import { createStoreCaches } from './caches.ts';
import { FakeKube } from '../testing/fake-kube.ts';
import { FakeInformers } from '../testing/informers.ts';
import { prng } from '../domain/testing/fuzz.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { createdAtMs } from '../domain/created-at.ts';
import { hostSegmentUuid } from './mapping.ts';
import { registerStateMetrics, STATE_METRICS } from './state-metrics.ts';

const NOW = new Date('2026-11-29T13:00:00Z');
const SEGMENTS = ['aaaaaaaa-0000-0000-0000-000000000001', 'aaaaaaaa-0000-0000-0000-000000000002'];
const TYPES = ['COMPUTE_HOST', 'VM', 'PROCESS'] as const;
const PHASES = [undefined, 'new', 'running', 'error', 'finished', 'failed', 'ignored'] as const;

function randomHost(r: () => number, i: number): HaHost {
  const admitted = r() > 0.2;
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: { name: `h-${i}`, namespace: 'ns', generation: 1 },
    spec: { name: `host-${i}`, type: 'COMPUTE', reserved: r() < 0.3, onMaintenance: r() < 0.3 },
    ...(admitted
      ? {
          status: {
            id: i,
            uuid: `bbbbbbbb-0000-0000-0000-${String(i).padStart(12, '0')}`,
            segmentUuid: SEGMENTS[Math.floor(r() * 2)],
          },
        }
      : {}),
  } as unknown as HaHost;
}

function randomNotification(r: () => number, i: number): Notification {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const admitted = r() > 0.2;
  const phase = pick(PHASES);
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: {
      name: `n-${i}`,
      namespace: 'ns',
      creationTimestamp: `2026-11-29T12:${String(Math.floor(r() * 60)).padStart(2, '0')}:00Z`,
    },
    spec: { type: pick(TYPES), hostname: 'compute-1', generatedTime: '2026-11-29T12:00:00', payload: {} },
    ...(admitted
      ? {
          status: {
            id: i,
            uuid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
            ...(phase ? { phase } : {}),
          },
        }
      : {}),
  } as unknown as Notification;
}

/** The metrics as the scrape-time recount over every cached object gave them. */
function recount(hosts: HaHost[], notifications: Notification[]) {
  const byHost = new Map<string, number>();
  for (const h of hosts.filter(isAdmitted)) {
    const f = effectiveFlags(h);
    const key = `${hostSegmentUuid(h) ?? ''} ${f.onMaintenance} ${f.reserved}`;
    byHost.set(key, (byHost.get(key) ?? 0) + 1);
  }
  const byNote = new Map<string, number>();
  for (const t of TYPES) for (const p of PHASES.slice(1)) byNote.set(`${t} ${p}`, 0);
  let oldest = Infinity;
  for (const n of notifications.filter(isAdmitted)) {
    const key = `${n.spec.type} ${n.status?.phase ?? 'new'}`;
    byNote.set(key, (byNote.get(key) ?? 0) + 1);
    if (n.status?.phase === 'running') oldest = Math.min(oldest, createdAtMs(n));
  }
  return {
    hosts: [...byHost].sort(),
    notifications: [...byNote].sort(),
    oldest: oldest === Infinity ? 0 : (NOW.getTime() - oldest) / 1000,
  };
}

async function scraped(registry: Registry) {
  const json = await registry.getMetricsAsJSON();
  const values = (name: string) => json.find((m) => m.name === name)?.values ?? [];
  const hosts = values(STATE_METRICS.hosts)
    .filter((v) => v.value > 0)
    .map(
      (v) => [`${v.labels.segment_uuid} ${v.labels.on_maintenance} ${v.labels.reserved}`, v.value] as [string, number],
    );
  const notifications = values(STATE_METRICS.notifications).map(
    (v) => [`${v.labels.type} ${v.labels.status}`, v.value] as [string, number],
  );
  return {
    hosts: hosts.sort(),
    notifications: notifications.sort(),
    oldest: values(STATE_METRICS.oldestRunning)[0]?.value ?? NaN,
  };
}

test('the state metrics equal a full recount of the caches while hosts and notifications come, change and go', async () => {
  for (let seed = 1; seed <= 5; seed++) {
    const r = prng(seed);
    const kube = new FakeKube();
    const caches = createStoreCaches(new FakeInformers(kube).factory, 'ns');
    const registry = new Registry();
    // Some objects exist before the caches start (their initial list), the rest arrive as events.
    for (let i = 0; i < 10; i++) kube.seed(RESOURCES.hosts, randomHost(r, i));
    for (let i = 0; i < 20; i++) kube.seed(RESOURCES.notifications, randomNotification(r, i));
    registerStateMetrics(registry, caches, () => NOW);
    await Promise.all([caches.hosts.start(), caches.notifications.start()]);
    for (let step = 0; step < 200; step++) {
      const i = Math.floor(r() * 40);
      const roll = r();
      if (roll < 0.4) kube.seed(RESOURCES.notifications, randomNotification(r, i));
      else if (roll < 0.55) kube.seed(RESOURCES.hosts, randomHost(r, i % 15));
      else if (roll < 0.75) await kube.delete(RESOURCES.notifications, 'ns', `n-${i}`).catch(() => undefined);
      else if (roll < 0.8) await kube.delete(RESOURCES.hosts, 'ns', `h-${i % 15}`).catch(() => undefined);
      if (step % 20 === 19) {
        assert.equal(
          await scraped(registry),
          recount(caches.hosts.list(), caches.notifications.list()),
          `seed ${seed}, step ${step}`,
        );
      }
    }
    await Promise.all([caches.hosts.stop(), caches.notifications.stop()]);
  }
});

test.run();
