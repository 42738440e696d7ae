import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pyRepr, pyStr, pyTuple } from './python-repr.ts';

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

test.run();
