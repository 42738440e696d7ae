import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ItemExponentialRateLimiter } from './ratelimiter.ts';
import { WorkQueue } from './workqueue.ts';
import { FakeClock } from '../testing/fake-clock.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('repeated adds of a queued key collapse into one item', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.add('b');
  q.add('a');
  q.add('a');
  assert.is(q.len(), 2);
  assert.is(await q.get(), 'a');
  assert.is(await q.get(), 'b');
  assert.is(q.len(), 0);
});

test('keys are handed out in the order they were first added', async () => {
  const q = new WorkQueue();
  for (const k of ['c', 'a', 'b', 'a', 'c']) q.add(k);
  const got = [await q.get(), await q.get(), await q.get()];
  assert.equal(got, ['c', 'a', 'b']);
});

test('a key being processed is not handed out again until done', async () => {
  const q = new WorkQueue();
  q.add('a');
  const first = await q.get();
  q.add('a');
  assert.is(q.len(), 0, 'the re-add waits while a is processing');
  let second: string | undefined;
  void q.get().then((k) => (second = k));
  await tick();
  assert.is(second, undefined);
  q.done(first!);
  await tick();
  assert.is(second, 'a');
});

test('several re-adds while processing run the key exactly once more', async () => {
  const q = new WorkQueue();
  q.add('a');
  const k = (await q.get())!;
  q.add('a');
  q.add('a');
  q.add('a');
  q.done(k);
  assert.is(q.len(), 1);
  assert.is(await q.get(), 'a');
  q.done('a');
  assert.is(q.len(), 0);
});

test('done without a re-add leaves the queue empty', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.done((await q.get())!);
  assert.is(q.len(), 0);
  assert.is(q.inFlight(), 0);
});

test('get waits for an add', async () => {
  const q = new WorkQueue();
  const p = q.get();
  q.add('x');
  assert.is(await p, 'x');
});

test('concurrent getters each receive a different key', async () => {
  const q = new WorkQueue();
  const a = q.get();
  const b = q.get();
  q.add('1');
  q.add('2');
  assert.equal([await a, await b], ['1', '2']);
});

test('addAfter adds the key once the delay has passed', () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('a', 100);
  assert.is(q.len(), 0);
  clock.advance(99);
  assert.is(q.len(), 0);
  clock.advance(1);
  assert.is(q.len(), 1);
});

test('addAfter keeps the earliest pending time for a key', () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('a', 100);
  q.addAfter('a', 500);
  clock.advance(100);
  assert.is(q.len(), 1);
  q.addAfter('b', 500);
  q.addAfter('b', 50);
  clock.advance(50);
  assert.is(q.len(), 2);
  assert.is(clock.pendingTimers(), 0, 'the superseded 500 ms timer was cancelled');
});

test('addAfter with no delay adds at once', () => {
  const q = new WorkQueue({ clock: new FakeClock() });
  q.addAfter('a', 0);
  assert.is(q.len(), 1);
});

test('addRateLimited backs off per key and forget resets the history', () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter(10, 1000) });
  q.addRateLimited('a');
  assert.is(q.numRequeues('a'), 1);
  clock.advance(9);
  assert.is(q.len(), 0);
  clock.advance(1);
  assert.is(q.len(), 1, 'first retry after 10 ms');
  q.addRateLimited('b');
  q.addRateLimited('b');
  assert.is(q.numRequeues('b'), 2);
  q.forget('b');
  assert.is(q.numRequeues('b'), 0);
});

test('shutDown releases waiting getters and refuses new work', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  const waiting = q.get();
  q.addAfter('later', 100);
  q.shutDown();
  assert.is(await waiting, undefined);
  q.add('x');
  assert.is(q.len(), 0);
  assert.is(await q.get(), undefined);
  assert.is(clock.pendingTimers(), 0, 'delayed adds are cancelled');
  assert.ok(q.isShuttingDown());
});

test('keys queued at shutdown are not handed out', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.shutDown();
  assert.is(await q.get(), undefined);
});

test('a key in process at shutdown can still be marked done', async () => {
  const q = new WorkQueue();
  q.add('a');
  const k = (await q.get())!;
  q.shutDown();
  q.add('a');
  q.done(k);
  assert.is(q.inFlight(), 0);
  assert.is(q.len(), 0);
});

test.run();
