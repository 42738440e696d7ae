import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { periodicTask } from './notification-tasks.ts';

// The scheduling itself is runtime/scheduler.ts's (scheduler.test.ts); here only how a Masakari task maps onto it.
test('a task runs every spacingSeconds, and never more often than once a second', () => {
  for (const [spacingSeconds, ms] of [
    [120, 120_000],
    [0, 1_000],
  ] as const) {
    const job = periodicTask('t', spacingSeconds, () => undefined);
    assert.is(job.intervalMs, ms, `spacing ${spacingSeconds} s`);
    assert.is(job.firstAfterMs, undefined, 'the first pass after one spacing, as oslo runs it');
  }
});

test.run();
