import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runPeriodic } from './periodic.ts';
import { quietLog } from './testing/fixtures.ts';
import { FakeClock } from '../testing/fake-clock.ts';

test('runs after each spacing, survives a failing pass, stops on abort', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  let passes = 0;
  await runPeriodic(
    {
      name: 't',
      spacingSeconds: 120,
      run: () => {
        passes++;
        if (passes === 1) throw new Error('first pass fails');
        if (passes === 3) ac.abort();
      },
    },
    { clock, signal: ac.signal, log: quietLog },
  );
  assert.is(passes, 3);
  assert.equal(clock.sleeps, [120_000, 120_000, 120_000]);
});

test.run();
