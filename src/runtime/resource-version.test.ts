import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compareResourceVersions, isNotNewer, isOlder, maxResourceVersion } from './resource-version.ts';

test('integer resourceVersions compare numerically, not as strings', () => {
  assert.is(compareResourceVersions('9', '10'), -1);
  assert.is(compareResourceVersions('100', '99'), 1);
  assert.is(compareResourceVersions('42', '42'), 0);
  assert.is(compareResourceVersions('18446744073709551615', '18446744073709551614'), 1);
});

test('non-integer resourceVersions have no order except equality', () => {
  assert.is(compareResourceVersions('abc', '10'), undefined);
  assert.is(compareResourceVersions('abc', 'abc'), 0);
  assert.is(compareResourceVersions(undefined, '1'), undefined);
  assert.not.ok(isOlder('abc', '10'));
  assert.not.ok(isNotNewer('x', 'y'));
});

test('maxResourceVersion keeps the later one and prefers the newest observation when unordered', () => {
  assert.is(maxResourceVersion('5', '7'), '7');
  assert.is(maxResourceVersion('7', '5'), '7');
  assert.is(maxResourceVersion(undefined, '5'), '5');
  assert.is(maxResourceVersion('a', 'b'), 'b');
});

test.run();
