import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isPythonPrintable } from './printable.ts';
import { reprString } from './python-repr.ts';
import { validateSegmentCreate } from './validators.ts';

const segment = (name: string) => ({ segment: { name, recovery_method: 'auto', service_type: 'COMPUTE' } });

test('printability follows Python 3.11 (Unicode 14), not the newer tables of Node', () => {
  assert.ok(isPythonPrintable('a'));
  assert.ok(isPythonPrintable(' '));
  assert.not.ok(isPythonPrintable('\u00a0'), 'space separators other than the ASCII space are not printable');
  assert.not.ok(isPythonPrintable('\u088f'), 'U+088F is assigned in Unicode 15 only');
  assert.not.ok(isPythonPrintable('\u{11f1f}'), 'U+11F1F (Kawi) is assigned in Unicode 15 only');
  assert.ok(isPythonPrintable('\u{1f600}'));
  assert.not.ok(isPythonPrintable('\ud800'));
  assert.not.ok(isPythonPrintable('\uffff'));
});

test('repr() escapes what Python 3.11 cannot print', () => {
  assert.is(reprString('k\u088f\u{11f1f}\u{1f600}'), "'k\\u088f\\U00011f1f\u{1f600}'");
});

test('a segment name with a character unknown to Unicode 14 is not printable, as in Masakari', () => {
  assert.match(validateSegmentCreate(segment('n\u088f'), { major: 1, minor: 0 }) ?? '', "An invalid 'name' value");
  assert.is(validateSegmentCreate(segment('n\u00e9\u2713'), { major: 1, minor: 0 }), undefined);
  assert.match(validateSegmentCreate(segment('n\u00a0'), { major: 1, minor: 0 }) ?? '', "An invalid 'name' value");
  assert.match(validateSegmentCreate(segment('\u{1f600}'), { major: 1, minor: 0 }) ?? '', "An invalid 'name' value");
});

test.run();
