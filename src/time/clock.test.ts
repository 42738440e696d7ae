import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from './clock.ts';
import { FakeClock } from '../testing/fake-clock.ts';

test('systemClock.sleep rejects with the abort reason', async () => {
  const ac = new AbortController();
  const p = systemClock.sleep(10_000, ac.signal);
  ac.abort(new Error('stop'));
  assert.is((await p.catch((e) => e)).message, 'stop');
});

test('FakeClock fires due timers in due order on advance, and sleep moves time at once', async () => {
  const clock = new FakeClock(0);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push('b'), 200);
  clock.setTimeout(() => fired.push('a'), 100);
  const cancelled = clock.setTimeout(() => fired.push('never'), 150);
  clock.clearTimeout(cancelled);
  clock.advance(150);
  assert.equal(fired, ['a']);
  await clock.sleep(100);
  assert.equal(fired, ['a', 'b']);
  assert.equal([clock.now().getTime(), clock.sleeps, clock.pendingTimers()], [250, [100], 0]);
});

test.run();
