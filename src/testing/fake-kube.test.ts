// FakeKube keeps the API server's rules the product code relies on, and its
// watch feeds the real informer: these pin both.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../k8s/client.ts';
import type { ResourceRef } from '../k8s/client.ts';
import { KubeFaultInjector, on } from '../k8s/fault-injection.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { FailoverSegment } from '../model/types.ts';
import type { ConfigMap } from '../store/configmap.ts';
import { FakeKube, scriptedKube } from './fake-kube.ts';
import { FakeInformers } from './informers.ts';
import { until } from './until.ts';

const NS = 'ns';
const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data,
});
const segment = (name: string): FailoverSegment => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'FailoverSegment',
  metadata: { name },
  spec: { name, recoveryMethod: 'auto', serviceType: 'compute' },
  status: { uuid: `uuid-${name}`, id: 1 },
});
const code = async (p: Promise<unknown>): Promise<number | string> =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof KubeError ? e.code : String(e)),
  );

test('a write carrying a stale resourceVersion is a 409 Conflict; a second create is 409 AlreadyExists', async () => {
  const kube = new FakeKube();
  const a = await kube.create(RESOURCES.configMaps, NS, cm('a'));
  await kube.replace(RESOURCES.configMaps, NS, 'a', { ...a, data: { x: '1' } });
  assert.is(await code(kube.replace(RESOURCES.configMaps, NS, 'a', { ...a, data: { x: '2' } })), 409);
  const again = await kube.create(RESOURCES.configMaps, NS, cm('a')).catch((e: KubeError) => e.reason);
  assert.is(again, 'AlreadyExists');
  assert.equal(kube.peek<ConfigMap>(RESOURCES.configMaps, NS, 'a')?.data, { x: '1' });
});

test('custom resources have a status subresource: create and replace ignore status, /status only changes status', async () => {
  const kube = new FakeKube();
  const created = await kube.create(RESOURCES.segments, NS, segment('s'));
  assert.is(created.status, undefined);
  const withStatus = await kube.replaceStatus(RESOURCES.segments, NS, 's', {
    ...created,
    spec: { ...created.spec, enabled: false },
    status: { uuid: 'u', id: 3 },
  });
  assert.is(withStatus.spec.enabled, undefined, 'spec is not written through /status');
  assert.is(withStatus.metadata.generation, 1);
  const replaced = await kube.replace(RESOURCES.segments, NS, 's', {
    ...withStatus,
    spec: { ...withStatus.spec, enabled: false },
    status: undefined,
  });
  assert.equal(replaced.status, { uuid: 'u', id: 3 }, 'status survives a replace of the main resource');
  assert.is(replaced.metadata.generation, 2, 'a spec change bumps generation');
});

test('finalizers hold a deleted object until they are removed; delete preconditions are checked', async () => {
  const kube = new FakeKube();
  const a = await kube.create<ConfigMap>(RESOURCES.configMaps, NS, {
    ...cm('a'),
    metadata: { name: 'a', finalizers: ['f'] },
  });
  assert.is(await code(kube.delete(RESOURCES.configMaps, NS, 'a', { preconditionUid: 'other' })), 409);
  await kube.delete(RESOURCES.configMaps, NS, 'a');
  const held = kube.peek<ConfigMap>(RESOURCES.configMaps, NS, 'a')!;
  assert.ok(held.metadata.deletionTimestamp);
  await kube.mergePatch(RESOURCES.configMaps, NS, 'a', { metadata: { finalizers: null } });
  assert.is(kube.peek(RESOURCES.configMaps, NS, 'a'), undefined);
  assert.ok(a.metadata.uid);
});

test('label and field selectors, and pages that share one snapshot', async () => {
  const kube = new FakeKube();
  for (let i = 0; i < 5; i++)
    await kube.create(RESOURCES.configMaps, NS, cm(`c${i}`, { role: i % 2 ? 'odd' : 'even' }));
  await kube.create(RESOURCES.configMaps, 'elsewhere', cm('x', { role: 'odd' }));
  const names = async (o: { labelSelector?: string; fieldSelector?: string }) =>
    (await kube.list<ConfigMap>(RESOURCES.configMaps, NS, o)).items.map((c) => c.metadata.name);
  assert.equal(await names({ labelSelector: 'role=odd' }), ['c1', 'c3']);
  assert.equal(await names({ labelSelector: 'role in (odd),role!=even' }), ['c1', 'c3']);
  assert.equal(await names({ labelSelector: '!role' }), []);
  assert.equal(await names({ fieldSelector: 'metadata.name!=c0,metadata.name!=c1' }), ['c2', 'c3', 'c4']);
  const first = await kube.list<ConfigMap>(RESOURCES.configMaps, NS, { limit: 2 });
  assert.is(first.items.length, 2);
  await kube.create(RESOURCES.configMaps, NS, cm('c9'));
  const all = await listAllPages<ConfigMap>(kube, RESOURCES.configMaps, NS, {}, 2);
  assert.is(all.items.length, 6);
  assert.ok(kube.callsOf('list').length >= 4, 'listed in pages');
});

test('the watch feeds the real informer: every write is in the cache when it returns, selectors included', async () => {
  const kube = new FakeKube();
  const informers = new FakeInformers(kube);
  await kube.create(RESOURCES.configMaps, NS, cm('before', { role: 'page' }));
  const cache = await informers.started<ConfigMap>(RESOURCES.configMaps, { namespace: NS, labelSelector: 'role=page' });
  const seen: string[] = [];
  cache.on('add', (o) => seen.push(`add ${o.metadata.name}`));
  cache.on('delete', (o) => seen.push(`delete ${o.metadata.name}`));
  assert.equal(
    cache.list().map((c) => c.metadata.name),
    ['before'],
  );
  await kube.create(RESOURCES.configMaps, NS, cm('p', { role: 'page' }));
  await kube.create(RESOURCES.configMaps, NS, cm('other'));
  assert.ok(cache.get('p'));
  assert.is(cache.get('other'), undefined);
  await kube.mergePatch(RESOURCES.configMaps, NS, 'p', { metadata: { labels: { role: 'gone' } } });
  assert.is(cache.get('p'), undefined, 'an object leaving the selector is a delete');
  assert.equal(seen, ['add p', 'delete p']);
  informers.stopAll();
});

test('holdWatches makes the cache lag behind the store until resumeWatches (stale reads can be tested)', async () => {
  const kube = new FakeKube();
  const informers = new FakeInformers(kube);
  const cache = await informers.started<ConfigMap>(RESOURCES.configMaps, { namespace: NS });
  kube.holdWatches();
  await kube.create(RESOURCES.configMaps, NS, cm('late'));
  assert.is(cache.get('late'), undefined);
  kube.resumeWatches();
  assert.ok(cache.get('late'));
  informers.stopAll();
});

test('a watch resuming below the compaction point is 410 Gone, and the informer relists', async () => {
  const kube = new FakeKube();
  const informers = new FakeInformers(kube);
  const cache = await informers.started<ConfigMap>(RESOURCES.configMaps, { namespace: NS });
  const rv = cache.lastResourceVersion();
  await kube.create(RESOURCES.configMaps, NS, cm('a'));
  kube.tracker.compact();
  const ref: ResourceRef = RESOURCES.configMaps;
  const gone = kube.watch(ref, NS, { resourceVersion: rv }, () => {}, new AbortController().signal);
  assert.is(await code(gone), 410);
  const listsBefore = kube.callsOf('list').length;
  kube.tracker.endWatches();
  await kube.create(RESOURCES.configMaps, NS, cm('b'));
  kube.tracker.compact();
  await until(() => !!cache.get('b'));
  assert.ok(kube.callsOf('list').length > listsBefore, 'relisted after the 410');
  informers.stopAll();
});

test('interceptors get the un-intercepted client; failNext fails one matching call', async () => {
  const kube = new FakeKube({
    interceptors: {
      create: (client, ref, ns, body) =>
        ref.plural === 'configmaps'
          ? Promise.reject(new KubeError(403, 'Forbidden', 'no'))
          : client.create(ref, ns, body),
    },
  });
  assert.is(await code(kube.create(RESOURCES.configMaps, NS, cm('a'))), 403);
  assert.is(await code(kube.create(RESOURCES.segments, NS, segment('s'))), 'ok');
  kube.failNext('patchStatus', new KubeError(503, 'ServiceUnavailable', 'etcd'), 'failoversegments');
  const status = { status: { uuid: 'u', id: 2 } };
  assert.is(await code(kube.mergePatch(RESOURCES.segments, NS, 's', status, { status: true })), 503);
  assert.is(await code(kube.mergePatch(RESOURCES.segments, NS, 's', status, { status: true })), 'ok');
});

test("KubeFaultInjector's faults apply to FakeKube as to the HTTP transport: a lost response was still applied", async () => {
  const kube = new FakeKube();
  const faults = new KubeFaultInjector()
    .add({ fault: 'lost-response', match: on('POST', '/configmaps'), times: 1 })
    .add({ fault: 'unavailable', match: on('GET', '/configmaps/b'), times: 1 });
  kube.useFaults(faults);
  assert.is(await code(kube.create(RESOURCES.configMaps, NS, cm('a'))), 0);
  assert.ok(kube.peek(RESOURCES.configMaps, NS, 'a'), 'the create was applied');
  await kube.create(RESOURCES.configMaps, NS, cm('b'));
  assert.is(await code(kube.get(RESOURCES.configMaps, NS, 'b')), 503);
  assert.is(await code(kube.get(RESOURCES.configMaps, NS, 'b')), 'ok');
  assert.equal(faults.injected['lost-response'], 1);
});

test('scriptedKube: scripted verbs answer, an unscripted verb rejects with 501', async () => {
  const kube = scriptedKube({ get: () => cm('x') });
  assert.is((await kube.get<ConfigMap>(RESOURCES.configMaps, NS, 'x')).metadata.name, 'x');
  assert.is(await code(kube.list(RESOURCES.configMaps, NS)), 501);
  assert.is(kube.callsOf('get').length, 1);
});

test.run();
