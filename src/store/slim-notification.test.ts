import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Notification } from '../model/types.ts';
import { toNotificationRecord } from './mapping.ts';
import { slimNotification } from './slim-notification.ts';

const stored = (): Notification =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'Notification',
      metadata: {
        name: 'compute-1-vm-0a1b2c3d',
        namespace: 'masakari',
        uid: 'uid-1',
        resourceVersion: '42',
        creationTimestamp: '2026-12-01T19:00:00Z',
        labels: {
          'masakari.openkeel.io/uuid': 'n-uuid',
          'masakari.openkeel.io/id': '7',
          'masakari.openkeel.io/host-uuid': 'h-uuid',
          'masakari.openkeel.io/segment-uuid': 's-uuid',
        },
        annotations: {
          'masakari.openkeel.io/payload-order': '["vir_domain_event","event","instance_uuid"]',
          'example.com/note': 'kept',
        },
      },
      spec: {
        type: 'VM',
        hostname: 'compute-1',
        generatedTime: '2026-12-01T18:59:59',
        payload: { event: 'LIFECYCLE', instance_uuid: 'i-1', vir_domain_event: 'STOPPED_FAILED' },
      },
      status: {
        uuid: 'n-uuid',
        id: 7,
        phase: 'finished',
        sourceHostUuid: 'h-uuid',
        failoverSegmentUuid: 's-uuid',
        createdAt: '2026-12-01T19:00:00Z',
        updatedAt: '2026-12-01T19:00:03.000001Z',
        recoveryWorkflowDetails: [
          { name: 'StopInstanceTask', progress: 1, state: 'SUCCESS', run: 0, progressDetails: [] },
        ],
        vmoves: [{ uuid: 'm-1' }],
        engine: { effects: {} },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Finished',
            message: 'done',
            lastTransitionTime: '2026-12-01T19:00:03Z',
          },
        ],
      },
    }),
  ) as Notification;

test("the cached copy has no history: workflow details, vmoves and the engine's bookkeeping", () => {
  const full = stored();
  const slim = slimNotification(full);
  assert.equal(
    [slim.status?.recoveryWorkflowDetails, slim.status?.vmoves, slim.status?.engine],
    [undefined, undefined, undefined],
  );
  assert.is(slim.status?.phase, 'finished');
  assert.is(full.status?.vmoves?.length, 1, 'the input is not changed');
  assert.ok(full.metadata.annotations?.['masakari.openkeel.io/payload-order'], 'the input is not changed');
});

test('of the bookkeeping the cached copy keeps only the journal page count, which retention reads', () => {
  const full = stored();
  full.status!.engine = { effects: { a: 1 }, journalPages: 2 };
  assert.equal(slimNotification(full).status?.engine, { journalPages: 2 });
});

test('the cached copy maps to the same record as the stored object, history aside (payload in sender order)', () => {
  const full = stored();
  const fromFull = { ...toNotificationRecord(full), recovery_workflow_details: [] };
  const fromSlim = toNotificationRecord(slimNotification(full));
  assert.equal(fromSlim, fromFull);
  assert.equal(Object.keys(fromSlim.payload), ['vir_domain_event', 'event', 'instance_uuid']);
});

test('only the payload-order and admission-seal annotations are dropped; labels and other annotations stay', () => {
  const slim = slimNotification(stored());
  assert.equal(slim.metadata.annotations, { 'example.com/note': 'kept' });
  assert.equal(slim.metadata.labels, stored().metadata.labels);
  const bare = stored();
  bare.metadata.annotations = {
    'masakari.openkeel.io/payload-order': '["event"]',
    'masakari.openkeel.io/admission-seal': 'v1.c2VhbA',
  };
  assert.not.ok('annotations' in slimNotification(bare).metadata);
  const sealedOnly = stored();
  sealedOnly.metadata.annotations = { 'masakari.openkeel.io/admission-seal': 'v1.c2VhbA', 'example.com/note': 'kept' };
  assert.equal(slimNotification(sealedOnly).metadata.annotations, { 'example.com/note': 'kept' });
});

test('each copy keeps its own uuid; a uuid label that differs from status stays as written', () => {
  const a = slimNotification(stored());
  const b = slimNotification({ ...stored(), status: { ...stored().status, uuid: 'other' } });
  assert.equal([a.status?.uuid, b.status?.uuid], ['n-uuid', 'other']);
  assert.is(a.metadata.labels?.['masakari.openkeel.io/uuid'], 'n-uuid');
  assert.is(
    b.metadata.labels?.['masakari.openkeel.io/uuid'],
    'n-uuid',
    'a label that differs from status stays as it is',
  );
});

test('a notification not admitted yet (no status, no annotation) is cached as written', () => {
  const n = stored();
  delete n.status;
  delete n.metadata.annotations;
  const slim = slimNotification(n);
  assert.equal(slim, n);
});

test('equal payloads in the same key order are one object in the cache; another order stays its own', () => {
  const a = slimNotification(stored());
  const b = slimNotification(stored());
  assert.is(a.spec.payload, b.spec.payload);
  const reordered = stored();
  reordered.metadata.annotations = {};
  const c = slimNotification(reordered);
  assert.is.not(c.spec.payload, a.spec.payload);
  assert.equal(c.spec.payload, a.spec.payload, 'same content');
});

test('equal condition lists are one object in the cache; a different transition time stays its own', () => {
  const a = slimNotification(stored());
  const b = slimNotification(stored());
  assert.ok(a.status?.conditions?.length);
  assert.is(a.status?.conditions, b.status?.conditions);
  const later = stored();
  later.status!.conditions = later.status!.conditions!.map((c) => ({
    ...c,
    lastTransitionTime: '2026-12-01T19:00:01Z',
  }));
  const c = slimNotification(later);
  assert.is.not(c.status?.conditions, a.status?.conditions);
  assert.is(c.status?.conditions?.[0]?.lastTransitionTime, '2026-12-01T19:00:01Z');
});

test.run();
