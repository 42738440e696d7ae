import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Notification } from '../model/types.ts';
import { admittedStatus, host } from '../domain/testing/ha-host.ts';
import { toHostRecord, toNotificationRecord } from './mapping.ts';

test('host record carries effective flags, segment uuid and second-precision times', () => {
  const r = toHostRecord(
    host({}, { ...admittedStatus, onMaintenance: true, flagsGeneration: 1, updatedAt: '2026-01-03T00:00:00Z' }),
  );
  assert.is(r.on_maintenance, true);
  assert.is(r.failover_segment_id, 's-uuid');
  assert.is(r.created_at, '2026-01-02T03:04:05');
  assert.is(r.updated_at, '2026-01-03T00:00:00');
});

/** Admitted, not picked up by the engine yet (no phase). */
const unpickedNotification = (): Notification => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'Notification',
  metadata: { name: 'n', creationTimestamp: '2026-01-02T03:04:05Z' },
  spec: { type: 'VM', hostname: 'compute-1', generatedTime: '2026-01-02T03:00:00', payload: { event: 'x' } },
  status: { uuid: 'u', id: 7, sourceHostUuid: 'h' },
});

test('a notification without a phase is new, with empty details', () => {
  const n = unpickedNotification();
  const r = toNotificationRecord(n);
  assert.is(r.status, 'new');
  assert.equal(r.recovery_workflow_details, []);
  assert.is(r.message, null);
  assert.is(r.updated_at, null);
  assert.is(r.id, 7);
});

test('notification records are built per request, not kept: a client listing every notification must not grow the heap by a record each', () => {
  const n = unpickedNotification();
  const first = toNotificationRecord(n);
  const second = toNotificationRecord(n);
  assert.equal(first, second);
  assert.is.not(first, second, 'a memo would hand out the same record');
});

test('created_at is the one recorded in status (it survives a restore), else metadata.creationTimestamp', () => {
  // a restore re-creates the object: new creationTimestamp, status written back
  const restored = host({}, { ...admittedStatus, createdAt: '2025-05-06T07:08:09Z' });
  restored.metadata.creationTimestamp = '2026-12-01T00:00:00Z';
  assert.is(toHostRecord(restored).created_at, '2025-05-06T07:08:09');
  // admitted before status.createdAt existed
  assert.is(toHostRecord(host({}, admittedStatus)).created_at, '2026-01-02T03:04:05');
  const n: Notification = {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: { name: 'n', creationTimestamp: '2026-12-01T00:00:00Z' },
    spec: { type: 'VM', hostname: 'compute-1', generatedTime: '2026-01-02T03:00:00', payload: { event: 'x' } },
    status: { uuid: 'u', id: 7, sourceHostUuid: 'h', createdAt: '2025-05-06T07:08:09Z' },
  };
  assert.is(toNotificationRecord(n).created_at, '2025-05-06T07:08:09');
  assert.is(
    toNotificationRecord({ ...n, status: { ...n.status, createdAt: undefined } }).created_at,
    '2026-12-01T00:00:00',
  );
});

test.run();
