import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../../testing/expect-error.ts';
import { KubeError } from '../../k8s/client.ts';
import type { FailoverSegment, HaHost } from '../../model/types.ts';
import type { StoreImporter } from '../../store/import.ts';
import type { SourceHost, SourceSegment } from '../../store/import-mapping.ts';
import { executePlan } from './execute.ts';
import type { HostItem, ImportPlan, SegmentItem } from './plan.ts';
import { TargetMissingError } from './validate.ts';

const seg = (id: number, keepsId: boolean): SegmentItem => ({
  kind: 'segment',
  name: `seg-${id}`,
  uuid: `s${id}`,
  sourceId: id,
  id,
  keepsId,
  action: 'create',
  details: [],
  source: { id, uuid: `s${id}`, name: `seg-${id}` } as SourceSegment,
});

const host = (id: number, segId: number, action: HostItem['action'] = 'create'): HostItem => ({
  kind: 'host',
  name: `compute-${id}`,
  uuid: `h${id}`,
  sourceId: id,
  id,
  keepsId: true,
  action,
  details: [],
  source: { id, uuid: `h${id}`, name: `compute-${id}`, segment_uuid: `s${segId}` } as SourceHost,
  ...(action === 'update' ? { existing: { metadata: { name: `k-h${id}` } } as HaHost } : {}),
});

/** Records the calls; a name in `refuse` fails with the given error. */
function fakeImporter(refuse: Record<string, Error> = {}) {
  const calls: string[] = [];
  const importer = {
    async createSegment(src: SourceSegment, keepId: boolean) {
      calls.push(`segment ${src.name} keep=${keepId}`);
      if (refuse[src.name]) throw refuse[src.name];
      return { object: { metadata: { name: `k-${src.name}` } } as FailoverSegment, id: src.id, preserved: keepId };
    },
    async createHost(segment: FailoverSegment, src: SourceHost) {
      calls.push(`host ${src.name} in ${segment.metadata.name}`);
      if (refuse[src.name]) throw refuse[src.name];
      return { object: { metadata: { name: `k-${src.name}` } } as HaHost, id: src.id, preserved: true };
    },
    async updateHost(existing: HaHost, src: SourceHost) {
      calls.push(`update ${src.name}`);
      return { ...existing, status: { id: src.id } } as HaHost;
    },
  };
  return { calls, importer: importer as unknown as StoreImporter };
}

test('segments before hosts; creates that keep their id first, ascending; results in plan order', async () => {
  const { calls, importer } = fakeImporter();
  const plan: ImportPlan = { items: [seg(1, false), host(2, 1), seg(3, true), host(1, 3), seg(2, true)] };
  const results = await executePlan(plan, { importer, namespace: 'ns' });
  assert.equal(calls, [
    'segment seg-2 keep=true',
    'segment seg-3 keep=true',
    'segment seg-1 keep=false',
    'host compute-1 in k-seg-3',
    'host compute-2 in k-seg-1',
  ]);
  assert.equal(
    results.map((r) => `${r.item.name} ${r.outcome}`),
    ['seg-1 created', 'compute-2 created', 'seg-3 created', 'compute-1 created', 'seg-2 created'],
  );
});

test("one failure is that object's result; new hosts of a failed segment fail, updates of others go on", async () => {
  const { calls, importer } = fakeImporter({ 'seg-1': new Error('segment name "seg-1" is already claimed') });
  const plan: ImportPlan = { items: [seg(1, true), host(1, 1), host(3, 1, 'update'), seg(2, true), host(2, 2)] };
  const results = await executePlan(plan, { importer, namespace: 'ns' });
  assert.equal(
    results.map((r) => `${r.item.name} ${r.outcome} ${r.error ?? ''}`.trim()),
    [
      'seg-1 failed segment name "seg-1" is already claimed',
      'compute-1 failed its segment was not imported',
      'compute-3 updated',
      'seg-2 created',
      'compute-2 created',
    ],
  );
  assert.not.ok(calls.includes('host compute-1 in undefined'));
});

test('--verify-hosts refuses a host Nova does not know, before writing it', async () => {
  const { calls, importer } = fakeImporter();
  const plan: ImportPlan = { items: [seg(1, true), host(1, 1), host(2, 1)] };
  const results = await executePlan(plan, {
    importer,
    namespace: 'ns',
    verifyHost: async (name) =>
      name === 'compute-2' ? 'Nova has no nova-compute service on host "compute-2"' : undefined,
  });
  assert.is(results[2]?.outcome, 'failed');
  assert.match(results[2]?.error ?? '', /Nova has no nova-compute service/);
  assert.not.ok(calls.some((c) => c.startsWith('host compute-2')));
});

test('a create answered 404 (no namespace) stops the whole run', async () => {
  const missing = new KubeError(404, 'NotFound', 'namespaces "ns" not found');
  const { importer } = fakeImporter({ 'seg-1': missing });
  const e = await rejection(
    executePlan({ items: [seg(1, true), seg(2, true)] }, { importer, namespace: 'ns' }),
    TargetMissingError,
  );
  assert.match(e.message, /namespace ns or the masakari\.openkeel\.io CRDs do not exist/);
});

test.run();
