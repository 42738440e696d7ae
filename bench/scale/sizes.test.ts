import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSize, shape, sizeLabel } from './sizes.ts';

test('parseSize reads 1k, 100k, 1.5k, 2500 and 1m', () => {
  assert.is(parseSize('1k'), 1000);
  assert.is(parseSize(' 100K '), 100_000);
  assert.is(parseSize('1.5k'), 1500);
  assert.is(parseSize('2500'), 2500);
  assert.is(parseSize('1m'), 1_000_000);
});

test('parseSize rejects what is not a whole size of at least 10', () => {
  for (const bad of ['', 'k', '10x', '1.0001k', '5', '-1k']) assert.throws(() => parseSize(bad), /size/);
});

test('sizeLabel writes whole thousands with k', () => {
  assert.is(sizeLabel(1000), '1k');
  assert.is(sizeLabel(100_000), '100k');
  assert.is(sizeLabel(2500), '2500');
});

test('shape: N notifications on N/10 hosts in N/1000 segments, at least one of each', () => {
  assert.equal(shape(100_000), { notifications: 100_000, hosts: 10_000, segments: 100 });
  assert.equal(shape(1000), { notifications: 1000, hosts: 100, segments: 1 });
  assert.equal(shape(10), { notifications: 10, hosts: 1, segments: 1 });
});

test.run();
