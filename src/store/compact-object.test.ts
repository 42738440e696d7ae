import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { compact } from './compact-object.ts';

test('a compact copy has the same keys in the same order and the same values, as a plain object', () => {
  const o = { uuid: 'u', id: 7, phase: 'finished', nested: { a: 1 }, list: [1], missing: undefined, last: null };
  const c = compact(o);
  assert.is.not(c, o, 'a copy');
  assert.equal(Object.keys(c), Object.keys(o));
  assert.equal(c, o);
  assert.is(c.nested, o.nested, 'values are shared, not copied');
  assert.is(Object.getPrototypeOf(c), Object.prototype);
  assert.is(JSON.stringify(c), JSON.stringify(o));
});

test('keys that are not identifiers are copied as they are (quoted, never code)', () => {
  const o = {
    'masakari.openkeel.io/uuid': 'u',
    'a"b': 1,
    "x'); process.exit(1); ('": 2,
    'line\nbreak': 3,
    '': 4,
    constructor: 5,
  };
  assert.equal(compact(o), o);
});

test('an object with a __proto__ key (a payload may have one) is left as it is, prototype untouched', () => {
  const o = JSON.parse('{"__proto__": "x", "a": "1", "b": "2", "c": "3", "d": "4"}') as Record<string, string>;
  const c = compact(o);
  assert.is(c, o);
  assert.is(Object.getPrototypeOf(c), Object.prototype);
  assert.is(c['__proto__'], 'x');
});

test('under --disallow-code-generation-from-strings objects are returned as they are, never an error', () => {
  const script = [
    "import { compact } from './src/store/compact-object.ts';",
    'const o = { a: 1, b: 2, c: 3, d: 4, e: 5 };',
    'if (compact(o) !== o || compact({ ...o, f: 6 }).f !== 6) process.exit(1);',
  ].join('\n');
  const res = spawnSync(
    process.execPath,
    ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname },
  );
  assert.is(res.status, 0, res.stderr);
});

test('small objects (V8 keeps four properties in the object anyway) are returned as they are', () => {
  const o = { a: 1, b: 2, c: 3, d: 4 };
  assert.is(compact(o), o);
});

test.run();
