// The store side of `masakari-operator import` on a real API server: ids kept
// or re-allocated through the sequence's compare-and-swap (also against
// concurrent block reservations), claims taken before anything else, a
// metadata.name already in use, an interrupted create finished by a re-run,
// and the facade's repository serving what was imported.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { useNamespace, type TestNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { KubeError } from '../../../src/k8s/client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION, FINALIZERS, LABELS, MANAGED_BY } from '../../../src/model/constants.ts';
import type { FailoverSegment } from '../../../src/model/types.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { NameTakenError } from '../../../src/domain/repository.ts';
import { standaloneStore } from '../../../src/testing/store.ts';
import { createIdAllocator, reserveImportedId } from '../../../src/store/ids.ts';
import { StoreImporter } from '../../../src/store/import.ts';
import type { SourceHost, SourceSegment } from '../../../src/store/import-mapping.ts';
import { claimObjectName, restObjectName } from '../../../src/store/names.ts';
import { isAdmitted } from '../../../src/domain/admitted.ts';

const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });

interface Env {
  ns: TestNamespace;
  kube: KubeClient & { close(): Promise<void> };
}

const t = suite<Env>('store import');

t.before(async (env) => {
  env.ns = await useNamespace('store-import');
  env.kube = createKubeClient(env.ns.kc);
});

t.after(async (env) => {
  await env.kube.close();
  await env.ns.cleanup();
});

let n = 0;
const nextUuid = () => {
  n++;
  return randomUUID();
};

const segment = (id: number, extra: Partial<SourceSegment> = {}): SourceSegment => ({
  id,
  uuid: nextUuid(),
  name: `imported-${id}-${n}`,
  service_type: 'COMPUTE',
  recovery_method: 'reserved_host',
  description: 'from masakari',
  enabled: false,
  updated_at: '2026-01-02T03:04:05.000000',
  ...extra,
});

async function freshNamespace(): Promise<{ ns: TestNamespace; kube: KubeClient & { close(): Promise<void> } }> {
  const ns = await useNamespace('store-import-ids');
  return { ns, kube: createKubeClient(ns.kc) };
}

t('reserveImportedId keeps ids the sequence never reached and moves the mark past them', async () => {
  const { ns, kube } = await freshNamespace();
  try {
    const reserve = (wanted?: number) => reserveImportedId(kube, ns.namespace, 'segments', wanted);
    assert.equal(await reserve(5), { id: 5, preserved: true });
    assert.equal(await reserve(3), { id: 6, preserved: false });
    assert.equal(await reserve(7), { id: 7, preserved: true });
    const allocator = createIdAllocator(kube, ns.namespace, 'segments', 20);
    assert.is(await allocator.next(), 8); // its block is 8..27
    assert.equal(await reserve(10), { id: 28, preserved: false });
    assert.is(await allocator.highWaterMark(), 29);
  } finally {
    await kube.close();
    await ns.cleanup();
  }
});

t('reserveImportedId and block reservations running at once never hand out an id twice', async () => {
  const { ns, kube } = await freshNamespace();
  try {
    const allocators = [1, 2].map(() => createIdAllocator(kube, ns.namespace, 'hosts', 3));
    const ids = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        reserveImportedId(kube, ns.namespace, 'hosts', i % 2 ? 100 + i : undefined).then((r) => r.id),
      ),
      ...allocators.flatMap((a) => Array.from({ length: 6 }, () => a.next())),
    ]);
    assert.is(new Set(ids).size, ids.length, `unique: ${ids.join(',')}`);
  } finally {
    await kube.close();
    await ns.cleanup();
  }
});

t('a created segment and host are served by the repository with their uuids, ids and fields', async ({ ns, kube }) => {
  const importer = new StoreImporter({ kube, namespace: ns.namespace, log, importedFrom: 'http://m/v1' });
  const seg = segment(40);
  const created = await importer.createSegment(seg, true);
  assert.equal([created.id, created.preserved], [40, true]);
  const host: SourceHost = {
    id: 41,
    uuid: nextUuid(),
    name: `host-${n}`,
    segment_uuid: seg.uuid,
    type: 'COMPUTE',
    control_attributes: 'SSH',
    reserved: true,
    on_maintenance: true,
    updated_at: null,
  };
  const h = await importer.createHost(created.object, host, true);
  assert.equal([h.id, h.preserved], [41, true]);

  const repo = standaloneStore({
    kube,
    namespace: ns.namespace,
    config: loadConfig({ env: {} }).config,
    log,
  });
  await repo.start();
  try {
    const s = repo.getSegment(seg.uuid);
    assert.ok(s);
    assert.equal(
      { ...s, created_at: '-', k8sName: '-' },
      {
        id: 40,
        uuid: seg.uuid,
        name: seg.name,
        service_type: 'COMPUTE',
        enabled: false,
        description: 'from masakari',
        recovery_method: 'reserved_host',
        created_at: '-',
        updated_at: '2026-01-02T03:04:05',
        k8sName: '-',
      },
    );
    const hr = repo.getHost(host.uuid);
    assert.ok(hr);
    assert.equal(
      [hr.id, hr.failover_segment_id, hr.reserved, hr.on_maintenance, hr.updated_at],
      [41, seg.uuid, true, true, null],
    );
    // Deleting through the facade cascades as for any segment: finalizers and claims are in place.
    await repo.deleteSegment(seg.uuid);
    assert.is(repo.getHost(host.uuid), undefined);
  } finally {
    await repo.stop();
  }
});

t('a name already claimed fails the create before any id is used', async ({ ns, kube }) => {
  const importer = new StoreImporter({ kube, namespace: ns.namespace, log, importedFrom: 'http://m/v1' });
  const first = await importer.createSegment(segment(50), true);
  const before = await createIdAllocator(kube, ns.namespace, 'segments').highWaterMark();
  try {
    await importer.createSegment(segment(60, { name: first.object.spec.name }), true);
    assert.unreachable('the name is taken');
  } catch (e) {
    assert.instance(e, NameTakenError, String(e));
  }
  assert.is(await createIdAllocator(kube, ns.namespace, 'segments').highWaterMark(), before);
});

t(
  "a same-named source object whose uuid starts alike does not take or drop the holder's claim",
  async ({ ns, kube }) => {
    const importer = new StoreImporter({ kube, namespace: ns.namespace, log, importedFrom: 'http://m/v1' });
    const first = await importer.createSegment(segment(90), true);
    const twin = segment(91, { name: first.object.spec.name });
    twin.uuid = `${first.object.status?.uuid?.slice(0, 8)}-ffff-4fff-8fff-ffffffffffff`;
    try {
      await importer.createSegment(twin, true);
      assert.unreachable('the name is taken');
    } catch (e) {
      assert.instance(e, NameTakenError, String(e));
    }
    const claim = await kube.get<{ data: Record<string, string> }>(
      RESOURCES.configMaps,
      ns.namespace,
      claimObjectName('segment', first.object.spec.name),
    );
    assert.is(claim.data.ownerName, first.object.metadata.name);
  },
);

t('a metadata.name a kubectl author already used makes the import take the full-uuid name', async ({ ns, kube }) => {
  const seg = segment(70);
  const squatter: FailoverSegment = {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name: restObjectName(seg.name, seg.uuid, 'segment') },
    spec: { name: 'squatter', serviceType: 'x', recoveryMethod: 'auto' },
  };
  await kube.create(RESOURCES.segments, ns.namespace, squatter);
  const importer = new StoreImporter({ kube, namespace: ns.namespace, log, importedFrom: 'http://m/v1' });
  const created = await importer.createSegment(seg, true);
  assert.is(created.object.metadata.name, `${seg.name}-${seg.uuid}`);
  assert.is(created.object.status?.uuid, seg.uuid);
});

t(
  'an interrupted create (labels but no status) is finished by the next run with its label id',
  async ({ ns, kube }) => {
    const seg = segment(80);
    const { id } = await reserveImportedId(kube, ns.namespace, 'segments', 80);
    const half = await kube.create<FailoverSegment>(RESOURCES.segments, ns.namespace, {
      apiVersion: API_VERSION,
      kind: 'FailoverSegment',
      metadata: {
        name: restObjectName(seg.name, seg.uuid, 'segment'),
        labels: { [LABELS.uuid]: seg.uuid, [LABELS.id]: String(id), [LABELS.managedBy]: MANAGED_BY },
        finalizers: [FINALIZERS.segmentCascade],
      },
      spec: { name: seg.name, serviceType: 'COMPUTE', recoveryMethod: 'auto' },
    });
    assert.not.ok(isAdmitted(half));
    const importer = new StoreImporter({ kube, namespace: ns.namespace, log, importedFrom: 'http://m/v1' });
    const done = await importer.updateSegment(half, seg);
    assert.ok(isAdmitted(done));
    assert.equal([done.status?.uuid, done.status?.id], [seg.uuid, id]);
    assert.equal(
      [done.spec.recoveryMethod, done.spec.enabled, done.spec.description],
      ['reserved_host', false, 'from masakari'],
    );
  },
);

t('the dry-run checks answer what the API server would refuse, and write nothing', async ({ ns, kube }) => {
  const importer = new StoreImporter({ kube, namespace: ns.namespace, log, importedFrom: 'http://m/v1' });
  const fine = segment(100);
  await importer.dryRunSegment(fine);
  const huge = segment(101, { description: 'x'.repeat(70_000) });
  try {
    await importer.dryRunSegment(huge);
    assert.unreachable('a description longer than the CRD allows is refused');
  } catch (e) {
    assert.instance(e, KubeError);
    assert.is((e as KubeError).code, 422);
    assert.match((e as KubeError).message, /description/);
  }
  const list = await kube.list<FailoverSegment>(RESOURCES.segments, ns.namespace, {
    labelSelector: `${LABELS.uuid} in (${fine.uuid},${huge.uuid})`,
  });
  assert.is(list.items.length, 0);

  const elsewhere = new StoreImporter({ kube, namespace: 'no-such-namespace-0', log, importedFrom: 'http://m/v1' });
  try {
    await elsewhere.dryRunSegment(fine);
    assert.unreachable('no namespace');
  } catch (e) {
    assert.is((e as KubeError).code, 404);
  }
});

t.run();
