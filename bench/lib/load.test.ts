import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fixedCount, fixedRate, percentile, summarize } from './load.ts';

test('percentile is nearest-rank: p50 of 1..10 is 5, p99 of 1..100 is 99, p100 the maximum', () => {
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  assert.is(percentile(upTo(10), 50), 5);
  assert.is(percentile(upTo(100), 99), 99);
  assert.is(percentile(upTo(100), 100), 100);
  assert.is(percentile([7], 99), 7);
  assert.ok(Number.isNaN(percentile([], 50)));
});

test('summarize sorts a copy and reports the maximum', () => {
  const lat = [30, 10, 20];
  assert.equal(summarize(lat), { p50ms: 20, p99ms: 30, maxMs: 30 });
  assert.equal(lat, [30, 10, 20]);
});

test('fixedCount sends each index once, never more than `concurrency` at a time, and counts statuses', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  const r = await fixedCount({
    count: 20,
    concurrency: 3,
    send: async (i) => {
      seen.push(i);
      most = Math.max(most, ++inFlight);
      await new Promise((res) => setTimeout(res, 2));
      inFlight--;
      if (i === 5) throw new Error('no answer');
      return i % 2 ? 202 : 409;
    },
  });
  assert.equal(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i),
  );
  assert.is(most, 3);
  assert.is(r.sent, 20);
  assert.equal(r.statuses, { 0: 1, 202: 9, 409: 10 });
  assert.is(r.stoppedEarly, undefined);
});

test('fixedCount stops sending once stopWhen gives a reason', async () => {
  const r = await fixedCount({
    count: 100,
    concurrency: 1,
    send: async () => 500,
    stopWhen: (s) => ((s[500] ?? 0) >= 5 ? '5 server errors' : undefined),
  });
  assert.is(r.sent, 5);
  assert.is(r.stoppedEarly, '5 server errors');
});

test('fixedRate spaces the sends by 1/rate without waiting for answers', async () => {
  const sentAt: number[] = [];
  const r = await fixedRate({
    ratePerSecond: 100,
    count: 5,
    send: async () => {
      sentAt.push(performance.now());
      await new Promise((res) => setTimeout(res, 50)); // slower than the spacing: must overlap
      return 202;
    },
  });
  assert.is(r.sent, 5);
  assert.equal(r.statuses, { 202: 5 });
  // 4 gaps of 10 ms: well under the 5 × 50 ms a closed loop would need.
  assert.ok(sentAt[4]! - sentAt[0]! >= 35, `spread ${sentAt[4]! - sentAt[0]!}`);
  assert.ok(r.seconds < 0.2, `took ${r.seconds} s`);
});

test.run();
