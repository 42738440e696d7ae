import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from './ratelimiter.ts';
import { FakeClock } from '../testing/fake-clock.ts';

test('item exponential limiter doubles per failure from the base', () => {
  const l = new ItemExponentialRateLimiter(5, 1_000_000);
  assert.equal([l.when('k'), l.when('k'), l.when('k'), l.when('k')], [5, 10, 20, 40]);
  assert.is(l.numRequeues('k'), 4);
});

test('item exponential limiter is capped at its maximum', () => {
  const l = new ItemExponentialRateLimiter(5, 1_000_000);
  let last = 0;
  for (let i = 0; i < 100; i++) last = l.when('k');
  assert.is(last, 1_000_000);
});

test('item exponential limiter keeps keys independent and forget resets one', () => {
  const l = new ItemExponentialRateLimiter(1, 100);
  l.when('a');
  l.when('a');
  assert.is(l.when('b'), 1);
  l.forget('a');
  assert.is(l.numRequeues('a'), 0);
  assert.is(l.when('a'), 1);
});

test('default controller limiter is 5 ms to 1000 s per item', () => {
  const l = defaultControllerRateLimiter();
  assert.is(l.when('x'), 5);
  for (let i = 0; i < 40; i++) l.when('x');
  assert.is(l.when('x'), 1_000_000);
});

test('bucket limiter allows the burst then spaces by qps', () => {
  const clock = new FakeClock();
  const l = new BucketRateLimiter(10, 3, clock);
  assert.equal([l.when(), l.when(), l.when()], [0, 0, 0]);
  assert.is(l.when(), 100);
  assert.is(l.when(), 200);
  clock.advance(1000);
  assert.is(l.when(), 0);
});

test('max-of limiter takes the longest delay and forgets in all', () => {
  const clock = new FakeClock();
  const item = new ItemExponentialRateLimiter(1, 1000);
  const l = new MaxOfRateLimiter(item, new BucketRateLimiter(1, 1, clock));
  assert.is(l.when('a'), 1);
  assert.is(l.when('a'), 1000);
  l.forget('a');
  assert.is(item.numRequeues('a'), 0);
});

test.run();
