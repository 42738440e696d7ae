import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bucketOf, canonicalJson, isDuplicateOf, payloadHash } from './fingerprints.ts';

const h = payloadHash({ event: 'STOPPED', host_status: 'NORMAL' });
const base = { type: 'COMPUTE_HOST', payloadHash: h, generatedTime: '2026-01-02T03:00:00' };

test('equal payloads hash equally whatever their key order', () => {
  assert.is(payloadHash({ a: '1', b: '2' }), payloadHash({ b: '2', a: '1' }));
  assert.is.not(payloadHash({ a: '1' }), payloadHash({ a: '2' }));
  assert.is(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
});

test('duplicate: same type and payload, stored generated_time >= new - window', () => {
  const stored = base;
  assert.ok(isDuplicateOf({ ...base, generatedTime: '2026-01-02T03:03:00' }, stored, 180));
  // exactly at the window's edge counts (>=)
  assert.ok(isDuplicateOf({ ...base, generatedTime: '2026-01-02T03:03:00' }, stored, 180));
  assert.not.ok(isDuplicateOf({ ...base, generatedTime: '2026-01-02T03:03:00.000001' }, stored, 180));
  // a stored notification NEWER than the new one is always inside the window (no upper bound)
  assert.ok(isDuplicateOf({ ...base, generatedTime: '2026-01-01T00:00:00' }, stored, 180));
});

test('not a duplicate when type or payload differ', () => {
  assert.not.ok(isDuplicateOf({ ...base, type: 'PROCESS' }, base, 180));
  assert.not.ok(isDuplicateOf({ ...base, payloadHash: payloadHash({ event: 'STARTED' }) }, base, 180));
});

test('buckets are one window wide: same bucket is always a duplicate, two buckets apart never', () => {
  assert.is(bucketOf('1970-01-01T00:03:00', 180), 1n);
  assert.is(bucketOf('1970-01-01T00:05:59.999999', 180), 1n);
  assert.is(bucketOf('1970-01-01T00:06:00', 180), 2n);
  // floor, not truncation, before 1970
  assert.is(bucketOf('1969-12-31T23:59:59', 180), -1n);
  // a window of 0: one bucket per microsecond
  assert.is(bucketOf('1970-01-01T00:00:01.000002', 0), 1_000_002n);
  assert.is(bucketOf('not a time', 180), undefined);
  const at = (t: string) => ({ ...base, generatedTime: t });
  // same bucket, either order
  assert.ok(isDuplicateOf(at('2026-01-02T03:05:59'), at('2026-01-02T03:03:00'), 180));
  assert.ok(isDuplicateOf(at('2026-01-02T03:03:00'), at('2026-01-02T03:05:59'), 180));
  // two buckets apart, earlier stored: never
  assert.not.ok(isDuplicateOf(at('2026-01-02T03:06:00'), at('2026-01-02T03:02:59'), 180));
});

test.run();
