import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { runEvery } from './scheduler.ts';
import { FakeClock } from '../testing/fake-clock.ts';

const log = pino({ level: 'silent' });

test('waits firstAfterMs, then intervalMs after each pass; a failing pass does not stop it; abort ends it', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  const seen: AbortSignal[] = [];
  let passes = 0;
  await runEvery(
    {
      name: 'job',
      intervalMs: 300_000,
      firstAfterMs: 60_000,
      run: (signal) => {
        seen.push(signal);
        passes++;
        if (passes === 1) throw new Error('first pass fails');
        if (passes === 3) ac.abort();
      },
    },
    { clock, signal: ac.signal, log },
  );
  assert.is(passes, 3);
  assert.equal(clock.sleeps, [60_000, 300_000, 300_000]);
  assert.ok(
    seen.every((s) => s === ac.signal),
    'each pass gets the signal that ends the job',
  );
});

test('the first wait defaults to the interval, and an aborted signal runs no pass', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  let passes = 0;
  await runEvery(
    {
      name: 'job',
      intervalMs: 1_000,
      run: () => {
        if (++passes === 2) ac.abort();
      },
    },
    { clock, signal: ac.signal, log },
  );
  assert.equal(clock.sleeps, [1_000, 1_000]);
  let ran = false;
  await runEvery({ name: 'never', intervalMs: 1, run: () => void (ran = true) }, { clock, signal: ac.signal, log });
  assert.is(ran, false);
});

test('passes never overlap: the next wait starts when a slow pass has ended', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  let running = 0;
  let overlapped = false;
  let passes = 0;
  await runEvery(
    {
      name: 'slow',
      intervalMs: 10,
      run: async () => {
        overlapped ||= running > 0;
        running++;
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (++passes === 3) ac.abort();
      },
    },
    { clock, signal: ac.signal, log },
  );
  assert.is(overlapped, false);
  assert.is(passes, 3);
});

test.run();
