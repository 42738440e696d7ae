import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cloneStored, cloneWith, seededHostName, swapSameLength, TEMPLATE_HOST, timeLike } from './seed.ts';

test('cloneWith drops server-assigned metadata and swaps every occurrence, in order', () => {
  const template = {
    metadata: {
      name: 'tmpl-3f2a9c1b',
      uid: 'u-1',
      resourceVersion: '7',
      creationTimestamp: '2026-01-01T00:00:00Z',
      generation: 1,
      managedFields: [{}],
      labels: { uuid: '3f2a9c1b-aaaa', seg: 'seg-uuid' },
      ownerReferences: [{ apiVersion: 'v', kind: 'K', name: 'seg-0', uid: 'seg-uid' }],
    },
    spec: { name: 'tmpl' },
    status: { uuid: '3f2a9c1b-aaaa', id: 1 },
  };
  const copy = cloneWith(template, [
    ['tmpl-3f2a9c1b', 'host-7-12345678'],
    ['3f2a9c1b-aaaa', '12345678-bbbb'],
    ['seg-uid', 'seg-uid-2'],
    ['tmpl', 'host-7'],
  ]);
  assert.equal(copy, {
    metadata: {
      name: 'host-7-12345678',
      labels: { uuid: '12345678-bbbb', seg: 'seg-uuid' },
      ownerReferences: [{ apiVersion: 'v', kind: 'K', name: 'seg-0', uid: 'seg-uid-2' }],
    },
    spec: { name: 'host-7' },
    status: { uuid: '12345678-bbbb', id: 1 },
  });
  assert.is(template.metadata.uid, 'u-1'); // the template is untouched
});

test('timeLike writes a time the way the template wrote its generated_time', () => {
  const d = new Date('2026-12-01T10:20:30.456Z');
  assert.is(timeLike('2026-01-01T00:00:00', d), '2026-12-01T10:20:30');
  assert.is(timeLike('2026-01-01T00:00:00.000000', d), '2026-12-01T10:20:30.456000');
  assert.is(timeLike('2026-01-01T00:00:00.1Z', d), '2026-12-01T10:20:30.4Z');
  assert.is(timeLike('2026-01-01T00:00:00Z', d), '2026-12-01T10:20:30Z');
});

test('cloneStored keeps what the API server stored but gives the copy its own uid and time, and no resourceVersion', () => {
  const stored = JSON.stringify({
    metadata: {
      name: 'tmpl-3f2a9c1b',
      uid: 'u-1',
      resourceVersion: '7',
      creationTimestamp: '2026-01-01T00:00:00Z',
      generation: 1,
      managedFields: [{ manager: 'masakari-api', operation: 'Update' }],
    },
    spec: { name: 'tmpl' },
  });
  const copy = cloneStored<{ metadata: Record<string, unknown>; spec: unknown }>(
    stored,
    [
      ['tmpl-3f2a9c1b', 'host-7-12345678'],
      ['tmpl', 'host-7'],
    ],
    'u-2',
    '2026-12-01T18:00:00Z',
  );
  assert.equal(copy, {
    metadata: {
      name: 'host-7-12345678',
      uid: 'u-2',
      creationTimestamp: '2026-12-01T18:00:00Z',
      generation: 1,
      managedFields: [{ manager: 'masakari-api', operation: 'Update' }],
    },
    spec: { name: 'host-7' },
  });
});

test('swapSameLength swaps every occurrence in protobuf bytes and refuses a swap that would change a length', () => {
  const bytes = Buffer.concat([
    Buffer.from([0x0a, 4]),
    Buffer.from('abcd'),
    Buffer.from([0x12, 4]),
    Buffer.from('abcd'),
  ]);
  const out = swapSameLength(bytes, [['abcd', 'wxyz']]);
  assert.equal([...out], [0x0a, 4, ...Buffer.from('wxyz'), 0x12, 4, ...Buffer.from('wxyz')]);
  assert.equal([...bytes.subarray(2, 6)], [...Buffer.from('abcd')]); // the template is untouched
  assert.throws(() => swapSameLength(bytes, [['abcd', 'abcde']]), /lengths differ/);
});

test('seeded host names are as long as the template host name (so protobuf copies of its claim stay valid)', () => {
  for (const i of [0, 7, 99_999, 1_000_000]) assert.is(seededHostName(i).length, TEMPLATE_HOST.length);
  assert.is(seededHostName(42), 'scale-00000000042');
});

test.run();
