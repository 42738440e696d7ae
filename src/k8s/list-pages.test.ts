import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { KubeError } from './client.ts';
import type { KubeList, ListOptions } from './client.ts';
import { listAllPages, MAX_PAGED_SNAPSHOTS } from './list-pages.ts';
import { RESOURCES } from './resources.ts';
import { scriptedKube } from '../testing/fake-kube.ts';

type Item = { metadata: { name: string } };
const items = (...names: string[]): Item[] => names.map((name) => ({ metadata: { name } }));

test('every request is a page: limit set, continue token followed, one snapshot version returned', async () => {
  const pages: KubeList<Item>[] = [
    { metadata: { resourceVersion: '7', continue: 'c1' }, items: items('a', 'b') },
    { metadata: { resourceVersion: '7', continue: 'c2' }, items: items('c', 'd') },
    { metadata: { resourceVersion: '7' }, items: items('e') },
  ];
  let n = 0;
  const kube = scriptedKube({ list: () => pages[n++] });
  const all = await listAllPages<Item>(kube, RESOURCES.configMaps, 'ns', { labelSelector: 'x=y' }, 2);
  assert.equal(
    all.items.map((i) => i.metadata.name),
    ['a', 'b', 'c', 'd', 'e'],
  );
  assert.equal(all.metadata, { resourceVersion: '7' });
  const opts = kube.callsOf('list').map((c) => c.args[2] as ListOptions);
  assert.equal(opts, [
    { labelSelector: 'x=y', limit: 2, continue: undefined },
    { labelSelector: 'x=y', limit: 2, continue: 'c1' },
    { labelSelector: 'x=y', limit: 2, continue: 'c2' },
  ]);
});

test('a continue token compacted away restarts paging from a fresh snapshot, never one unpaged list', async () => {
  const script: Array<KubeList<Item> | KubeError> = [
    { metadata: { resourceVersion: '7', continue: 'old' }, items: items('a', 'stale') },
    new KubeError(410, 'Expired', 'The provided continue parameter is too old'),
    { metadata: { resourceVersion: '20', continue: 'new' }, items: items('a', 'b') },
    { metadata: { resourceVersion: '20' }, items: items('c') },
  ];
  let n = 0;
  const kube = scriptedKube({
    list: () => {
      const next = script[n++]!;
      if (next instanceof KubeError) throw next;
      return next;
    },
  });
  const all = await listAllPages<Item>(kube, RESOURCES.configMaps, 'ns', {}, 2);
  assert.equal(
    all.items.map((i) => i.metadata.name),
    ['a', 'b', 'c'],
  );
  assert.is(all.metadata.resourceVersion, '20');
  const opts = kube.callsOf('list').map((c) => c.args[2] as ListOptions);
  assert.ok(
    opts.every((o) => o.limit === 2),
    'no request without a limit',
  );
  assert.equal(
    opts.map((o) => o.continue),
    [undefined, 'old', undefined, 'new'],
  );
});

test('a snapshot that keeps expiring gives up with the 410 after a bounded number of restarts', async () => {
  let n = 0;
  const kube = scriptedKube({
    list: (_r, _ns, o) => {
      n++;
      if (o?.continue) throw new KubeError(410, 'Expired', 'too old');
      return { metadata: { resourceVersion: String(n), continue: 'c' }, items: items('a') };
    },
  });
  assert.is((await rejection(listAllPages<Item>(kube, RESOURCES.configMaps, 'ns', {}, 1), KubeError)).code, 410);
  assert.is(n, MAX_PAGED_SNAPSHOTS * 2);
  assert.ok(kube.callsOf('list').every((c) => (c.args[2] as ListOptions).limit === 1));
});

test('keep reduces each page as it arrives, before the next page is asked for, and drops what it maps to undefined', async () => {
  const pages: KubeList<Item>[] = [
    { metadata: { resourceVersion: '7', continue: 'c1' }, items: items('a', 'b') },
    { metadata: { resourceVersion: '7' }, items: items('c', 'd') },
  ];
  const seen: string[] = [];
  let n = 0;
  const kube = scriptedKube({
    list: () => {
      seen.push(`page ${n + 1}`);
      return pages[n++];
    },
  });
  const all = await listAllPages<Item, string>(kube, RESOURCES.configMaps, 'ns', {}, 2, (item) => {
    seen.push(item.metadata.name);
    return item.metadata.name === 'c' ? undefined : item.metadata.name.toUpperCase();
  });
  assert.equal(all.items, ['A', 'B', 'D']);
  assert.equal(seen, ['page 1', 'a', 'b', 'page 2', 'c', 'd']);
});

test('a paced list waits between pages, not before the first', async () => {
  const pages: KubeList<Item>[] = [
    { metadata: { resourceVersion: '7', continue: 'c1' }, items: items('a') },
    { metadata: { resourceVersion: '7', continue: 'c2' }, items: items('b') },
    { metadata: { resourceVersion: '7' }, items: items('c') },
  ];
  let n = 0;
  const asked: number[] = [];
  const started = performance.now();
  const kube = scriptedKube({
    list: () => {
      asked.push(performance.now() - started);
      return pages[n++];
    },
  });
  const all = await listAllPages<Item>(kube, RESOURCES.configMaps, 'ns', {}, 1, undefined, 40);
  assert.is(all.items.length, 3);
  assert.ok(asked[0]! < 30, 'the first page at once');
  assert.ok(asked[1]! - asked[0]! >= 39 && asked[2]! - asked[1]! >= 39, `then one page per gap: ${asked.join(', ')}`);
});

test.run();
