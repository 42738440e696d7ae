import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runPeriodic } from './notification-tasks.ts';
import { quietLog } from '../testing/fixtures.ts';
import { FakeClock } from '../../testing/fake-clock.ts';

// The scheduling itself is runtime/scheduler.ts's (scheduler.test.ts); here only how a Masakari task maps onto it.
test('a task runs every spacingSeconds, and never more often than once a second', async () => {
  for (const [spacingSeconds, ms] of [
    [120, 120_000],
    [0, 1_000],
  ] as const) {
    const clock = new FakeClock();
    const ac = new AbortController();
    const run = () => ac.abort();
    await runPeriodic({ name: 't', spacingSeconds, run }, { clock, signal: ac.signal, log: quietLog });
    assert.equal(clock.sleeps, [ms], `spacing ${spacingSeconds} s`);
  }
});

test.run();
