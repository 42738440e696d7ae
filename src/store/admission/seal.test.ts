import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import { KubeError } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { ANNOTATIONS, API_VERSION, LABELS } from '../../model/constants.ts';
import type { Notification } from '../../model/types.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { isAdmitted, isAdmittedNotification, isRunnableNotification } from '../../domain/admitted.ts';
import { statusPatch } from '../../engine/status/patch.ts';
import {
  createAdmissionSeal,
  loadAdmissionSealKey,
  SEAL_SECRET_NAME,
  SEAL_WINDOW_AFTER_S,
  SEAL_WINDOW_BEFORE_S,
  sealedView,
  statusAsStored,
  withoutSealMarker,
  withSealedNotifications,
} from './seal.ts';

const NS = 'ns';
const log = pino({ level: 'silent' });
const key = Buffer.alloc(32, 7);
const seal = createAdmissionSeal(key);

function unsealed(overrides: Partial<Notification['spec']> = {}): Notification {
  return {
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: {
      name: 'host-a-vm-1234',
      namespace: NS,
      creationTimestamp: '2026-12-03T10:00:00Z',
      labels: {
        [LABELS.uuid]: '5d6f3c8e-0000-4000-8000-000000000001',
        [LABELS.id]: '41',
        [LABELS.hostUuid]: 'host-uuid-1',
        [LABELS.segmentUuid]: 'segment-uuid-1',
      },
    },
    spec: {
      type: 'VM',
      hostname: 'host-a',
      generatedTime: '2026-12-03T09:59:59',
      payload: { event: 'LIFECYCLE', instance_uuid: 'i-1', vir_domain_event: 'STOPPED_FAILED' },
      ...overrides,
    },
  };
}

/** Sealed as the REST path seals it: right before its create, which the API server times a moment later. */
function sealed(n = unsealed(), sealedAt = new Date(Date.parse(n.metadata.creationTimestamp!) - 400)): Notification {
  return {
    ...n,
    metadata: { ...n.metadata, annotations: { [ANNOTATIONS.admissionSeal]: seal.seal(n, sealedAt) } },
  };
}

/** What `kubectl get -o yaml`, a delete (purge) and a create make of it: the API server times the copy anew. */
function recreated(n: Notification, at: string): Notification {
  const copy = structuredClone(n);
  delete copy.status;
  copy.metadata.creationTimestamp = at;
  return copy;
}

test('a sealed notification is admitted as the admission write would have admitted it', () => {
  const n = sealed();
  assert.not.ok(isAdmitted(n), 'the stored object has no status');
  const view = sealedView(n, seal);
  assert.ok(isAdmitted(view));
  assert.ok(isAdmittedNotification(view));
  assert.ok(isRunnableNotification(view));
  assert.is(view.status?.uuid, '5d6f3c8e-0000-4000-8000-000000000001');
  assert.is(view.status?.id, 41);
  assert.is(view.status?.sourceHostUuid, 'host-uuid-1');
  assert.is(view.status?.failoverSegmentUuid, 'segment-uuid-1');
  assert.is(view.status?.phase, 'new');
  assert.is(view.status?.createdAt, '2026-12-03T10:00:00Z');
  assert.is(statusAsStored(view.status), undefined, 'nothing of it is stored');
  assert.equal(sealedView(n, seal), view, 'every process shows the same view');
});

test('a seal admits nothing but its own name, identity and spec', () => {
  const n = sealed();
  const changes: Array<(x: Notification) => void> = [
    (x) => (x.metadata.name = 'host-a-vm-other'),
    (x) => (x.metadata.labels![LABELS.uuid] = '5d6f3c8e-0000-4000-8000-000000000002'),
    (x) => (x.metadata.labels![LABELS.id] = '42'),
    (x) => (x.metadata.labels![LABELS.hostUuid] = 'host-uuid-2'),
    (x) => (x.metadata.labels![LABELS.segmentUuid] = 'segment-uuid-2'),
    (x) => (x.spec.type = 'COMPUTE_HOST'),
    (x) => (x.spec.hostname = 'host-b'),
    (x) => (x.spec.generatedTime = '2026-12-03T09:59:58'),
    (x) => (x.spec.payload = { ...x.spec.payload, instance_uuid: 'i-2' }),
  ];
  for (const change of changes) {
    const copy = structuredClone(n);
    change(copy);
    assert.is(seal.verify(copy), undefined, String(change));
    assert.not.ok(isAdmitted(sealedView(copy, seal)), String(change));
  }
  const other = createAdmissionSeal(Buffer.alloc(32, 8));
  assert.is(other.verify(n), undefined, 'a seal under another key');
  const forged = structuredClone(n);
  forged.metadata.annotations![ANNOTATIONS.admissionSeal] = 'v2.AAAA';
  assert.is(seal.verify(forged), undefined);
});

test('replay (finding "a replay ran past intake"): a sealed notification saved, purged and created again is not admitted by its seal', () => {
  const n = sealed();
  assert.ok(isAdmitted(sealedView(n, seal)));
  for (const at of ['2026-12-05T10:00:00Z', '2027-01-03T10:00:00Z', '2026-12-03T10:00:12Z']) {
    const copy = recreated(n, at);
    assert.is(seal.verify(copy), undefined, at);
    assert.not.ok(isAdmitted(sealedView(copy, seal)), at);
    assert.not.ok(isRunnableNotification(sealedView(copy, seal)), at);
  }
});

test('a seal admits its notification when the API server timed the create within its window, and only then', () => {
  const n = unsealed();
  const created = Date.parse(n.metadata.creationTimestamp!);
  const sealedBefore = (ms: number) => seal.verify(sealed(n, new Date(created - ms)));
  for (const ms of [0, 400, 999, 1_000, 5_500, SEAL_WINDOW_BEFORE_S * 1000, -1, -SEAL_WINDOW_AFTER_S * 1000]) {
    assert.ok(sealedBefore(ms), `sealed ${ms} ms before its creation`);
  }
  assert.is(sealedBefore((SEAL_WINDOW_BEFORE_S + 1) * 1000), undefined, 'a create that took longer');
  assert.is(sealedBefore(-(SEAL_WINDOW_AFTER_S + 1) * 1000), undefined, 'created before it was sealed');
});

test('a seal of the earlier format (no creation time) admits nothing', () => {
  const n = sealed();
  const v1 = structuredClone(n);
  v1.metadata.annotations![ANNOTATIONS.admissionSeal] = 'v1.' + 'A'.repeat(43);
  assert.is(seal.verify(v1), undefined);
});

test('the payload is sealed whatever its key order (the API server stores maps sorted)', () => {
  const n = sealed();
  const reordered = structuredClone(n);
  reordered.spec.payload = { vir_domain_event: 'STOPPED_FAILED', instance_uuid: 'i-1', event: 'LIFECYCLE' };
  assert.ok(seal.verify(reordered));
});

test('status already written wins over the seal; a notification being deleted is not shown admitted', () => {
  const n = sealed();
  const written: Notification = { ...n, status: { uuid: 'u', id: 1, phase: 'running', sourceHostUuid: 'h' } };
  assert.is(sealedView(written, seal), written);
  const deleting: Notification = { ...n, metadata: { ...n.metadata, deletionTimestamp: '2026-12-03T10:01:00Z' } };
  assert.not.ok(isAdmitted(sealedView(deleting, seal)));
});

test('the view marker is never written', () => {
  const view = sealedView(sealed(), seal);
  const status = withoutSealMarker(structuredClone(view.status!));
  assert.is('admittedBySeal' in status, false);
  assert.is(status.uuid, view.status?.uuid);
});

test("an engine status patch on a seal's view writes the whole status, admission included, without the marker", () => {
  const view = sealedView(sealed(), seal);
  const next = { ...structuredClone(view.status!), phase: 'running' as const };
  const ops = statusPatch(
    view.status as Record<string, unknown>,
    next as Record<string, unknown>,
    view.metadata.resourceVersion,
  );
  assert.is(ops.length, 1);
  const add = ops[0] as { op: string; path: string; value: Record<string, unknown> };
  assert.is(add.op, 'add');
  assert.is(add.path, '/status');
  assert.is(add.value.uuid, view.status?.uuid);
  assert.is(add.value.id, 41);
  assert.is(add.value.phase, 'running');
  assert.is('admittedBySeal' in add.value, false);
});

test('every notification the wrapped client returns is shown through the seal; other kinds are untouched', async () => {
  const fake = new FakeKube();
  const kube = withSealedNotifications(fake, seal, NS);
  // The fake API server times the create by the wall clock, as the REST path seals it.
  const created = await kube.create<Notification>(RESOURCES.notifications, NS, sealed(unsealed(), new Date()));
  assert.ok(isAdmitted(created), 'create');
  assert.ok(isAdmitted(await kube.get<Notification>(RESOURCES.notifications, NS, created.metadata.name!)), 'get');
  const listed = await kube.list<Notification>(RESOURCES.notifications, NS);
  assert.ok(listed.items.every(isAdmitted), 'list');
  assert.not.ok(isAdmitted(await fake.get<Notification>(RESOURCES.notifications, NS, created.metadata.name!)));
  const cm = await kube.create<{ metadata: { name: string }; data: Record<string, string> }>(RESOURCES.configMaps, NS, {
    metadata: { name: 'x' },
    data: { a: '1' },
  });
  assert.equal(cm.data, { a: '1' });
});

test('the admission key is created once and read back by every later process', async () => {
  const fake = new FakeKube();
  const first = await loadAdmissionSealKey(fake, NS, log, new AbortController().signal);
  const second = await loadAdmissionSealKey(fake, NS, log, new AbortController().signal);
  assert.ok(first && first.length === 32);
  assert.ok(second && first.equals(second));
  assert.is((await fake.list(RESOURCES.configMaps, NS)).items.length, 0);
  assert.ok(await fake.get(RESOURCES.secrets, NS, SEAL_SECRET_NAME));
});

test('transient API failures are retried until the key loads', async () => {
  const fake = new FakeKube();
  let failures = 2;
  const restore = fake.intercept({
    get: (client, ...args) => {
      if (failures-- > 0) return Promise.reject(new KubeError(503, 'ServiceUnavailable', 'etcd is down'));
      return client.get(...args);
    },
  });
  const key = await loadAdmissionSealKey(fake, NS, log, new AbortController().signal);
  restore();
  assert.ok(key && key.length === 32);
  assert.is(failures, -1);
});

test('no key when the Secret may not be read: the caller admits with a status write', async () => {
  const fake = new FakeKube();
  fake.script({
    get: () => {
      throw new KubeError(403, 'Forbidden', 'secrets is forbidden');
    },
  });
  assert.is(await loadAdmissionSealKey(fake, NS, log, new AbortController().signal), undefined);
});

test.run();
