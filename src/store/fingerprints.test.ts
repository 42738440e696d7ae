import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  MAX_BOOK_ENTRIES,
  canonicalJson,
  decodeBook,
  encodeBook,
  findDuplicate,
  isDuplicateOf,
  payloadHash,
  prune,
} from './fingerprints.ts';
import type { Fingerprint } from './fingerprints.ts';

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

const fp = (name: string, recordedAt: string): Fingerprint => ({ ...base, name, uuid: name, recordedAt });

test('prune keeps entries written within max(window, 10 min) and drops older ones', () => {
  const now = new Date('2026-01-02T04:00:00Z');
  const book = {
    maxWindowSeconds: 180,
    entries: [fp('old', '2026-01-02T03:40:00Z'), fp('recent', '2026-01-02T03:55:00Z')],
  };
  assert.equal(
    prune(book, now).entries.map((e) => e.name),
    ['recent'],
  );
  // a larger window seen once keeps more history
  assert.equal(
    prune({ ...book, maxWindowSeconds: 3600 }, now).entries.map((e) => e.name),
    ['old', 'recent'],
  );
});

test('prune caps a flooded book to its newest entries', () => {
  const now = new Date('2026-01-02T04:00:00Z');
  const entries = Array.from({ length: MAX_BOOK_ENTRIES + 5 }, (_, i) => fp(`n${i}`, '2026-01-02T03:59:00Z'));
  const pruned = prune({ maxWindowSeconds: 180, entries }, now).entries;
  assert.is(pruned.length, MAX_BOOK_ENTRIES);
  assert.is(pruned[0]?.name, 'n5');
});

test('the book round-trips through ConfigMap data and tolerates garbage', () => {
  const book = { maxWindowSeconds: 180, entries: [fp('a', '2026-01-02T03:55:00Z')] };
  assert.equal(decodeBook(encodeBook(book)), book);
  assert.equal(decodeBook({ 'fingerprints.json': '{nope' }), { maxWindowSeconds: 0, entries: [] });
  assert.is(findDuplicate(book, base, 180)?.name, 'a');
});

test.run();
