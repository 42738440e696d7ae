import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalJson, isDuplicateOf, payloadHash } from './fingerprints.ts';

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

test('the window is inclusive: exactly window seconds before counts, a microsecond more does not', () => {
  const at = (t: string) => ({ ...base, generatedTime: t });
  assert.ok(isDuplicateOf(at('2026-01-02T03:06:00'), at('2026-01-02T03:03:00'), 180));
  assert.not.ok(isDuplicateOf(at('2026-01-02T03:06:00.000001'), at('2026-01-02T03:03:00'), 180));
  // an unparseable time cannot be ordered: counted inside the window (the safe side is a 409)
  assert.ok(isDuplicateOf(at('not a time'), at('2026-01-02T03:03:00'), 180));
});

test.run();
