import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clockSkewFor, FAULT_KINDS, faultKindsFor, HA_FAULT_KINDS, scheduleFor, seededRandom } from './schedule.ts';

const OPTS = { leaseMs: 4_000, windowMs: 8_000, minFaults: 2, maxFaults: 4 };

test('a seed names one schedule: the same seed gives the same faults at the same times', () => {
  assert.equal(scheduleFor(1234, OPTS), scheduleFor(1234, OPTS));
  assert.not.equal(scheduleFor(1234, OPTS), scheduleFor(1235, OPTS));
  const r = seededRandom(7);
  const first = [r(), r(), r()];
  const again = seededRandom(7);
  assert.equal([again(), again(), again()], first);
});

test('any 9 consecutive seeds inject every kind of fault', () => {
  assert.is(FAULT_KINDS.length, 9);
  for (const base of [0, 17, 999_993]) {
    const kinds = new Set(Array.from({ length: 9 }, (_, i) => scheduleFor(base + i, OPTS).map((f) => f.kind)).flat());
    assert.equal([...kinds].sort(), [...FAULT_KINDS].sort(), `seeds ${base}..${base + 8}`);
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
      if (f.kind === 'kill-engine' || f.kind === 'kill-api') assert.ok(f.target === 0 || f.target === 1);
      if (f.kind.startsWith('nova-')) assert.ok(f.count! >= 1 && f.count! <= 3);
    }
    assert.equal(
      faults.map((f) => f.atMs),
      [...faults.map((f) => f.atMs)].sort((a, b) => a - b),
    );
  }
});

test('the single shape never draws a fault of shape ha, so its seeds keep their schedules', () => {
  assert.equal(faultKindsFor('single'), FAULT_KINDS);
  for (let seed = 0; seed < 500; seed++)
    for (const f of scheduleFor(seed, OPTS)) assert.not.ok((HA_FAULT_KINDS as readonly string[]).includes(f.kind));
});

test('shape ha: any 15 consecutive seeds inject every kind, etcd and API-server faults within their bounds', () => {
  const kinds = faultKindsFor('ha');
  const ha = { ...OPTS, kinds };
  assert.is(kinds.length, 15);
  for (const base of [0, 17, 999_993]) {
    const seen = new Set(Array.from({ length: 15 }, (_, i) => scheduleFor(base + i, ha).map((f) => f.kind)).flat());
    assert.equal([...seen].sort(), [...kinds].sort(), `seeds ${base}..${base + 14}`);
  }
  for (let seed = 0; seed < 500; seed++) {
    for (const f of scheduleFor(seed, ha)) {
      if (f.kind === 'lose-quorum') assert.ok(f.durationMs! >= 10_000 && f.durationMs! <= 60_000);
      if (f.kind === 'kill-etcd-member') assert.ok([0, 1, 2].includes(f.target!) && f.durationMs! <= 10_000);
      if (f.kind === 'kill-apiserver') assert.ok((f.target === 0 || f.target === 1) && f.durationMs! <= 10_000);
      if (f.kind === 'kill-etcd-leader') assert.ok(f.durationMs! >= 1_000 && f.durationMs! <= 10_000);
      if (f.kind === 'degrade-etcd-link') {
        assert.ok(f.durationMs! >= 2_000 && f.durationMs! <= 20_000);
        assert.ok(f.delayMs === undefined || (f.delayMs >= 200 && f.delayMs <= 1_500));
      }
    }
  }
  const links = Array.from({ length: 500 }, (_, seed) => scheduleFor(seed, ha))
    .flat()
    .filter((f) => f.kind === 'degrade-etcd-link');
  assert.ok(links.some((f) => f.delayMs === undefined) && links.some((f) => f.delayMs !== undefined), 'both modes');
});

test('make test (quick): quorum is lost for 10-20 s at most; the soak keeps 10-60 s', () => {
  const kinds = faultKindsFor('ha');
  const quorum = (quick: boolean) =>
    Array.from({ length: 500 }, (_, seed) => scheduleFor(seed, { ...OPTS, kinds, quick }))
      .flat()
      .filter((f) => f.kind === 'lose-quorum')
      .map((f) => f.durationMs!);
  assert.ok(quorum(true).every((ms) => ms >= 10_000 && ms <= 20_000));
  assert.ok(Math.max(...quorum(false)) > 40_000);
});

test('every run skews one engine clock by 1-30 s either way, mostly past the 5 s the engine allows for', () => {
  assert.equal(clockSkewFor(1234), clockSkewFor(1234));
  const skews = Array.from({ length: 500 }, (_, seed) => clockSkewFor(seed));
  for (const s of skews) assert.ok(Math.abs(s.offsetMs) >= 1_000 && Math.abs(s.offsetMs) <= 30_000);
  const share = (p: (s: (typeof skews)[number]) => boolean) => skews.filter(p).length / skews.length;
  assert.ok(share((s) => s.offsetMs < 0) > 0.4 && share((s) => s.offsetMs > 0) > 0.4, 'both ways');
  assert.ok(share((s) => Math.abs(s.offsetMs) > 5_000) > 0.8, 'mostly beyond 5 s');
  assert.ok(share((s) => s.engine === 'standby') > 0.15 && share((s) => s.engine === 'leader') > 0.6);
});

test.run();
