import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cloneWith, timeLike } from './seed.ts';

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
  assert.is(timeLike('2026-01-01T00:00:00.000000', d), '2026-12-01T10:20:30.456');
  assert.is(timeLike('2026-01-01T00:00:00Z', d), '2026-12-01T10:20:30Z');
});

test.run();
