import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatWireTime, normaliseTime, parseIsoTime } from './time.ts';

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

test("Masakari's wire format always has six fraction digits", () => {
  assert.is(formatWireTime('2026-01-02T03:04:05'), '2026-01-02T03:04:05.000000');
  assert.is(formatWireTime('2026-01-02T03:04:05.123456'), '2026-01-02T03:04:05.123456');
  assert.is(formatWireTime('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05.000000');
  assert.is(formatWireTime(null), null);
});

test.run();
