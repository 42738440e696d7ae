import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pyRepr, pyStr, pyTuple, reprFloat } from './python-repr.ts';

test('values print as Python repr() prints them', () => {
  assert.is(pyRepr(null), 'None');
  assert.is(pyRepr(true), 'True');
  assert.is(pyRepr("it's"), '"it\'s"');
  assert.is(pyRepr('a\'b"c'), "'a\\'b\"c'");
  assert.is(pyRepr('a\u0001\n'), "'a\\x01\\n'");
  assert.is(pyRepr('é✓'), "'é✓'");
  assert.is(pyRepr(1.5), '1.5');
  assert.is(pyRepr(1e-7), '1e-07');
  assert.is(pyRepr({ a: [1, 'x'], b: null }), "{'a': [1, 'x'], 'b': None}");
  assert.is(pyRepr(pyTuple(['A', 'B'])), "('A', 'B')");
  assert.is(pyStr('bare'), 'bare');
  assert.is(pyStr({}), '{}');
});

test('floats print as Python repr() prints them', () => {
  assert.is(reprFloat(1), '1.0');
  assert.is(reprFloat(100000), '100000.0');
  assert.is(reprFloat(-0), '-0.0');
  assert.is(reprFloat(0.0001), '0.0001');
  assert.is(reprFloat(0.00001), '1e-05');
  assert.is(reprFloat(1e16), '1e+16');
  assert.is(reprFloat(1.5e300), '1.5e+300');
  assert.is(reprFloat(1.2345678901234568e29), '1.2345678901234568e+29');
  assert.is(reprFloat(12345.6), '12345.6');
  assert.is(reprFloat(5e-324), '5e-324');
  assert.is(reprFloat(-Infinity), '-inf');
});

test.run();
