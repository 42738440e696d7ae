import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../testing/fake-clock.ts';
import { fixedSchedule, pollUntil, PollTimeout } from './poll.ts';

/** verify_interval 1 s, timeout 3 s, as the instance and process workflows poll. */
const poll = (clock: FakeClock, check: () => Promise<boolean>, signal = new AbortController().signal) =>
  pollUntil('x', async () => (await check()) || undefined, fixedSchedule(1000, 3000), clock, signal);

test('the first probe is immediate; later ones are verify_interval apart', async () => {
  const clock = new FakeClock();
  let probes = 0;
  await poll(clock, async () => ++probes === 3);
  assert.is(probes, 3);
  assert.equal(clock.sleeps, [1000, 1000]);
});

test('timeout after the deadline, with one last probe at the deadline', async () => {
  const clock = new FakeClock();
  let probes = 0;
  const err = await poll(clock, async () => (probes++, false)).catch((e) => e);
  assert.instance(err, PollTimeout);
  assert.is(probes, 4);
});

test('probe errors propagate at once; an aborted signal stops the poll', async () => {
  const clock = new FakeClock();
  const boom = await poll(clock, async () => {
    throw new Error('nova down');
  }).catch((e) => e);
  assert.is(boom.message, 'nova down');
  const ac = new AbortController();
  ac.abort(new Error('cancelled'));
  assert.is((await poll(clock, async () => false, ac.signal).catch((e) => e)).message, 'cancelled');
});

test.run();
