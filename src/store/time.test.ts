import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nowRfc3339, toEpochMicros, toRecordTime } from './time.ts';

test('record times drop microseconds and the zone, in UTC', () => {
  assert.is(toRecordTime('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05');
  assert.is(toRecordTime('2026-01-02T03:04:05.999999Z'), '2026-01-02T03:04:05');
  assert.is(toRecordTime('2026-01-02T05:04:05+02:00'), '2026-01-02T03:04:05');
  assert.is(toRecordTime(null), null);
  assert.is(toRecordTime('yesterday'), null);
});

test('naive times are UTC and keep microsecond precision', () => {
  const a = toEpochMicros('2026-01-02T03:04:05.000001');
  const b = toEpochMicros('2026-01-02T03:04:05Z');
  assert.is(a! - b!, 1n);
  assert.is(toEpochMicros('2026-01-02 03:04:05'), b);
  assert.is(toEpochMicros('not a time'), undefined);
});

test('nowRfc3339 has second precision and a Z', () => {
  assert.is(nowRfc3339(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678))), '2026-01-02T03:04:05Z');
});

test.run();
