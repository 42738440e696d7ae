import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseJsonBody } from './json-body.ts';
import { PyBigInt, PyFloat, pyRepr } from './python-repr.ts';

test('number literals keep the type and digits Python decodes them with', () => {
  const body = parseJsonBody(
    '{"a": 1, "b": 1.0, "c": 1e5, "d": 12345678901234567890, "e": [0.1, -0.0, 1e400]}',
  ) as Record<string, unknown>;
  assert.is(body.a, 1);
  assert.instance(body.b, PyFloat);
  assert.instance(body.d, PyBigInt);
  assert.is(pyRepr(body), "{'a': 1, 'b': 1.0, 'c': 100000.0, 'd': 12345678901234567890, 'e': [0.1, -0.0, inf]}");
});

test('malformed text still throws', () => {
  assert.throws(() => parseJsonBody('{bad'), SyntaxError);
});

test.run();
