// Repository behaviour over an in-memory API server (FakeKube). The same
// behaviours are proven against a real API server in test/integration/store.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  DuplicateNotificationError,
  NameTakenError,
  NotFoundInStoreError,
  StoreUnavailableError,
} from '../domain/repository.ts';
import { KubeError } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { FINALIZERS, LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, Notification, VMoveRecord } from '../model/types.ts';
import type { ConfigMap } from './configmap.ts';
import { claimObjectName, notificationClaimName } from './names.ts';
import { payloadHash } from './admission/fingerprints.ts';
import { pageObject } from './journal-pages.ts';
import { ROLES } from './configmap.ts';
import { NS, hostInput, segmentInput, storeFixture } from './testing/fixture.ts';

async function rejects(fn: () => Promise<unknown>, kind: new (...a: never[]) => Error): Promise<void> {
  try {
    await fn();
  } catch (e) {
    assert.instance(e, kind);
    return;
  }
  assert.unreachable(`expected ${kind.name}`);
}

test('createSegment claims the name, labels uuid/id, holds the cascade finalizer, and is visible at once', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('seg-a'));
  const obj = kube.peek<FailoverSegment>(RESOURCES.segments, NS, s.k8sName)!;
  assert.is(obj.metadata.labels?.[LABELS.uuid], s.uuid);
  assert.is(obj.metadata.labels?.[LABELS.id], String(s.id));
  assert.equal(obj.metadata.finalizers, [FINALIZERS.segmentCascade]);
  assert.is(obj.status?.id, s.id);
  const claim = kube.peek<ConfigMap>(RESOURCES.configMaps, NS, claimObjectName('segment', 'seg-a'))!;
  assert.equal(claim.data, { kind: 'segment', name: 'seg-a', ownerName: s.k8sName });
  assert.equal(repo.getSegment(s.uuid), s);
  assert.is(repo.listSegments().length, 1);
  await rejects(() => repo.createSegment(segmentInput('seg-a')), NameTakenError);
});

test('an object without status (crash between the two create writes) is invisible', async () => {
  const { kube, repo } = await storeFixture();
  await kube.create<FailoverSegment>(RESOURCES.segments, NS, {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'FailoverSegment',
    metadata: { name: 'half', labels: { [LABELS.uuid]: '00000000-0000-4000-8000-000000000001', [LABELS.id]: '1' } },
    spec: { name: 'half', recoveryMethod: 'auto', serviceType: 'x' },
  });
  assert.equal(repo.listSegments(), []);
  assert.is(repo.getSegment('00000000-0000-4000-8000-000000000001'), undefined);
});

test('a failed status write rolls the create back (object, finalizer and claim)', async () => {
  const { kube, repo } = await storeFixture();
  const original = kube.mergePatch.bind(kube);
  kube.mergePatch = (async (ref, ns, name, patch, opts) => {
    if (opts?.status) throw new Error('status write lost');
    return original(ref, ns, name, patch, opts);
  }) as typeof kube.mergePatch;
  await rejects(() => repo.createSegment(segmentInput('lost')), Error);
  kube.mergePatch = original;
  assert.equal(kube.all(RESOURCES.segments, NS), []);
  assert.is(kube.peek(RESOURCES.configMaps, NS, claimObjectName('segment', 'lost')), undefined);
  await repo.createSegment(segmentInput('lost'));
});

test('a write by someone else between create and status write does not stop the admission', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const original = kube.mergePatch.bind(kube);
  let interfered = false;
  kube.mergePatch = (async (ref, ns, name, patch, opts) => {
    if (opts?.status && ref === RESOURCES.notifications && !interfered) {
      interfered = true; // an engine-like status write lands first and moves the resourceVersion on
      await original(ref, ns, name, { status: { vmoves: [] } }, { status: true });
    }
    return original(ref, ns, name, patch, opts);
  }) as typeof kube.mergePatch;
  const n = await repo.createNotification(
    { ...notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), type: 'COMPUTE_HOST', payload: { event: 'STOPPED' } },
    180,
  );
  await repo.settle();
  kube.mergePatch = original;
  assert.ok(interfered);
  const stored = kube.peek<Notification>(RESOURCES.notifications, NS, n.k8sName);
  assert.is(stored?.status?.uuid, n.notification_uuid);
  assert.is(stored?.status?.phase, 'new');
  assert.equal(stored?.status?.vmoves, []);
});

test('rename: new claim taken, old released, metadata.name unchanged, updated_at set', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('old'));
  await repo.createSegment(segmentInput('other'));
  await rejects(() => repo.updateSegment(s.uuid, { name: 'other' }), NameTakenError);
  const r = await repo.updateSegment(s.uuid, { name: 'new', recovery_method: 'reserved_host' });
  assert.is(r.k8sName, s.k8sName);
  assert.is(r.name, 'new');
  assert.is(r.recovery_method, 'reserved_host');
  assert.ok(r.updated_at);
  assert.ok(kube.peek(RESOURCES.configMaps, NS, claimObjectName('segment', 'new')));
  assert.is(kube.peek(RESOURCES.configMaps, NS, claimObjectName('segment', 'old')), undefined);
  await rejects(() => repo.updateSegment('nope', { name: 'x' }), NotFoundInStoreError);
});

test('a stale claim whose owner is gone is taken over on create', async () => {
  const { kube, repo } = await storeFixture({ claimGraceMs: 0 });
  await kube.create<ConfigMap>(RESOURCES.configMaps, NS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: claimObjectName('segment', 'crashed') },
    data: { kind: 'segment', name: 'crashed', ownerName: 'crashed-deadbeef' },
  });
  const s = await repo.createSegment(segmentInput('crashed'));
  assert.is(
    kube.peek<ConfigMap>(RESOURCES.configMaps, NS, claimObjectName('segment', 'crashed'))?.data?.ownerName,
    s.k8sName,
  );
});

test('hosts: unique names across segments, ownerReference to the segment, delete releases the name claim', async () => {
  const { kube, repo } = await storeFixture();
  const s1 = await repo.createSegment(segmentInput('s1'));
  const s2 = await repo.createSegment(segmentInput('s2'));
  const h = await repo.createHost(s1.uuid, hostInput('compute-1'));
  await rejects(() => repo.createHost(s2.uuid, hostInput('compute-1')), NameTakenError);
  const obj = kube.peek<HaHost>(RESOURCES.hosts, NS, h.k8sName)!;
  assert.is(obj.metadata.ownerReferences?.[0]?.name, s1.k8sName);
  assert.is(obj.spec.segmentRef.name, s1.k8sName);
  assert.is(h.failover_segment_id, s1.uuid);
  assert.equal(
    repo.listHosts(s1.uuid).map((x) => x.uuid),
    [h.uuid],
  );
  assert.equal(repo.listHosts(s2.uuid), []);
  await repo.createNotification(
    {
      type: 'VM',
      hostname: 'compute-1',
      generated_time: '2026-01-01T00:00:00',
      payload: { instance_uuid: 'i', vir_domain_event: 'STOPPED_FAILED', event: 'LIFECYCLE' },
      source_host_uuid: h.uuid,
      failover_segment_uuid: s1.uuid,
    },
    180,
  );
  const dupClaims = () =>
    kube
      .all<ConfigMap>(RESOURCES.configMaps, NS)
      .filter((c) => c.metadata.labels?.[LABELS.role] === ROLES.notificationClaim);
  assert.is(dupClaims().length, 1);
  // the duplicate claim belongs to the host on a cluster with a garbage collector
  assert.is(dupClaims()[0]?.metadata.ownerReferences?.[0]?.kind, 'HaHost');
  await repo.deleteHost(h.uuid);
  assert.is(kube.peek(RESOURCES.hosts, NS, h.k8sName), undefined);
  assert.is(kube.peek(RESOURCES.configMaps, NS, claimObjectName('host', 'compute-1')), undefined);
  assert.is(repo.getHost(h.uuid), undefined);
  // Notifications outlive their host, as in Masakari.
  assert.is(repo.listNotifications().length, 1);
});

test('host flags: engine latch effective; unrelated PUT keeps it; PUT on_maintenance=false clears it', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const gen = kube.peek<HaHost>(RESOURCES.hosts, NS, h.k8sName)!.metadata.generation;
  await kube.mergePatch(
    RESOURCES.hosts,
    NS,
    h.k8sName,
    { status: { onMaintenance: true, flagsGeneration: gen } },
    { status: true },
  );
  assert.is(repo.getHost(h.uuid)?.on_maintenance, true);
  const kept = await repo.updateHost(h.uuid, { type: 'OTHER' });
  assert.is(kept.on_maintenance, true);
  const cleared = await repo.updateHost(h.uuid, { on_maintenance: false });
  assert.is(cleared.on_maintenance, false);
  // spec already said false: the status write is what cleared it
  const stored = kube.peek<HaHost>(RESOURCES.hosts, NS, h.k8sName)!;
  assert.is(stored.status?.onMaintenance, false);
  assert.is(stored.status?.flagsGeneration, stored.metadata.generation);
});

test('a REST PUT of a host keeps its spec.fencing (a kubectl/GitOps field the Masakari API does not show)', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const fencing = {
    driver: 'redfish' as const,
    address: 'https://10.0.0.5:8000',
    systemId: '1',
    credentialsSecretRef: { name: 'bmc-compute-1' },
  };
  await kube.mergePatch(RESOURCES.hosts, NS, h.k8sName, { spec: { fencing } });
  const updated = await repo.updateHost(h.uuid, { name: 'compute-1b', reserved: true, on_maintenance: true });
  assert.is(updated.name, 'compute-1b');
  assert.not.ok('fencing' in updated, 'not in the Masakari view');
  assert.equal(kube.peek<HaHost>(RESOURCES.hosts, NS, h.k8sName)!.spec.fencing, fencing);
});

test('segment delete cascades to hosts (and their claims), then releases its own claim', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  await repo.createHost(s.uuid, hostInput('a'));
  await repo.createHost(s.uuid, hostInput('b'));
  await repo.deleteSegment(s.uuid);
  assert.equal(kube.all(RESOURCES.hosts, NS), []);
  assert.equal(kube.all(RESOURCES.segments, NS), []);
  assert.equal(
    kube.all(RESOURCES.configMaps, NS).filter((c) => (c as ConfigMap).metadata.name?.startsWith('claim-')),
    [],
  );
  assert.equal(repo.listSegments(), []);
  await repo.createHost((await repo.createSegment(segmentInput('s'))).uuid, hostInput('a'));
});

test('segment delete reads the hosts in pages and deletes only its own', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const other = await repo.createSegment(segmentInput('other'));
  await repo.createHost(s.uuid, hostInput('a'));
  await repo.createHost(other.uuid, hostInput('b'));
  await repo.deleteSegment(s.uuid);
  const hostLists = kube
    .callsOf('list')
    .filter((c) => (c.args[0] as { plural: string }).plural === RESOURCES.hosts.plural);
  assert.ok(hostLists.length > 0, 'the hosts were listed');
  for (const c of hostLists) assert.ok((c.args[2] as { limit?: number } | undefined)?.limit, 'every list is a page');
  assert.equal(
    kube.all<HaHost>(RESOURCES.hosts, NS).map((h) => h.spec.name),
    ['b'],
  );
});

function notification(hostUuid: string, segUuid: string, t: string, event = 'STOPPED') {
  return {
    type: 'PROCESS' as const,
    hostname: 'compute-1',
    generated_time: t,
    payload: { process_name: 'nova-compute', event },
    source_host_uuid: hostUuid,
    failover_segment_uuid: segUuid,
  };
}

test('duplicate rule: same type/host/payload within the window → DuplicateNotificationError', async () => {
  const { repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const first = await repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), 180);
  assert.is(first.status, 'new');
  await rejects(
    () => repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:03:00'), 180),
    DuplicateNotificationError,
  );
  await repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:03:01'), 180);
  await repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00', 'STARTED'), 180);
  assert.is(repo.listNotifications().length, 3);
});

test('50 concurrent identical notifications → exactly one created', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, () => repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), 180)),
  );
  assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of results) if (r.status === 'rejected') assert.instance(r.reason, DuplicateNotificationError);
  assert.is(kube.all(RESOURCES.notifications, NS).length, 1);
});

test('without an admission key, an accepted notification costs three writes and no reads at the API server, however many the host has', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const isSequence = (name: string) => name.startsWith('masakari-ids-');
  const costs: Array<{ writes: string[]; reads: number }> = [];
  for (let i = 0; i < 60; i++) {
    const writesBefore = kube.writes.length;
    const callsBefore = kube.log.length;
    const vm = { ...notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), type: 'VM' as const };
    await repo.createNotification({ ...vm, payload: { event: 'LIFECYCLE', instance_uuid: `i-${i}` } }, 180);
    await repo.settle(); // the background status write
    const writes = kube.writes
      .slice(writesBefore)
      .filter((w) => !isSequence(w.name))
      .map((w) => `${w.op} ${w.plural}`);
    const reads = kube.log
      .slice(callsBefore)
      .filter((c) => (c.method === 'get' || c.method === 'list') && !isSequence(String(c.args[2])));
    costs.push({ writes, reads: reads.length });
  }
  // Claim created, Notification created alongside it, status written in the background.
  const expected = { writes: ['create configmaps', 'create notifications', 'patchStatus notifications'], reads: 0 };
  for (const [i, cost] of costs.entries()) {
    assert.equal({ ...cost, writes: [...cost.writes].sort() }, expected, `notification ${i}`);
  }
});

test('the Notification is created alongside its claim, not after it (one API round trip before the 202, not two)', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const create = kube.create.bind(kube);
  let notificationCreateStarted!: () => void;
  const started = new Promise<void>((resolve) => (notificationCreateStarted = resolve));
  // The claim's create answers only once the Notification's create has started: a create that waited for the claim would hang.
  kube.create = (async (resource, namespace, body, opts) => {
    if (resource.plural === 'notifications') notificationCreateStarted();
    if (resource.plural === 'configmaps' && (body as ConfigMap).metadata?.name?.startsWith('nfp-')) {
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the Notification create waited for the claim')), 1000),
      );
      await Promise.race([started, timeout]);
    }
    return create(resource, namespace, body, opts);
  }) as typeof kube.create;
  try {
    const created = await repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), 180);
    assert.is(created.status, 'new');
  } finally {
    kube.create = create;
  }
  await repo.settle();
});

test('a claim whose holder is inside the window deletes the Notification created alongside it: 409, and nothing of it is left', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const first = await repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), 180);
  await repo.settle();
  const before = kube.all<Notification>(RESOURCES.notifications, NS).map((o) => o.metadata.name);
  // Bypass the cache check: the claim alone must refuse it (as on a replica whose cache lags).
  repo['deps'].caches.notifications.deleteLocal(first.k8sName);
  await rejects(
    () => repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:02:50'), 180),
    DuplicateNotificationError,
  );
  const deletes = kube.writes.filter((w) => w.op === 'delete' && w.plural === 'notifications');
  assert.is(deletes.length, 1, 'the early Notification was deleted');
  assert.equal(
    kube.all<Notification>(RESOURCES.notifications, NS).map((o) => o.metadata.name),
    before,
  );
});

/** A duplicate claim as a creator that crashed would have left it. */
async function leftClaim(
  kube: Awaited<ReturnType<typeof storeFixture>>['kube'],
  hostUuid: string,
  n: ReturnType<typeof notification>,
  notificationName: string,
  uuid: string,
  acceptedAt = Date.now(),
) {
  await kube.create<ConfigMap>(RESOURCES.configMaps, NS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: notificationClaimName(n.type, hostUuid, payloadHash(n.payload)),
      labels: { [LABELS.role]: ROLES.notificationClaim },
    },
    data: {
      generatedTime: n.generated_time,
      notification: notificationName,
      uuid,
      acceptedAt: String(acceptedAt),
      window: '180',
    },
  });
}

test('a claim left by a creator that crashed before creating its Notification is finished by the retry, under the recorded uuid', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const n = notification(h.uuid, s.uuid, '2026-01-01T00:00:00');
  const uuid = '99999999-0000-4000-8000-000000000000';
  await leftClaim(kube, h.uuid, n, 'crashed-notif', uuid);
  const created = await repo.createNotification({ ...n, generated_time: '2026-01-01T00:01:00' }, 180);
  assert.is(created.notification_uuid, uuid);
  assert.is(created.k8sName, 'crashed-notif');
  assert.is(created.generated_time, '2026-01-01T00:00:00', 'the recorded notification, not the retry');
  await rejects(() => repo.createNotification(n, 180), DuplicateNotificationError);
});

test('a claim left by a creator that crashed after creating its Notification makes the retry a duplicate, not a second notification', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const n = notification(h.uuid, s.uuid, '2026-01-01T00:00:00');
  const uuid = '99999999-0000-4000-8000-000000000001';
  await leftClaim(kube, h.uuid, n, 'created-early', uuid);
  await kube.create<Notification>(RESOURCES.notifications, NS, {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: { name: 'created-early', labels: { [LABELS.uuid]: uuid, [LABELS.id]: '7' } },
    spec: { type: n.type, hostname: 'compute-1', generatedTime: n.generated_time, payload: n.payload },
  });
  await rejects(() => repo.createNotification(n, 180), DuplicateNotificationError);
  const claim = kube
    .all<ConfigMap>(RESOURCES.configMaps, NS)
    .find((c) => c.metadata.labels?.[LABELS.role] === ROLES.notificationClaim);
  assert.is(claim?.data?.notification, 'created-early', 'the kubectl-path reconciler admits it later');
  assert.equal(
    kube.all<Notification>(RESOURCES.notifications, NS).map((o) => o.metadata.name),
    ['created-early'],
  );
});

test('a claim older than the pending time whose holder is gone no longer counts', async () => {
  const { kube, repo } = await storeFixture({ pendingClaimMs: 1000 });
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const n = notification(h.uuid, s.uuid, '2026-01-01T00:00:00');
  await leftClaim(kube, h.uuid, n, 'deleted', 'u', Date.now() - 60_000);
  const created = await repo.createNotification(n, 180);
  assert.is.not(created.k8sName, 'deleted');
  await repo.settle();
});

test('an API server failure during intake is StoreUnavailableError (503 with Retry-After), not a bare error', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const create = kube.create.bind(kube);
  kube.create = async () => {
    throw new KubeError(500, 'InternalError', 'etcdserver: mvcc: database space exceeded');
  };
  try {
    const err = await repo
      .createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), 180)
      .catch((e: unknown) => e);
    assert.instance(err, StoreUnavailableError);
    assert.ok((err as StoreUnavailableError).retryAfterSeconds > 0);
  } finally {
    kube.create = create;
  }
});

test('vmoves are read from the notification status', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const n = await repo.createNotification(
    { ...notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), type: 'COMPUTE_HOST', payload: { event: 'STOPPED' } },
    180,
  );
  const move = {
    id: 4,
    uuid: 'vm-uuid',
    instanceUuid: 'i',
    instanceName: null,
    sourceHost: 'compute-1',
    destHost: null,
    startTime: null,
    endTime: null,
    type: 'evacuation',
    status: 'pending',
    message: null,
    createdAt: '2026-01-01T00:00:01.5Z',
    updatedAt: null,
  };
  await kube.mergePatch<Notification>(
    RESOURCES.notifications,
    NS,
    n.k8sName,
    { status: { vmoves: [move] } },
    { status: true },
  );
  assert.is((await repo.listVMoves(n.notification_uuid))[0]?.created_at, '2026-01-01T00:00:01');
  assert.is((await repo.getVMove(n.notification_uuid, 'vm-uuid'))?.notification_uuid, n.notification_uuid);
  assert.is(await repo.getVMove(n.notification_uuid, 'nope'), undefined);
  assert.is(await repo.getVMove('another-notification', 'vm-uuid'), undefined);
});

test("the cache keeps no notification's history; show 1.1 and vmoves read it from the API server", async () => {
  const { kube, caches, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const n = await repo.createNotification(
    { ...notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), type: 'COMPUTE_HOST', payload: { event: 'STOPPED' } },
    180,
  );
  await repo.settle();
  const details = [{ name: 'DisableComputeServiceTask', progress: 1, state: 'SUCCESS', run: 0, progressDetails: [] }];
  const written = await kube.mergePatch<Notification>(
    RESOURCES.notifications,
    NS,
    n.k8sName,
    { status: { phase: 'running', recoveryWorkflowDetails: details, vmoves: [], engine: { effects: {} } } },
    { status: true },
  );
  await caches.notifications.waitForResourceVersion(written.metadata.resourceVersion ?? '', 5000);
  const cached = caches.notifications.get(n.k8sName);
  assert.is(cached?.status?.phase, 'running');
  assert.equal(
    [cached?.status?.recoveryWorkflowDetails, cached?.status?.vmoves, cached?.status?.engine],
    [undefined, undefined, undefined],
  );
  assert.equal(repo.getNotification(n.notification_uuid)?.recovery_workflow_details, []);
  assert.equal((await repo.getNotificationDetails(n.notification_uuid))?.recovery_workflow_details, details);
});

test('show 1.1 right after the 202, before the status write has landed, finds the notification (python-masakariclient shows what it created)', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const original = kube.mergePatch.bind(kube);
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  kube.mergePatch = (async (ref, ns, name, patch, opts) => {
    if (opts?.status && ref === RESOURCES.notifications) await held;
    return original(ref, ns, name, patch, opts);
  }) as typeof kube.mergePatch;
  const n = await repo.createNotification(notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), 180);
  assert.is(kube.peek<Notification>(RESOURCES.notifications, NS, n.k8sName)?.status?.uuid, undefined);
  const shown = await repo.getNotificationDetails(n.notification_uuid);
  assert.is(shown?.notification_uuid, n.notification_uuid);
  assert.is(shown?.id, n.id);
  assert.equal(shown?.recovery_workflow_details, []);
  assert.equal(await repo.listVMoves(n.notification_uuid), []);
  release();
  kube.mergePatch = original;
  await repo.settle();
});

test('history moved into journal pages is served as if it were in the status', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  const n = await repo.createNotification(
    { ...notification(h.uuid, s.uuid, '2026-01-01T00:00:00'), type: 'COMPUTE_HOST', payload: { event: 'STOPPED' } },
    180,
  );
  const move = (id: number, status: VMoveRecord['status']): VMoveRecord => ({
    id,
    uuid: `vm-${id}`,
    instanceUuid: `i-${id}`,
    instanceName: null,
    sourceHost: 'compute-1',
    destHost: null,
    startTime: null,
    endTime: null,
    type: 'evacuation',
    status,
    message: null,
    createdAt: '2026-01-01T00:00:01Z',
    updatedAt: null,
    run: 0,
  });
  const line = (m: string) => ({ timestamp: '2026-01-01 00:00:01.000000', progress: '0.5', message: m });
  const stored = kube.peek<Notification>(RESOURCES.notifications, NS, n.k8sName)!;
  await kube.create(RESOURCES.configMaps, NS, {
    ...pageObject(stored, {
      seq: 0,
      vmoves: [move(1, 'succeeded'), move(2, 'ongoing')],
      lines: [{ name: 'EvacuateInstancesTask', run: 0, details: [line('first')] }],
    }),
  });
  // a page not counted by the status yet (its status write never happened) is ignored
  await kube.create(RESOURCES.configMaps, NS, pageObject(stored, { seq: 1, vmoves: [move(9, 'failed')] }));
  await kube.mergePatch<Notification>(
    RESOURCES.notifications,
    NS,
    n.k8sName,
    {
      status: {
        vmoves: [move(2, 'succeeded'), move(3, 'pending')],
        recoveryWorkflowDetails: [
          { name: 'EvacuateInstancesTask', progress: 0.5, state: 'RUNNING', run: 0, progressDetails: [line('second')] },
        ],
        engine: { journalPages: 1 },
      },
    },
    { status: true },
  );
  const moves = await repo.listVMoves(n.notification_uuid);
  assert.equal(
    moves.map((m) => [m.uuid, m.status]),
    [
      ['vm-1', 'succeeded'],
      ['vm-2', 'succeeded'],
      ['vm-3', 'pending'],
    ],
  );
  assert.is((await repo.getVMove(n.notification_uuid, 'vm-1'))?.notification_uuid, n.notification_uuid);
  assert.is(await repo.getVMove(n.notification_uuid, 'vm-9'), undefined);
  const details = (await repo.getNotificationDetails(n.notification_uuid))?.recovery_workflow_details;
  assert.equal(
    details?.[0]?.progressDetails.map((d) => d.message),
    ['first', 'second'],
  );
});

test.run();
