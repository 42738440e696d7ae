import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createIdAllocator } from './ids.ts';
import { FakeKube } from '../testing/fake-kube.ts';

test('ids are unique and increasing per process, and two processes never share one', async () => {
  const kube = new FakeKube();
  const a = createIdAllocator(kube, 'ns', 'segments', 4);
  const b = createIdAllocator(kube, 'ns', 'segments', 4);
  const got: number[] = [];
  for (let i = 0; i < 10; i++) got.push(await a.next(), await b.next());
  assert.is(new Set(got).size, got.length);
  const fromA = got.filter((_, i) => i % 2 === 0);
  assert.equal(
    fromA,
    [...fromA].sort((x, y) => x - y),
  );
});

test('the next block is reserved before the current one runs out, so a create never waits for it', async () => {
  const kube = new FakeKube();
  const ids = createIdAllocator(kube, 'ns', 'hosts', 8);
  for (let i = 0; i < 6; i++) await ids.next(); // 2 left of the first block: prefetch has started
  await new Promise((r) => setImmediate(r));
  const replacesBefore = kube.calls.replace ?? 0;
  assert.ok(replacesBefore >= 1, 'the second block was reserved in the background');
  const rest: number[] = [];
  for (let i = 0; i < 4; i++) rest.push(await ids.next());
  assert.equal(rest, [7, 8, 9, 10]);
});

test('a warmed allocator reserves its first block in the background: the first id waits for no write', async () => {
  const kube = new FakeKube();
  const ids = createIdAllocator(kube, 'ns', 'notifications', 8);
  ids.warm();
  ids.warm(); // once only
  await new Promise((r) => setImmediate(r));
  const writes = () => (kube.calls.create ?? 0) + (kube.calls.replace ?? 0);
  assert.is(writes(), 1, 'one block reserved');
  assert.is(await ids.next(), 1);
  assert.is(writes(), 1, 'the first id came from the warmed block');
  const failing = createIdAllocator(kube, 'ns', 'hosts', 8);
  kube.failNext('get', new Error('API server down'));
  failing.warm();
  await new Promise((r) => setImmediate(r));
  assert.is(await failing.next(), 1, 'a failed warm-up is retried by next()');
});

test('concurrent callers in one process get distinct consecutive ids', async () => {
  const kube = new FakeKube();
  const ids = createIdAllocator(kube, 'ns', 'notifications', 5);
  const got = await Promise.all(Array.from({ length: 23 }, () => ids.next()));
  assert.equal(
    [...got].sort((x, y) => x - y),
    Array.from({ length: 23 }, (_, i) => i + 1),
  );
});

test.run();
