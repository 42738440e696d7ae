import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil, PollTimeout, systemClock } from './clock.ts';
import { FakeClock } from './testing/fake-clock.ts';

const opts = (clock: FakeClock, signal = new AbortController().signal) => ({
  clock,
  signal,
  intervalSeconds: 1,
  timeoutSeconds: 3,
  what: 'x',
});

test('the first probe is immediate; later ones are verify_interval apart', async () => {
  const clock = new FakeClock();
  let probes = 0;
  await pollUntil(async () => ++probes === 3, opts(clock));
  assert.is(probes, 3);
  assert.equal(clock.sleeps, [1000, 1000]);
});

test('timeout after the deadline, with one last probe at the deadline', async () => {
  const clock = new FakeClock();
  let probes = 0;
  const err = await pollUntil(async () => (probes++, false), opts(clock)).catch((e) => e);
  assert.instance(err, PollTimeout);
  assert.is(probes, 4);
});

test('probe errors propagate at once; an aborted signal stops the poll', async () => {
  const clock = new FakeClock();
  const boom = await pollUntil(async () => {
    throw new Error('nova down');
  }, opts(clock)).catch((e) => e);
  assert.is(boom.message, 'nova down');
  const ac = new AbortController();
  ac.abort(new Error('cancelled'));
  assert.is((await pollUntil(async () => false, opts(clock, ac.signal)).catch((e) => e)).message, 'cancelled');
});

test('systemClock.sleep rejects with the abort reason', async () => {
  const ac = new AbortController();
  const p = systemClock.sleep(10_000, ac.signal);
  ac.abort(new Error('stop'));
  assert.is((await p.catch((e) => e)).message, 'stop');
});

test.run();
