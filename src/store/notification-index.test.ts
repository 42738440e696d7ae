// The sorted notification index answers GET /v1/notifications exactly as
// paginate() over every notification does (same rows, same order, same
// errors), for random data and random queries, while objects come, change
// and go. And it keeps the unfinished notifications of each host.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HaService } from '../domain/ha-service.ts';
import type { NotificationPageQuery, Repository } from '../domain/repository.ts';
import type { Notification } from '../model/types.ts';
import type { Informer } from '../runtime/types.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { createStoreCaches } from './caches.ts';
import { FakeKube } from '../testing/fake-kube.ts';
import { FakeInformers } from '../testing/informers.ts';
import { toNotificationRecord } from './mapping.ts';
import { NotificationIndex } from './notification-index.ts';
import { prng as rng } from '../domain/testing/fuzz.ts';

/** The cache side of the index: the store's notification informer (with its id index) over a FakeKube, and writes to it. */
async function cacheOver() {
  const kube = new FakeKube();
  const cache = createStoreCaches(new FakeInformers(kube).factory, 'ns').notifications;
  await cache.start();
  return {
    cache,
    names: () => cache.list().map((n) => n.metadata.name!),
    get: (name: string) => cache.get(name),
    put: (n: Notification) =>
      void kube.seed(RESOURCES.notifications, { ...n, metadata: { ...n.metadata, namespace: 'ns' } }),
    drop: (name: string) => kube.delete(RESOURCES.notifications, 'ns', name),
  };
}
type Source = Awaited<ReturnType<typeof cacheOver>>;

const HOSTS = ['11111111-1111-1111-1111-111111111111', '22222222-2222-2222-2222-222222222222', ''];
const PHASES = [undefined, 'new', 'running', 'error', 'finished', 'failed', 'ignored'] as const;
const TYPES = ['COMPUTE_HOST', 'VM', 'PROCESS'] as const;

function randomNotification(r: () => number, i: number, id: number): Notification {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const second = Math.floor(r() * 5); // few distinct created_at values: many ties broken by id
  const admitted = r() > 0.1;
  const phase = pick(PHASES);
  const host = pick(HOSTS);
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: {
      name: `n-${i}`,
      namespace: 'ns',
      resourceVersion: String(i),
      creationTimestamp: `2026-11-29T12:00:0${second}Z`,
      labels: host ? { 'masakari.openkeel.io/host-uuid': host } : {},
    },
    spec: {
      type: pick(TYPES),
      hostname: 'compute-1',
      generatedTime: `2026-11-29T1${Math.floor(r() * 3)}:00:00`,
      payload: { event: 'STOPPED' },
    },
    ...(admitted
      ? {
          status: {
            id,
            uuid: `00000000-0000-0000-0000-${String(id).padStart(12, '0')}`,
            ...(phase ? { phase } : {}),
          },
        }
      : {}),
  } as unknown as Notification;
}

function services(source: Source) {
  const index = new NotificationIndex(source.cache);
  const records = () =>
    source.cache
      .list()
      .filter((n) => typeof n.status?.id === 'number')
      .map(toNotificationRecord);
  const base = { listNotifications: records, listHosts: () => [] } as unknown as Repository;
  const indexed = {
    ...base,
    pageNotifications(q: NotificationPageQuery) {
      let marker;
      if (q.markerId !== undefined) {
        marker = index.byIdFirst(q.markerId);
        if (!marker) return undefined;
      }
      return index.page(q.dir, q.limit, marker, q).map((e) => toNotificationRecord(e.obj));
    },
  } as Repository;
  const config = { osapi_max_limit: 7, duplicate_notification_detection_interval: 180 };
  const compute = { exists: async () => true };
  return { index, plain: new HaService(base, compute, config), fast: new HaService(indexed, compute, config) };
}

function outcome(f: () => unknown): string {
  try {
    return JSON.stringify(f());
  } catch (e) {
    return `error ${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
}

function randomQuery(r: () => number, ids: number[]): URLSearchParams {
  const q = new URLSearchParams();
  const maybe = (p: number) => r() < p;
  if (maybe(0.7)) q.set('limit', String(Math.floor(r() * 9)));
  if (maybe(0.5) && ids.length) q.set('marker', String(ids[Math.floor(r() * ids.length)]));
  else if (maybe(0.05)) q.set('marker', maybe(0.5) ? '999999' : 'abc');
  if (maybe(0.3)) q.append('sort_dir', maybe(0.5) ? 'asc' : 'desc');
  if (maybe(0.15)) q.append('sort_key', 'created_at');
  if (maybe(0.1)) q.append('sort_key', 'id');
  if (maybe(0.05)) q.append('sort_dir', 'sideways');
  if (maybe(0.3)) q.set('status', PHASES[1 + Math.floor(r() * 6)]!);
  if (maybe(0.3)) q.set('source_host_uuid', HOSTS[Math.floor(r() * 3)]!);
  if (maybe(0.3)) q.set('type', TYPES[Math.floor(r() * 3)]!);
  if (maybe(0.3)) q.set('generated-since', `2026-11-29T1${Math.floor(r() * 3)}:00:00`);
  return q;
}

/**
 * Random changes (`opsPerRound` between two rounds of queries) and random
 * queries, answered by the index and by sorting everything. Few changes per
 * round insert new entries one by one; many (a burst of watch events, the
 * initial list) sort and merge them in one pass, with removals and moves of
 * entries still waiting to be merged.
 */
async function agreesWithSorting(seed: number, opsPerRound: number, rounds = 40): Promise<void> {
  const r = rng(seed);
  const source = await cacheOver();
  const { plain, fast, index } = services(source);
  let next = 0;
  let fresh = 20_000;
  const ids: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < opsPerRound; k++) {
      const roll = r();
      const names = source.names();
      if (roll < 0.6 || names.length === 0) {
        const id = 1 + Math.floor(r() * 10_000);
        if (ids.includes(id)) continue;
        ids.push(id);
        source.put(randomNotification(r, next++, id));
      } else if (roll < 0.85) {
        // A status change (or admission) of an existing notification: same name and id.
        const name = names[Math.floor(r() * names.length)]!;
        const cur = source.get(name)!;
        let id = cur.status?.id;
        if (id === undefined) {
          // Admitted now: a fresh id, as the store allocates (ids are unique).
          id = fresh++;
          ids.push(id);
        }
        const changed = randomNotification(r, Number(name.slice(2)), id);
        changed.metadata.creationTimestamp = cur.metadata.creationTimestamp;
        source.put(changed);
      } else {
        await source.drop(names[Math.floor(r() * names.length)]!);
      }
    }
    for (let k = 0; k < 25; k++) {
      const q = randomQuery(r, ids);
      assert.is(
        outcome(() => fast.listNotifications(q)),
        outcome(() => plain.listNotifications(q)),
        `seed ${seed}, round ${round}, query ${q.toString()}`,
      );
    }
  }
  assert.ok(index.size > 20, `enough data to mean something (${index.size})`);
}

test('the index pages exactly like sorting every notification, for random data, queries and changes', async () => {
  await agreesWithSorting(20261201, 5);
});

test('the same when changes come in bursts (sorted and merged in one pass), removals of unmerged ones included', async () => {
  await agreesWithSorting(20261202, 40, 12);
});

test('a cold start listed in name order (unrelated to created_at) is indexed by one sort, not by a splice per entry', () => {
  // Inserted one by one, each entry would move half the array: with 100,000
  // notifications about 2.5 billion element moves, minutes on a busy machine.
  const handlers: Array<(n: Notification) => void> = [];
  const cache = { list: () => [], on: (_: string, h: (n: Notification) => void) => handlers.push(h) };
  const index = new NotificationIndex(cache as unknown as Informer<Notification>);
  const N = 20_000;
  const r = rng(7);
  const order = Array.from({ length: N }, (_, i) => i);
  for (let i = N - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const base = Date.parse('2026-11-01T00:00:00Z');
  const splice = Array.prototype.splice;
  let bigSplices = 0;
  Array.prototype.splice = function (this: unknown[], ...args: unknown[]) {
    if (this.length > 1000) bigSplices++;
    return splice.apply(this, args as Parameters<typeof splice>);
  } as typeof splice;
  let newest: number[];
  let oldest: number[];
  try {
    for (const i of order) {
      const at = new Date(base + i * 1000).toISOString().replace('.000Z', 'Z');
      handlers[0]!({
        metadata: { name: `n-${i}`, creationTimestamp: at, labels: {} },
        spec: { type: 'VM', hostname: 'c', generatedTime: at, payload: {} },
        status: { id: i + 1, uuid: `u-${i}`, phase: 'finished', sourceHostUuid: 'h' },
      } as unknown as Notification);
    }
    newest = index.page('desc', 3, undefined, {}).map((e) => e.id);
    oldest = index.page('asc', 3, undefined, {}).map((e) => e.id);
  } finally {
    Array.prototype.splice = splice;
  }
  assert.equal(newest, [N, N - 1, N - 2]);
  assert.equal(oldest, [1, 2, 3]);
  assert.is(index.size, N);
  assert.is(bigSplices, 0);
});

test('unfinished notifications are counted per source host and follow status changes and deletes', async () => {
  const source = await cacheOver();
  const { index } = services(source);
  const host = HOSTS[0]!;
  const n = (name: string, id: number, phase?: string): Notification =>
    ({
      metadata: { name, creationTimestamp: '2026-11-29T12:00:00Z', labels: {} },
      spec: { type: 'COMPUTE_HOST', hostname: 'c', generatedTime: '2026-11-29T12:00:00', payload: {} },
      status: { id, uuid: `u-${id}`, sourceHostUuid: host, ...(phase ? { phase } : {}) },
    }) as unknown as Notification;
  source.put(n('a', 1));
  source.put(n('b', 2, 'running'));
  source.put(n('c', 3, 'finished'));
  assert.is(index.unfinishedCount(host), 2);
  source.put(n('a', 1, 'finished'));
  assert.is(index.unfinishedCount(host), 1);
  source.put(n('b', 2, 'error'));
  assert.is(index.unfinishedCount(host), 1);
  await source.drop('b');
  assert.is(index.unfinishedCount(host), 0);
  assert.is(index.unfinishedCount(HOSTS[1]!), 0);
});

test('an entry is three fields (id, created_at in seconds, the object); its filter columns are read from the object', async () => {
  const src = await cacheOver();
  const r = rng(7);
  const n = randomNotification(r, 1, 1);
  n.status = {
    ...n.status,
    id: 1,
    uuid: '00000000-0000-0000-0000-000000000001',
    phase: 'running',
  } as Notification['status'];
  n.metadata.creationTimestamp = '2026-11-29T12:00:05Z';
  src.put(n);
  const index = new NotificationIndex(src.cache);
  const [entry] = index.page('asc', 10, undefined, {});
  assert.ok(entry);
  assert.equal(Object.keys(entry), ['id', 'createdAt', 'obj']);
  assert.is(entry.createdAt, Date.parse('2026-11-29T12:00:05Z') / 1000);
  assert.is(entry.status, 'running');
  assert.is(entry.name, 'n-1');
});

test('the index keeps no map or set per notification (by name, id or arrival): changes find their entry by its key', async () => {
  // At 100,000 notifications each such map is about 4 MiB of the api's heap,
  // and as much again of garbage while it grows during the first list.
  const source = await cacheOver();
  const { index } = services(source);
  const r = rng(11);
  for (let i = 0; i < 300; i++) source.put(randomNotification(r, i, i + 1));
  for (let i = 0; i < 300; i += 3) source.put(randomNotification(r, i, i + 1)); // status changes, same ids
  for (let i = 1; i < 300; i += 7) await source.drop(`n-${i}`);
  const admitted = source.cache.list().filter((n) => typeof n.status?.id === 'number').length;
  assert.is(index.size, admitted);
  const big = Object.entries(index).filter(([, v]) => (v instanceof Map || v instanceof Set) && v.size > HOSTS.length);
  assert.equal(
    big.map(([k]) => k),
    [],
  );
  // Every admitted notification is reachable as a marker through the cache's id index.
  for (const n of source.cache.list()) {
    if (typeof n.status?.id !== 'number') continue;
    assert.is(index.byIdFirst(n.status.id)?.obj.metadata.name, n.metadata.name);
  }
});

test.run();
