import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BackoffManager, RECONNECT_BACKOFF, sleepUnlessAborted } from './backoff.ts';

const steady = { steps: Infinity, delayMs: 200, factor: 2, jitter: 0, capMs: 30_000 };

test('delays double from the first delay up to the cap', () => {
  const b = new BackoffManager(steady);
  const delays = Array.from({ length: 10 }, () => b.next());
  assert.equal(delays, [200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  assert.is(b.attempts, 10);
});

test('jitter stretches each delay by up to itself times the jitter, as wait.Backoff does', () => {
  assert.is(new BackoffManager({ ...steady, delayMs: 1000, jitter: 0.5 }, () => 1).next(), 1500);
  assert.is(new BackoffManager({ ...steady, delayMs: 1000, jitter: 0.5 }, () => 0).next(), 1000);
});

test('a reconnect waits 100-200 ms first and 15-30 s at most', () => {
  const low = new BackoffManager(RECONNECT_BACKOFF, () => 0);
  const high = new BackoffManager(RECONNECT_BACKOFF, () => 1);
  assert.equal([low.next(), high.next()], [100, 200]);
  for (let i = 0; i < 20; i++) {
    low.next();
    high.next();
  }
  assert.equal([low.next(), high.next()], [15_000, 30_000]);
});

test('reset starts over after a healthy period', () => {
  const b = new BackoffManager({ ...steady, delayMs: 100 });
  b.next();
  b.next();
  b.reset();
  assert.is(b.next(), 100);
});

test('sleepUnlessAborted returns early on abort', async () => {
  const ac = new AbortController();
  const started = Date.now();
  setTimeout(() => ac.abort(), 10);
  await sleepUnlessAborted(10_000, ac.signal);
  assert.ok(Date.now() - started < 1000);
});

test.run();
