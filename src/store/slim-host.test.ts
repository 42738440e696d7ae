// The host cache's copy is the stored host, deep-equal, with repeated strings
// and condition lists shared: the reconcilers write hosts from it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { HaHost } from '../model/types.ts';
import { slimHost } from './slim-host.ts';

const stored = (name = 'scale-1'): HaHost =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'HaHost',
      metadata: {
        name,
        namespace: 'masakari',
        uid: `uid-${name}`,
        resourceVersion: '42',
        generation: 1,
        creationTimestamp: '2026-12-01T19:00:00Z',
        labels: {
          'masakari.openkeel.io/uuid': `uuid-${name}`,
          'masakari.openkeel.io/id': '7',
          'masakari.openkeel.io/segment-uuid': 's-uuid',
          'app.kubernetes.io/managed-by': 'masakari-operator',
        },
        finalizers: ['masakari.openkeel.io/release-claims'],
        ownerReferences: [
          { apiVersion: 'masakari.openkeel.io/v1alpha1', kind: 'FailoverSegment', name: 'seg', uid: 'seg-uid' },
        ],
      },
      spec: { name, segmentRef: { name: 'seg' }, type: 'COMPUTE', controlAttributes: 'SSH', reserved: false },
      status: {
        uuid: `uuid-${name}`,
        id: 7,
        segmentUuid: 's-uuid',
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Admitted',
            message: 'Visible through the Masakari API.',
            lastTransitionTime: '2026-12-01T19:00:00Z',
            observedGeneration: 1,
          },
        ],
      },
    }),
  ) as HaHost;

test('the cached host is deep-equal to the stored one, and the input is not changed', () => {
  const h = stored();
  const before = structuredClone(h);
  assert.equal(slimHost(h), before);
  assert.equal(h, before);
  const bare = stored();
  delete bare.status;
  delete bare.metadata.ownerReferences;
  delete bare.metadata.finalizers;
  assert.equal(slimHost(bare), bare, 'no key is added to a host without them');
});

test('hosts admitted alike share one condition list', () => {
  const a = slimHost(stored('a'));
  const b = slimHost(stored('b'));
  assert.is(a.status?.conditions, b.status?.conditions);
  assert.is.not(a.metadata.labels, b.metadata.labels);
});

test.run();
