// Retention: which notifications are deleted (terminal and ended long enough
// ago), which are kept (new, running, error however old; terminal but recent),
// and that their duplicate claims go with them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { RESOURCES } from '../k8s/resources.ts';
import { LABELS } from '../model/constants.ts';
import type { Notification, NotificationStatus } from '../model/types.ts';
import type { ConfigMap } from './configmap.ts';
import { ROLES } from './configmap.ts';
import { purgeNotifications, runRetention } from './retention.ts';
import { pageObject } from './journal-pages.ts';
import { keepAll } from '../k8s/list-items.ts';
import type { KubeClient } from '../k8s/client.ts';
import { NS, hostInput, segmentInput, storeFixture } from './testing/fixture.ts';

const DAY = 86_400_000;
const NOW = new Date('2026-03-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Notifications created through the repository (so they have claims), then moved to `phase` at `endedDaysAgo`. */
async function scenario(rows: Array<[string, NotificationStatus, number]>) {
  const f = await storeFixture();
  const s = await f.repo.createSegment(segmentInput('s'));
  const h = await f.repo.createHost(s.uuid, hostInput('compute-1'));
  const names: Record<string, string> = {};
  for (const [label, phase, endedDaysAgo] of rows) {
    const n = await f.repo.createNotification(
      {
        type: 'PROCESS',
        hostname: 'compute-1',
        generated_time: '2026-01-01T00:00:00',
        payload: { process_name: label, event: 'STOPPED' },
        source_host_uuid: h.uuid,
        failover_segment_uuid: s.uuid,
      },
      180,
    );
    await f.repo.settle();
    await f.kube.mergePatch(
      RESOURCES.notifications,
      NS,
      n.k8sName,
      { status: { phase, updatedAt: iso(NOW.getTime() - endedDaysAgo * DAY) } },
      { status: true },
    );
    names[label] = n.k8sName;
  }
  const left = () =>
    f.kube
      .all<Notification>(RESOURCES.notifications, NS)
      .map((n) => Object.entries(names).find(([, k]) => k === n.metadata.name)?.[0])
      .sort();
  const claims = () =>
    f.kube
      .all<ConfigMap>(RESOURCES.configMaps, NS)
      .filter((c) => c.metadata.labels?.[LABELS.role] === ROLES.notificationClaim).length;
  return { ...f, left, claims, hostUuid: h.uuid, segUuid: s.uuid };
}

const ROWS: Array<[string, NotificationStatus, number]> = [
  ['finished-old', 'finished', 40],
  ['failed-old', 'failed', 31],
  ['ignored-old', 'ignored', 100],
  ['finished-recent', 'finished', 29],
  ['running-old', 'running', 400],
  ['new-old', 'new', 400],
  ['error-old', 'error', 400],
];

test('retention deletes terminal notifications that ended before the period, and nothing else', async () => {
  const f = await scenario(ROWS);
  assert.is(f.claims(), ROWS.length);
  const log = pino({ level: 'silent' });
  const result = await runRetention({
    kube: f.kube,
    namespace: NS,
    retentionDays: 30,
    log,
    now: () => NOW,
  });
  assert.is(result?.deleted, 3);
  assert.equal(result?.matched, { finished: 1, failed: 1, ignored: 1 });
  // a running (or new, or error) notification older than the period is kept
  assert.equal(f.left(), ['error-old', 'finished-recent', 'new-old', 'running-old']);
  // their duplicate claims went with them
  assert.is(f.claims(), 4);
});

test('retention of 0 or less is disabled', async () => {
  const f = await scenario(ROWS);
  const log = pino({ level: 'silent' });
  for (const retentionDays of [0, -1]) {
    assert.is(await runRetention({ kube: f.kube, namespace: NS, retentionDays, log }), undefined);
  }
  assert.is(f.left().length, ROWS.length);
});

test('a dry run counts and deletes nothing; max rows bounds a real run', async () => {
  const f = await scenario(ROWS);
  const dry = await purgeNotifications({
    kube: f.kube,
    namespace: NS,
    ageInDays: 30,
    now: NOW,
    dryRun: true,
  });
  assert.equal(dry, { examined: 7, matched: { finished: 1, failed: 1, ignored: 1 }, deleted: 0 });
  assert.is(f.left().length, ROWS.length);
  const one = await purgeNotifications({
    kube: f.kube,
    namespace: NS,
    ageInDays: 30,
    now: NOW,
    maxRows: 1,
    sleep: async () => undefined,
  });
  assert.is(one.deleted, 1);
  assert.is(f.left().length, ROWS.length - 1);
});

test('after a purge the notification is gone from the API and an identical one is accepted again', async () => {
  const f = await scenario([['done', 'finished', 0.5]]);
  const [record] = f.repo.listNotifications();
  const result = await purgeNotifications({
    kube: f.kube,
    namespace: NS,
    ageInDays: 0,
    now: NOW,
    sleep: async () => undefined,
  });
  assert.is(result.deleted, 1);
  assert.is(f.repo.getNotification(record!.notification_uuid), undefined);
  // no claim left behind to call the same notification a duplicate
  const again = await f.repo.createNotification(
    {
      type: 'PROCESS',
      hostname: 'compute-1',
      generated_time: '2026-01-01T00:00:00',
      payload: { process_name: 'done', event: 'STOPPED' },
      source_host_uuid: f.hostUuid,
      failover_segment_uuid: f.segUuid,
    },
    180,
  );
  assert.is.not(again.notification_uuid, record!.notification_uuid);
});

test('a purge reads each notification without its history, and still deletes its journal pages', async () => {
  const f = await scenario([['finished-old', 'finished', 40]]);
  const name = f.kube.all<Notification>(RESOURCES.notifications, NS)[0]!.metadata.name!;
  const history = {
    vmoves: [{ uuid: 'vm-1', status: 'succeeded' }],
    recoveryWorkflowDetails: [{ name: 'EvacuateInstancesTask', progress: 1, state: 'SUCCESS', run: 0 }],
    engine: { journalPages: 1, attempt: 'x' },
  };
  await f.kube.mergePatch(RESOURCES.notifications, NS, name, { status: history }, { status: true });
  const stored = f.kube.peek<Notification>(RESOURCES.notifications, NS, name)!;
  await f.kube.create(RESOURCES.configMaps, NS, pageObject(stored, { seq: 0, vmoves: [] }));
  const pages = () =>
    f.kube
      .all<ConfigMap>(RESOURCES.configMaps, NS)
      .filter((c) => c.metadata.labels?.[LABELS.role] === ROLES.journalPage);
  assert.is(pages().length, 1);

  // A client that reads lists item by item, as the real one does: what the purge keeps of each item is recorded.
  const kept: Notification[] = [];
  const kube = new Proxy(f.kube, {
    get(target, prop) {
      if (prop === 'listKept')
        return async <T, U>(...[ref, ns, o, keep]: Parameters<NonNullable<KubeClient['listKept']>>) => {
          const page = await target.list<T>(ref, ns, o);
          const items = keepAll(page.items, keep as (item: T) => U | undefined);
          if (ref === RESOURCES.notifications) kept.push(...(items as Notification[]));
          return { ...page, items };
        };
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as KubeClient;
  const result = await purgeNotifications({ kube, namespace: NS, ageInDays: 30, now: NOW, sleep: async () => {} });
  assert.is(result.deleted, 1);
  assert.is(pages().length, 0, 'the journal page went with it');
  assert.is(kept.length, 1);
  const status = kept[0]!.status!;
  assert.is(status.vmoves, undefined);
  assert.is(status.recoveryWorkflowDetails, undefined);
  assert.equal(status.engine, { journalPages: 1 }, 'of the bookkeeping, only the page count');
  assert.is(kept[0]!.metadata.managedFields, undefined);
});

test("the leader's retention reads its cache, lists no notification, and deletes none that changed since the cache saw it", async () => {
  const f = await scenario(ROWS);
  const byLabel = (label: string) =>
    f.kube.all<Notification>(RESOURCES.notifications, NS).find((n) => n.spec.payload.process_name === label)!;
  // The cache's copies, then a change it has not seen yet: failed-old is relabelled in the API server.
  const cached = f.kube.all<Notification>(RESOURCES.notifications, NS);
  await f.kube.mergePatch(RESOURCES.notifications, NS, byLabel('failed-old').metadata.name!, {
    metadata: { labels: { edited: 'yes' } },
  });
  const from = f.kube.log.length;
  const result = await runRetention({
    kube: f.kube,
    namespace: NS,
    retentionDays: 30,
    log: pino({ level: 'silent' }),
    now: () => NOW,
    cached: () => cached,
  });
  assert.is(result?.examined, ROWS.length);
  assert.equal(result?.matched, { finished: 1, failed: 1, ignored: 1 });
  assert.is(result?.deleted, 2, 'failed-old changed after the cache read it: kept for the next pass');
  assert.equal(f.left(), ['error-old', 'failed-old', 'finished-recent', 'new-old', 'running-old']);
  const notificationLists = f.kube.log
    .slice(from)
    .filter((c) => c.method === 'list' && JSON.stringify(c.args[0]).includes('notifications'));
  assert.is(notificationLists.length, 0);
});

test('a pass over a large cache lets other work in while it reads', async () => {
  const now = new Date('2026-03-01T00:00:00Z');
  const kept = Array.from({ length: 5_000 }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Notification' as const,
    metadata: { name: `n${i}`, uid: `u${i}`, resourceVersion: String(i) },
    spec: { type: 'VM' as const, hostname: 'h', generatedTime: '2026-02-28T00:00:00', payload: {} },
    status: { phase: 'finished' as const, updatedAt: '2026-02-28T00:00:00Z', uuid: `x${i}` },
  }));
  const { kube } = await storeFixture();
  let ranBetween = false;
  setImmediate(() => (ranBetween = true));
  const result = await purgeNotifications({
    kube,
    namespace: NS,
    ageInDays: 30,
    now,
    cached: () => kept,
  });
  assert.is(result.examined, 5_000);
  assert.is(result.deleted, 0);
  assert.ok(ranBetween, 'a callback queued before the pass ran before it ended');
});

test.run();
