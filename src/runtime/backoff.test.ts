import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Backoff, sleepUnlessAborted } from './backoff.ts';

test('delays double from the initial value up to the cap', () => {
  const b = new Backoff({ initialMs: 200, maxMs: 30_000, jitter: 0 });
  const delays = Array.from({ length: 10 }, () => b.next());
  assert.equal(delays, [200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  assert.is(b.attempts, 10);
});

test('jitter draws each delay from the lower part of the range', () => {
  const b = new Backoff({ initialMs: 1000, jitter: 0.5, random: () => 1 });
  assert.is(b.next(), 500);
  const c = new Backoff({ initialMs: 1000, jitter: 0.5, random: () => 0 });
  assert.is(c.next(), 1000);
});

test('reset starts over after a healthy period', () => {
  const b = new Backoff({ initialMs: 100, jitter: 0 });
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
