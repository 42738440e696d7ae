import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serviceDownSchedule, settleSchedule } from './evacuation-polling.ts';
import type { Clock } from '../../time/clock.ts';
import { PollTimeout, pollUntil } from '../../time/poll.ts';

/** A clock whose sleeps advance virtual time at once. */
function virtualClock(): Pick<Clock, 'now' | 'sleep'> & { t: number } {
  const c = {
    t: 0,
    now: () => new Date(c.t),
    sleep: async (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

async function probeTimes(schedule: ReturnType<typeof settleSchedule>, doneAt: number): Promise<number[]> {
  const clock = virtualClock();
  const times: number[] = [];
  await pollUntil(
    'x',
    async () => {
      times.push(clock.t);
      return clock.t >= doneAt ? true : undefined;
    },
    schedule,
    clock,
    new AbortController().signal,
  );
  return times;
}

test('settle polling: first look after 100 ms, then x1.5 up to verify_interval', async () => {
  const times = await probeTimes(settleSchedule(1, 90), 3_000);
  assert.equal(times.slice(0, 6), [100, 200, 350, 575, 913, 1420]);
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  assert.ok(gaps.every((g) => g <= 1_000));
});

test('settle polling with an expected duration: first look just before it, then short polls', async () => {
  const times = await probeTimes(settleSchedule(1, 90, 2_000), 2_020);
  assert.equal(times, [1_900, 1_950, 2_025]);
});

test('service-down polling probes at growing intervals capped at verify_interval', async () => {
  const times = await probeTimes(serviceDownSchedule(1, 180), 5_000);
  assert.equal(times.slice(0, 4), [250, 750, 1_750, 2_750]);
});

test('timeout: one last probe at the deadline, then PollTimeout', async () => {
  const clock = virtualClock();
  const times: number[] = [];
  try {
    await pollUntil(
      'never',
      async () => {
        times.push(clock.t);
        return undefined;
      },
      settleSchedule(1, 3),
      clock,
      new AbortController().signal,
    );
    assert.unreachable();
  } catch (err) {
    assert.instance(err, PollTimeout);
  }
  assert.is(times.at(-1), 3_000);
});

test('an aborted signal stops polling with its reason', async () => {
  const abort = new AbortController();
  abort.abort(new Error('leadership lost'));
  try {
    await pollUntil('x', async () => undefined, settleSchedule(1, 3), virtualClock(), abort.signal);
    assert.unreachable();
  } catch (err) {
    assert.is((err as Error).message, 'leadership lost');
  }
});

test.run();
