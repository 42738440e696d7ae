// The kubectl/GitOps path over an in-memory API server: objects created
// without the REST API get admitted (or flagged) by calling the reconcile
// functions directly, as the controllers' workers do.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION, FINALIZERS, LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import { NS, hostInput, segmentInput, storeFixture } from './testing/fixture.ts';
import { reconcileHost } from './host-reconciler.ts';
import { reconcileNotification } from './notification-reconciler.ts';
import { reconcileSegment } from './segment-reconciler.ts';
import { admissionStatusIfChanged } from '../store/index.ts';
import { readyCondition, REASONS } from '../domain/admitted.ts';

const segment = (name: string, masakariName: string): FailoverSegment => ({
  apiVersion: API_VERSION,
  kind: 'FailoverSegment',
  metadata: { name },
  spec: { name: masakariName, recoveryMethod: 'auto', serviceType: 'COMPUTE' },
});
const host = (name: string, hostName: string, seg: string): HaHost => ({
  apiVersion: API_VERSION,
  kind: 'HaHost',
  metadata: { name },
  spec: { name: hostName, segmentRef: { name: seg }, type: 'COMPUTE', controlAttributes: 'SSH' },
});
const notification = (name: string, hostname: string): Notification => ({
  apiVersion: API_VERSION,
  kind: 'Notification',
  metadata: { name },
  spec: {
    type: 'PROCESS',
    hostname,
    generatedTime: '2026-01-01T00:00:00Z',
    payload: { process_name: 'nova-compute', event: 'STOPPED' },
  },
});

test('a kubectl segment gets finalizer, claim, uuid = metadata.uid, id, Ready=True, and is listed', async () => {
  const { kube, repo, admission } = await storeFixture();
  const created = await kube.create(RESOURCES.segments, NS, segment('gitops', 'GitOps'));
  await reconcileSegment(admission, 'gitops');
  const obj = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'gitops')!;
  assert.equal(obj.metadata.finalizers, [FINALIZERS.segmentCascade]);
  assert.is(obj.status?.uuid, created.metadata.uid);
  assert.is(obj.metadata.labels?.[LABELS.id], String(obj.status?.id));
  assert.is(readyCondition(obj)?.status, 'True');
  assert.is(obj.status?.updatedAt, undefined);
  assert.equal(obj.spec, created.spec, 'spec untouched');
  const listed = repo.listSegments();
  assert.is(listed.length, 1);
  assert.is(listed[0]?.k8sName, 'gitops');
  // steady state: a second pass writes nothing
  const before = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'gitops')!.metadata.resourceVersion;
  await reconcileSegment(admission, 'gitops');
  assert.is(kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'gitops')!.metadata.resourceVersion, before);
  // a spec edit (generation bump) sets updatedAt
  await kube.mergePatch(RESOURCES.segments, NS, 'gitops', { spec: { enabled: false } });
  await reconcileSegment(admission, 'gitops');
  assert.ok(kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'gitops')!.status?.updatedAt);
});

test('a kubectl segment with a taken name is flagged NameConflict and never listed', async () => {
  const { kube, repo, admission } = await storeFixture();
  await repo.createSegment(segmentInput('taken'));
  await kube.create(RESOURCES.segments, NS, segment('copy', 'taken'));
  await reconcileSegment(admission, 'copy');
  const obj = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'copy')!;
  assert.is(readyCondition(obj)?.reason, REASONS.nameConflict);
  assert.is(readyCondition(obj)?.message, 'Failover segment with name taken already exists.');
  assert.is(obj.status?.id, undefined);
  assert.is(repo.listSegments().length, 1);
});

test('an invalid spec is flagged InvalidSpec with Masakari’s message', async () => {
  const { kube, admission } = await storeFixture();
  await kube.create(RESOURCES.segments, NS, segment('bad', ''));
  await reconcileSegment(admission, 'bad');
  const ready = readyCondition(kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'bad')!);
  assert.is(ready?.reason, REASONS.invalidSpec);
  assert.ok(ready?.message);
});

test('a host whose segment does not exist is flagged, then admitted once the segment is', async () => {
  const { kube, repo, admission } = await storeFixture();
  await kube.create(RESOURCES.hosts, NS, host('h1', 'compute-1', 'seg'));
  await reconcileHost(admission, 'h1');
  assert.is(readyCondition(kube.peek<HaHost>(RESOURCES.hosts, NS, 'h1')!)?.reason, REASONS.segmentNotFound);
  await kube.create(RESOURCES.segments, NS, segment('seg', 'Seg'));
  await reconcileSegment(admission, 'seg');
  await reconcileHost(admission, 'h1');
  const obj = kube.peek<HaHost>(RESOURCES.hosts, NS, 'h1')!;
  const seg = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'seg')!;
  assert.is(readyCondition(obj)?.status, 'True');
  assert.is(obj.status?.segmentUuid, seg.status?.uuid);
  assert.is(obj.metadata.labels?.[LABELS.segmentUuid], seg.status?.uuid);
  assert.is(obj.metadata.ownerReferences?.[0]?.uid, seg.metadata.uid);
  assert.equal(obj.metadata.finalizers, [FINALIZERS.hostCleanup]);
  assert.is(repo.getHostByName('compute-1')?.failover_segment_id, seg.status?.uuid);
});

test('a kubectl notification is admitted with host/segment uuids and phase new, or flagged', async () => {
  const { kube, repo, admission } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  await kube.create(RESOURCES.notifications, NS, notification('ghost', 'nobody'));
  await reconcileNotification(admission, 'ghost');
  assert.is(
    readyCondition(kube.peek<Notification>(RESOURCES.notifications, NS, 'ghost')!)?.reason,
    REASONS.hostNotFound,
  );

  await kube.create(RESOURCES.notifications, NS, notification('n1', 'compute-1'));
  await reconcileNotification(admission, 'n1');
  const n1 = kube.peek<Notification>(RESOURCES.notifications, NS, 'n1')!;
  assert.is(n1.status?.phase, 'new');
  assert.is(n1.status?.sourceHostUuid, h.uuid);
  assert.is(n1.status?.failoverSegmentUuid, s.uuid);
  assert.is(repo.listNotifications().length, 1);

  // the same notification again is a duplicate, through the same duplicate claims as the REST path
  await kube.create(RESOURCES.notifications, NS, notification('n2', 'compute-1'));
  await reconcileNotification(admission, 'n2');
  assert.is(readyCondition(kube.peek<Notification>(RESOURCES.notifications, NS, 'n2')!)?.reason, REASONS.duplicate);
  assert.is(repo.listNotifications().length, 1);
});

test('replay: a notification refused because its host is on maintenance stays refused after the maintenance is cleared', async () => {
  const { kube, repo, admission } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, { ...hostInput('compute-1'), on_maintenance: true });
  await kube.create(RESOURCES.notifications, NS, notification('replayed', 'compute-1'));
  await reconcileNotification(admission, 'replayed');
  const refused = kube.peek<Notification>(RESOURCES.notifications, NS, 'replayed')!;
  assert.is(readyCondition(refused)?.reason, REASONS.hostOnMaintenance);
  assert.is(refused.status?.uuid, undefined);

  // The host is repaired and returned to service: the host's update enqueues the notification again.
  await repo.updateHost(h.uuid, { on_maintenance: false });
  await reconcileNotification(admission, 'replayed');
  const after = kube.peek<Notification>(RESOURCES.notifications, NS, 'replayed')!;
  assert.is(readyCondition(after)?.reason, REASONS.hostOnMaintenance, 'still refused: Masakari ignores it for good');
  assert.is(after.status?.uuid, undefined, 'never admitted, so never run');
  assert.is(after.status?.phase, undefined);
  assert.is(repo.listNotifications().length, 0);
});

test('kubectl delete of a segment: the reconciler cascades to hosts and releases claims', async () => {
  const { kube, repo, admission } = await storeFixture();
  const s = await repo.createSegment(segmentInput('doomed'));
  await repo.createHost(s.uuid, hostInput('compute-d'));
  await kube.delete(RESOURCES.segments, NS, s.k8sName);
  assert.ok(kube.peek<FailoverSegment>(RESOURCES.segments, NS, s.k8sName)?.metadata.deletionTimestamp);
  assert.equal(repo.listSegments(), []);
  assert.equal(repo.listHosts(), [], 'hosts of a deleting segment are hidden');
  await reconcileSegment(admission, s.k8sName);
  assert.equal(kube.all(RESOURCES.segments, NS), []);
  assert.equal(kube.all(RESOURCES.hosts, NS), []);
  await repo.createSegment(segmentInput('doomed'));
});

test('a host admitted to a segment that vanished is deleted, as a garbage collector would', async () => {
  const { kube, repo, admission } = await storeFixture();
  const s = await repo.createSegment(segmentInput('s'));
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  // the segment disappears without its cascade (e.g. finalizer removed by hand)
  await kube.mergePatch(RESOURCES.segments, NS, s.k8sName, { metadata: { finalizers: null } });
  await kube.delete(RESOURCES.segments, NS, s.k8sName);
  await reconcileHost(admission, h.k8sName);
  assert.equal(kube.all(RESOURCES.hosts, NS), []);
});

test('refused objects carry kstatus conditions (Stalled, or Reconciling while waiting); admitted ones neither', async () => {
  const { kube, repo, admission } = await storeFixture();
  const types = (obj: FailoverSegment | HaHost) =>
    (obj.status?.conditions ?? []).map(
      (c) => `${c.type}=${c.status}${c.status === 'True' && c.type !== 'Ready' ? `:${c.reason}` : ''}`,
    );
  await repo.createSegment(segmentInput('taken'));
  await kube.create(RESOURCES.segments, NS, segment('copy', 'taken'));
  await reconcileSegment(admission, 'copy');
  assert.equal(types(kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'copy')!), [
    'Ready=False',
    'Stalled=True:NameConflict',
  ]);

  await kube.create(RESOURCES.hosts, NS, host('h1', 'compute-1', 'later'));
  await reconcileHost(admission, 'h1');
  assert.equal(types(kube.peek<HaHost>(RESOURCES.hosts, NS, 'h1')!), [
    'Ready=False',
    'Reconciling=True:SegmentNotFound',
  ]);
  await kube.create(RESOURCES.segments, NS, segment('later', 'Later'));
  await reconcileSegment(admission, 'later');
  await reconcileHost(admission, 'h1');
  assert.equal(types(kube.peek<HaHost>(RESOURCES.hosts, NS, 'h1')!), ['Ready=True']);
});

test('admission records created_at (metadata.creationTimestamp) in status once, so a restore keeps it', () => {
  const seg: FailoverSegment = {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name: 's', generation: 1, creationTimestamp: '2026-01-02T03:04:05Z' },
    spec: { name: 's', recoveryMethod: 'auto', serviceType: 'COMPUTE' },
  };
  const now = new Date('2026-02-01T00:00:00Z');
  assert.is(admissionStatusIfChanged(seg, { uuid: 'u', id: 1 }, now)?.createdAt, '2026-01-02T03:04:05Z');
  // restored: a new creationTimestamp, the recorded one kept
  const restored: FailoverSegment = {
    ...seg,
    metadata: { ...seg.metadata, creationTimestamp: '2026-12-01T00:00:00Z' },
    status: { uuid: 'u', id: 1, createdAt: '2026-01-02T03:04:05Z' },
  };
  assert.is(admissionStatusIfChanged(restored, { uuid: 'u', id: 1 }, now)?.createdAt, undefined);
});

test.run();
