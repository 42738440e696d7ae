import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  formatWireTime,
  normaliseTime,
  parseGeneratedTime,
  parseIsoTime,
  pythonStrDatetime,
  rfc3339Micro,
  rfc3339Seconds,
  toEpochMicros,
  toEpochSeconds,
  toRecordTime,
} from './format.ts';

test('parse_isotime grammar: dates, basic format, zones; impossible dates refused', () => {
  assert.is(normaliseTime('2020-01-02'), '2020-01-02T00:00:00');
  assert.is(normaliseTime('2020-01-02T03'), '2020-01-02T03:00:00');
  assert.is(normaliseTime('2020-01-02 03:04:05'), '2020-01-02T03:04:05');
  assert.is(normaliseTime('20200102T030405'), '2020-01-02T03:04:05');
  assert.is(normaliseTime('2020-01-02T03:04:05.123+02:00'), '2020-01-02T01:04:05.123000');
  assert.is(normaliseTime('2020-01-02T03:04:05Z'), '2020-01-02T03:04:05');
  assert.is(normaliseTime('2020'), '2020-01-01T00:00:00');
  assert.is(parseIsoTime('garbage'), undefined);
  assert.is(parseIsoTime('2020-13-01'), undefined);
  assert.is(parseIsoTime('2021-02-29'), undefined);
});

test('toEpochSeconds is the floor of toEpochMicros in seconds, on its allocation-free path and off it', () => {
  const floorSeconds = (iso: string) => {
    const micros = toEpochMicros(iso);
    if (micros === undefined) return undefined;
    return Math.floor(Number(micros) / 1e6);
  };
  const fixed = [
    '2026-12-02T19:21:42Z',
    '2026-12-02T19:21:42.999999Z',
    '1969-12-31T23:59:59.5Z',
    '1969-12-31T23:59:59Z',
    '0001-01-01T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '2024-02-29T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-04-31T12:00:00Z',
    '2000-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-12-02T24:00:00Z',
    '2026-12-02T23:59:60Z',
    '2026-13-01T00:00:00Z',
    '2026-12-02T19:21:42+02:00',
    '2026-12-02 19:21:42',
    '2026-12-02T19:21:42',
    ' 2026-12-02T19:21:42Z ',
    'garbage',
    '',
  ];
  for (const iso of fixed) assert.is(toEpochSeconds(iso), floorSeconds(iso), iso);
  let seed = 20261202;
  const r = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const two = (n: number) => String(n).padStart(2, '0');
  for (let i = 0; i < 2000; i++) {
    const iso =
      `${String(r(3000)).padStart(4, '0')}-${two(r(14))}-${two(r(33))}T${two(r(25))}:${two(r(61))}:${two(r(61))}` +
      (r(2) ? `.${r(1_000_000)}` : '') +
      'Z';
    assert.is(toEpochSeconds(iso), floorSeconds(iso), iso);
  }
});

test("Masakari's wire format always has six fraction digits", () => {
  assert.is(formatWireTime('2026-01-02T03:04:05'), '2026-01-02T03:04:05.000000');
  assert.is(formatWireTime('2026-01-02T03:04:05.123456'), '2026-01-02T03:04:05.123456');
  assert.is(formatWireTime('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05.000000');
  assert.is(formatWireTime(null), null);
});

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

test('rfc3339Seconds (status times, metav1.Time) has second precision and a Z', () => {
  assert.is(rfc3339Seconds(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678))), '2026-01-02T03:04:05Z');
});

test("progress timestamps use Python's str(datetime), fraction omitted when zero", () => {
  assert.is(pythonStrDatetime(new Date(Date.UTC(2019, 2, 7, 13, 54, 28, 842))), '2019-03-07 13:54:28.842000');
  assert.is(pythonStrDatetime(new Date(Date.UTC(2019, 2, 7, 13, 54, 28, 0))), '2019-03-07 13:54:28');
});

test('vmove times keep microseconds; created/updated times are second precision', () => {
  const d = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
  assert.is(rfc3339Micro(d), '2026-01-02T03:04:05.006000Z');
  assert.is(rfc3339Seconds(d), '2026-01-02T03:04:05Z');
});

test('naive generated_time is UTC', () => {
  assert.is(parseGeneratedTime('2026-01-02T03:04:05'), Date.UTC(2026, 0, 2, 3, 4, 5));
  assert.is(parseGeneratedTime('2026-01-02T03:04:05+01:00'), Date.UTC(2026, 0, 2, 2, 4, 5));
  assert.ok(Number.isNaN(parseGeneratedTime('yesterday')));
});

test.run();
