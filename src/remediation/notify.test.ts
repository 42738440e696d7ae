import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HaService } from '../domain/ha-service.ts';
import { MemoryRepository } from '../domain/testing/memory-repository.ts';
import type { ComputeHostChecker } from '../domain/compute-host-checker.ts';
import { fileHostNotification } from './notify.ts';

const anyCompute: ComputeHostChecker = { exists: async () => true };
const WINDOW = 180;

async function setup() {
  const repo = new MemoryRepository();
  const segment = await repo.createSegment({
    name: 'seg',
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  const host = await repo.createHost(segment.uuid, {
    name: 'worker-1',
    type: 'COMPUTE',
    control_attributes: 'SSH',
    reserved: false,
    on_maintenance: false,
  });
  const service = new HaService(repo, anyCompute, {
    osapi_max_limit: 1000,
    duplicate_notification_detection_interval: WINDOW,
  });
  return { repo, host, service };
}

test('files a COMPUTE_HOST STOPPED/NORMAL/OFFLINE notification stamped with the fencing time', async () => {
  const { service } = await setup();
  const r = await fileHostNotification(service, 'worker-1', '2026-11-29T12:00:00Z', WINDOW);
  assert.ok('ok' in r && r.ok);
  if ('ok' in r && r.ok) {
    assert.equal(r.adopted, false);
    assert.equal(r.record.type, 'COMPUTE_HOST');
    assert.equal(r.record.payload, { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' });
    assert.equal(r.record.generated_time, '2026-11-29T12:00:00');
  }
});

test('a retried create is a duplicate (409) and adopts the first notification', async () => {
  const { service } = await setup();
  const first = await fileHostNotification(service, 'worker-1', '2026-11-29T12:00:00Z', WINDOW);
  const again = await fileHostNotification(service, 'worker-1', '2026-11-29T12:00:00Z', WINDOW);
  assert.ok('ok' in again && again.ok && again.adopted);
  if ('ok' in first && first.ok && 'ok' in again && again.ok) {
    assert.equal(again.record.notification_uuid, first.record.notification_uuid);
  }
});

test('a host the engine already put on maintenance for our notification adopts it too', async () => {
  const { repo, host, service } = await setup();
  const first = await fileHostNotification(service, 'worker-1', '2026-11-29T12:00:00Z', WINDOW);
  repo.setHostFlags(host.uuid, { on_maintenance: true });
  const again = await fileHostNotification(service, 'worker-1', '2026-11-29T12:00:00Z', WINDOW);
  assert.ok('ok' in again && again.ok && again.adopted);
  if ('ok' in first && first.ok && 'ok' in again && again.ok) {
    assert.equal(again.record.notification_uuid, first.record.notification_uuid);
  }
});

test('a host on maintenance without our notification fails with HostOnMaintenance and Masakari’s message', async () => {
  const { repo, host, service } = await setup();
  repo.setHostFlags(host.uuid, { on_maintenance: true });
  const r = await fileHostNotification(service, 'worker-1', '2026-11-29T12:00:00Z', WINDOW);
  assert.equal(r, {
    ok: false,
    reason: 'HostOnMaintenance',
    message:
      "Notification received from host worker-1 of type 'COMPUTE_HOST' is ignored as the host is already under maintenance.",
  });
});

test('an unknown host fails with HostNotFound; a name the API would refuse is rejected up front', async () => {
  const { service } = await setup();
  const missing = await fileHostNotification(service, 'worker-9', '2026-11-29T12:00:00Z', WINDOW);
  assert.equal('ok' in missing && !missing.ok && missing.reason, 'HostNotFound');
  const bad = await fileHostNotification(service, 'worker 1', '2026-11-29T12:00:00Z', WINDOW);
  assert.equal('ok' in bad && !bad.ok && bad.reason, 'NotificationRejected');
});

test.run();
