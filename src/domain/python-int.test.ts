import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parsePythonInt } from './python-int.ts';

test('ASCII integers with sign and surrounding whitespace parse as Python int() does', () => {
  assert.is(parsePythonInt('42'), 42);
  assert.is(parsePythonInt(' +7\n'), 7);
  assert.is(parsePythonInt('\t-3 '), -3);
  assert.is(parsePythonInt('0001'), 1);
  assert.is(parsePythonInt('-0'), 0);
});

test('underscores between digits are accepted, elsewhere refused', () => {
  assert.is(parsePythonInt('1_000'), 1000);
  assert.is(parsePythonInt('0_1'), 1);
  for (const bad of ['_1', '1_', '1__0', '+_1']) assert.is(parsePythonInt(bad), undefined, bad);
});

test('decimal digits of other scripts count with their value', () => {
  assert.is(parsePythonInt('\u0661\u0662'), 12); // Arabic-Indic
  assert.is(parsePythonInt('\uff11\uff10'), 10); // fullwidth
  assert.is(parsePythonInt('\u{1d7d9}'), 1); // mathematical double-struck one, in a run of five scripts
  assert.is(parsePythonInt('\u0969'), 3); // Devanagari
});

test('what Python refuses is undefined', () => {
  for (const bad of ['', ' ', 'abc', '1.5', '1e2', '0x10', '1 0', '\u2460', '++1']) {
    assert.is(parsePythonInt(bad), undefined, JSON.stringify(bad));
  }
});

test.run();
