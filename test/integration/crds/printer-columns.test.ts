// Valid objects of every kind are accepted, and `kubectl get` shows the
// printer columns the CRDs declare (the wide ones with -o wide), through the
// short names and the "masakari" category.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { GROUP, VERSION } from '../../../src/model/constants.ts';
import { headers, host, notification, row, segment, yaml } from './manifests.ts';

const test = suite<{ ns: TestNamespace }>('CRD printer columns', { ns: undefined as unknown as TestNamespace });

test.before(async (ctx) => {
  ctx.ns = await useNamespace('crd-columns');
  const r = await ctx.ns.kubectl(
    ['apply', '-f', '-'],
    yaml(
      segment('seg-a', { name: 'Segment A', recoveryMethod: 'reserved_host', description: 'rack 1' }),
      host('compute-1', 'seg-a', { name: 'compute-1' }),
      notification('n-1'),
    ),
  );
  assert.is(r.code, 0, r.stderr);
});
test.after(async ({ ns }) => ns.cleanup());

test('a valid FailoverSegment, HaHost and Notification are accepted', async ({ ns }) => {
  const r = await ns.kubectl(['get', 'failoversegments,hahosts,notifications', '-o', 'name']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').sort(), [
    'failoversegment.masakari.openkeel.io/seg-a',
    'hahost.masakari.openkeel.io/compute-1',
    'notification.masakari.openkeel.io/n-1',
  ]);
});

test('segment columns: Name, Recovery Method, Enabled (defaulted to true), Ready, Age; wide adds Service Type, ID, UUID', async ({ ns }) => {
  const plain = await ns.kubectl(['get', 'fseg']);
  assert.equal(headers(plain.stdout), ['NAME', 'NAME', 'RECOVERY METHOD', 'ENABLED', 'READY', 'AGE']);
  const wide = await ns.kubectl(['get', 'segment', '-o', 'wide']);
  assert.equal(headers(wide.stdout), [
    'NAME',
    'NAME',
    'RECOVERY METHOD',
    'ENABLED',
    'READY',
    'AGE',
    'SERVICE TYPE',
    'ID',
    'UUID',
  ]);
  const line = wide.stdout.split('\n').find((l) => l.startsWith('seg-a'));
  assert.match(line ?? '', /^seg-a\s+Segment A\s+reserved_host\s+true\s+\s+\S+\s+COMPUTE/);
});

test('host columns: Host, Segment, Reserved and On Maintenance (effective, from status), Ready, Age', async ({ ns }) => {
  const co = ns.kc.makeApiClient(CustomObjectsApi);
  const ref = { group: GROUP, version: VERSION, namespace: ns.namespace, plural: 'hahosts', name: 'compute-1' };
  const current = (await co.getNamespacedCustomObject(ref)) as { status?: object };
  await co.replaceNamespacedCustomObjectStatus({
    ...ref,
    body: { ...current, status: {
        reserved: true,
        onMaintenance: false,
        id: 7,
        uuid: '0b5c1d1e-7f9a-4d2b-9c3e-5f6a7b8c9d0e',
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'SegmentNotFound',
            message: 'waiting for its segment',
            lastTransitionTime: '2026-01-02T03:04:05Z',
          },
        ],
      },
    },
  });
  const r = await ns.kubectl(['get', 'hh', '-o', 'wide']);
  assert.equal(headers(r.stdout), [
    'NAME',
    'HOST',
    'SEGMENT',
    'RESERVED',
    'ON MAINTENANCE',
    'READY',
    'AGE',
    'TYPE',
    'ID',
    'UUID',
  ]);
  const cells = row(r.stdout, 'compute-1');
  assert.is(cells.HOST, 'compute-1');
  assert.is(cells.SEGMENT, 'seg-a');
  assert.is(cells.RESERVED, 'true');
  assert.is(cells['ON MAINTENANCE'], 'false');
  assert.is(cells.READY, 'False');
  assert.is(cells.ID, '7');
});

test('notification columns: Type, Host, Status (status.phase), Age', async ({ ns }) => {
  const co = ns.kc.makeApiClient(CustomObjectsApi);
  const ref = { group: GROUP, version: VERSION, namespace: ns.namespace, plural: 'notifications', name: 'n-1' };
  const current = (await co.getNamespacedCustomObject(ref)) as object;
  await co.replaceNamespacedCustomObjectStatus({ ...ref, body: { ...current, status: { phase: 'running' } } });
  const r = await ns.kubectl(['get', 'mn']);
  assert.equal(headers(r.stdout), ['NAME', 'TYPE', 'HOST', 'STATUS', 'AGE']);
  const cells = row(r.stdout, 'n-1');
  assert.is(cells.TYPE, 'COMPUTE_HOST');
  assert.is(cells.HOST, 'compute-1');
  assert.is(cells.STATUS, 'running');
});

test('the masakari category lists all three kinds', async ({ ns }) => {
  const r = await ns.kubectl(['get', 'masakari', '-o', 'name']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim().split('\n').length, 3, r.stdout);
});

test('kubectl explain shows the field descriptions', async ({ ns }) => {
  const r = await ns.kubectl(['explain', 'failoversegments.spec.recoveryMethod']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'reserved_host (evacuate to the segment');
});

test.run();
