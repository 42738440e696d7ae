// Status is a subresource on every kind: writes through /status change it
// (and not metadata.generation); status sent through the main resource is
// dropped, so clients editing spec cannot clobber what the system assigned.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { GROUP, VERSION } from '../../../src/model/constants.ts';
import { host, notification, segment, yaml } from './manifests.ts';

interface Obj {
  metadata: { generation?: number; resourceVersion?: string };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const test = suite<{ ns: TestNamespace }>('CRD status subresource', { ns: undefined as unknown as TestNamespace });
test.before(async (ctx) => {
  ctx.ns = await useNamespace('crd-status');
  const r = await ctx.ns.kubectl(['apply', '-f', '-'], yaml(segment('seg'), host('h', 'seg'), notification('n')));
  assert.is(r.code, 0, r.stderr);
});
test.after(async ({ ns }) => ns.cleanup());

const uuid = '3f2c8a8e-2d1b-4c55-9a7e-0c1d2e3f4a5b';
const cases = [
  { plural: 'failoversegments', name: 'seg', status: { uuid, id: 1, updatedAt: null, observedGeneration: 1 }, specEdit: { serviceType: 'NOVA' } },
  {
    plural: 'hahosts',
    name: 'h',
    status: { uuid, id: 2, segmentUuid: uuid, reserved: true, onMaintenance: true, flagsGeneration: 1 },
    specEdit: { controlAttributes: 'IPMI' },
  },
  {
    plural: 'notifications',
    name: 'n',
    status: {
      uuid,
      id: 3,
      phase: 'running',
      runs: 1,
      recoveryWorkflowDetails: [
        { name: 'DisableComputeServiceTask', progress: 1, state: 'SUCCESS', progressDetails: [{ timestamp: '2026-11-29 10:00:01.000001', progress: '1.0', message: 'Disabled' }] },
      ],
      vmoves: [
        { id: 1, uuid, instanceUuid: uuid, instanceName: 'vm', sourceHost: 'h', destHost: null, startTime: null, endTime: null, type: 'evacuation', status: 'pending', message: null, createdAt: '2026-11-29T10:00:00.000000' },
      ],
      engine: { inFlight: { evacuate: { server: uuid, sentAt: '2026-11-29T10:00:02Z' } } },
      conditions: [{ type: 'Ready', status: 'True', reason: 'Accepted', message: '', lastTransitionTime: '2026-11-29T10:00:00Z' }],
    },
    // a notification's spec is immutable: edit labels instead to make a main-resource write
    specEdit: undefined,
  },
];

for (const c of cases) {
  test(`${c.plural}: status written through /status is kept, without a new generation`, async ({ ns }) => {
    const co = ns.kc.makeApiClient(CustomObjectsApi);
    const ref = { group: GROUP, version: VERSION, namespace: ns.namespace, plural: c.plural, name: c.name };
    const before = (await co.getNamespacedCustomObject(ref)) as Obj;
    const after = (await co.replaceNamespacedCustomObjectStatus({ ...ref, body: { ...before, status: c.status } })) as Obj;
    assert.equal(after.status, c.status);
    assert.is(after.metadata.generation, before.metadata.generation);
    assert.equal(((await co.getNamespacedCustomObject(ref)) as Obj).status, c.status);
  });

  test(`${c.plural}: status sent through the main resource is ignored`, async ({ ns }) => {
    const co = ns.kc.makeApiClient(CustomObjectsApi);
    const ref = { group: GROUP, version: VERSION, namespace: ns.namespace, plural: c.plural, name: c.name };
    const before = (await co.getNamespacedCustomObject(ref)) as Obj & { metadata: { labels?: Record<string, string> } };
    const body = {
      ...before,
      metadata: { ...before.metadata, labels: { ...before.metadata.labels, edited: 'yes' } },
      spec: { ...before.spec, ...c.specEdit },
      status: { ...before.status, id: 999, uuid: '00000000-0000-4000-8000-000000000000' },
    };
    const after = (await co.replaceNamespacedCustomObject({ ...ref, body })) as Obj & { metadata: { labels?: Record<string, string> } };
    assert.is(after.metadata.labels?.edited, 'yes', 'the main-resource write itself went through');
    if (c.specEdit) assert.equal(after.spec, { ...before.spec, ...c.specEdit });
    assert.equal(after.status, c.status, 'status unchanged');
  });
}

test('status fields are validated too (an unknown notification phase is refused)', async ({ ns }) => {
  const co = ns.kc.makeApiClient(CustomObjectsApi);
  const ref = { group: GROUP, version: VERSION, namespace: ns.namespace, plural: 'notifications', name: 'n' };
  const before = (await co.getNamespacedCustomObject(ref)) as Obj;
  try {
    await co.replaceNamespacedCustomObjectStatus({ ...ref, body: { ...before, status: { ...before.status, phase: 'exploded' } } });
    assert.unreachable('an unknown phase was accepted');
  } catch (e) {
    const err = e as { code?: number; body?: string };
    assert.is(err.code, 422);
    assert.match(String(err.body), 'status.phase: Unsupported value: \\"exploded\\"');
  }
});

test.run();
