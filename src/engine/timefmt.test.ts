import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseGeneratedTime, pythonStrDatetime, rfc3339Micro, rfc3339Seconds } from './timefmt.ts';
import { pythonFloat } from './journal.ts';

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

test('progress values print like Python floats', () => {
  assert.is(pythonFloat(1), '1.0');
  assert.is(pythonFloat(0), '0.0');
  assert.is(pythonFloat(0.3), '0.3');
});

test.run();
