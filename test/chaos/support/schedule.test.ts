import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FAULT_KINDS, scheduleFor, seededRandom } from './schedule.ts';

const OPTS = { leaseMs: 4_000, windowMs: 8_000, minFaults: 2, maxFaults: 4 };

test('a seed names one schedule: the same seed gives the same faults at the same times', () => {
  assert.equal(scheduleFor(1234, OPTS), scheduleFor(1234, OPTS));
  assert.not.equal(scheduleFor(1234, OPTS), scheduleFor(1235, OPTS));
  const r = seededRandom(7);
  const first = [r(), r(), r()];
  const again = seededRandom(7);
  assert.equal([again(), again(), again()], first);
});

test('any 8 consecutive seeds inject every kind of fault', () => {
  for (const base of [0, 17, 999_993]) {
    const kinds = new Set(Array.from({ length: 8 }, (_, i) => scheduleFor(base + i, OPTS).map((f) => f.kind)).flat());
    assert.equal([...kinds].sort(), [...FAULT_KINDS].sort(), `seeds ${base}..${base + 7}`);
  }
});

test('faults stay within their bounds: the window, 2-20 s apiserver freezes, a leader frozen past its lease', () => {
  for (let seed = 0; seed < 500; seed++) {
    const faults = scheduleFor(seed, OPTS);
    assert.ok(faults.length >= OPTS.minFaults && faults.length <= OPTS.maxFaults);
    for (const f of faults) {
      assert.ok(f.atMs >= 0 && f.atMs <= OPTS.windowMs);
      if (f.kind === 'freeze-apiserver') assert.ok(f.durationMs! >= 2_000 && f.durationMs! <= 20_000);
      if (f.kind === 'freeze-leader') assert.ok(f.durationMs! > OPTS.leaseMs);
      if (f.kind.startsWith('kill-')) assert.ok(f.target === 0 || f.target === 1);
      if (f.kind.startsWith('nova-')) assert.ok(f.count! >= 1 && f.count! <= 3);
    }
    assert.equal(
      faults.map((f) => f.atMs),
      [...faults.map((f) => f.atMs)].sort((a, b) => a - b),
    );
  }
});

test.run();
