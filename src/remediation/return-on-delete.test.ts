import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HaService } from '../domain/ha-service.ts';
import { MemoryRepository } from '../domain/testing/memory-repository.ts';
import type { ResourceRef } from '../k8s/client.ts';
import { KubeError } from '../k8s/client.ts';
import type { MasakariRemediation, NodeLike } from '../model/remediation-types.ts';
import type { FailoverSegment, HaHost, ReturnToService } from '../model/types.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { NovaBadRequest } from '../openstack/types.ts';
import { FakeNova } from '../testing/fake-nova.ts';
import { returnOnDelete } from './return-on-delete.ts';
import { LeaseNotHeld, leaseFencedNova } from '../runtime/lease-fence.ts';
import { rejection } from '../testing/expect-error.ts';

const REMEDIATOR = { holder: 'the remediator', lease: 'masakari-remediation' };

async function setup(o: {
  policy?: ReturnToService['policy'];
  nodeReady?: string;
  phase?: 'finished' | 'running';
  /** Whether the remediator holds its Lease now; its Nova is fenced on it, as the component's is. */
  holdsLease?: () => boolean;
}) {
  const repo = new MemoryRepository();
  const service = new HaService(
    repo,
    { exists: async () => true },
    { osapi_max_limit: 1000, duplicate_notification_detection_interval: 180 },
  );
  const seg = await repo.createSegment({
    name: 'seg',
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  const host = await repo.createHost(seg.uuid, {
    name: 'worker-1',
    type: 'COMPUTE',
    control_attributes: '',
    on_maintenance: false,
    reserved: false,
  });
  const n = await service.createNotification({
    notification: {
      type: 'COMPUTE_HOST',
      hostname: 'worker-1',
      generated_time: new Date().toISOString(),
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
    },
  });
  repo.setNotificationState(n.notification_uuid, { status: o.phase ?? 'finished' });
  repo.setHostFlags(host.uuid, { on_maintenance: true });
  const nova = new FakeNova();
  nova.addHost('worker-1', { status: 'disabled', forced_down: true, state: 'down' });
  const objects: Record<string, unknown> = {
    [`hahosts/${host.k8sName}`]: {
      metadata: { name: host.k8sName, generation: 1 },
      spec: { name: 'worker-1', onMaintenance: false },
      status: { uuid: host.uuid, onMaintenance: true, flagsGeneration: 1 },
    } as HaHost,
    [`failoversegments/${seg.k8sName}`]: {
      metadata: { name: seg.k8sName },
      spec: { name: 'seg', ...(o.policy ? { returnToService: { policy: o.policy } } : {}) },
    } as FailoverSegment,
    'nodes/worker-1': {
      metadata: { name: 'worker-1' },
      status: { conditions: [{ type: 'Ready', status: o.nodeReady ?? 'True' }] },
    } as NodeLike,
  };
  const kube = scriptedKube({
    get: (ref: ResourceRef, _ns: string | undefined, name: string) => {
      const obj = objects[`${ref.plural}/${name}`];
      if (!obj) throw new KubeError(404, 'NotFound', `${ref.plural} "${name}" not found`);
      return obj;
    },
  });
  const remediation = {
    metadata: { name: 'worker-1' },
    status: {
      fencedAt: '2026-12-04T12:00:00Z',
      hostName: 'worker-1',
      nodeName: 'worker-1',
      notificationUuid: n.notification_uuid,
    },
  } as MasakariRemediation;
  const fenced = leaseFencedNova(nova, o.holdsLease ?? (() => true), REMEDIATOR, { warn: () => undefined })!;
  const run = () => returnOnDelete({ kube, nova: fenced, serviceFor: async () => service }, remediation, 'ns');
  return { repo, nova, run };
}

test('Restore: a deleted remediation whose recovery finished and whose Node is Ready gets its host back', async () => {
  const s = await setup({ policy: 'Restore' });
  const note = await s.run();
  assert.match(
    note!,
    /host worker-1 returned to service \(forced_down cleared, nova-compute service enabled, on_maintenance cleared\)/,
  );
  assert.is(s.nova.service('worker-1').forced_down, false);
  assert.is(s.nova.service('worker-1').status, 'enabled');
  assert.is(s.repo.getHostByName('worker-1')!.on_maintenance, false);
});

test('no policy (LeaveDisabled): nothing is undone, and the note says how to bring the host back', async () => {
  const s = await setup({});
  assert.match((await s.run())!, /LeaveDisabled.*openstack compute service set --enable --up worker-1 nova-compute/);
  assert.is(s.nova.count('updateService'), 0);
  assert.ok(s.repo.getHostByName('worker-1')!.on_maintenance);
});

test('Restore, but the recovery still runs or the Node is not Ready: nothing is undone', async () => {
  const running = await setup({ policy: 'Restore', phase: 'running' });
  assert.match((await running.run())!, /is running, not finished/);
  assert.is(running.nova.count('updateService'), 0);
  const notReady = await setup({ policy: 'Restore', nodeReady: 'False' });
  assert.match((await notReady.run())!, /not returned to service \(its nova-compute service is not reporting/);
  assert.is(notReady.nova.count('updateService'), 0);
});

test("Restore, but Nova refuses to clear forced_down (done evacuation records, nova-compute not restarted yet): nothing else is undone, and the note says Nova's words", async () => {
  const s = await setup({ policy: 'Restore' });
  // real Nova's answer while the host's nova-compute has not restarted since the evacuation (nova/api/openstack/compute/services.py)
  s.nova.failNext(
    'updateService',
    new NovaBadRequest(
      400,
      'Unable to force up host worker-1 as `done` evacuation migration records remain associated with the host.',
    ),
  );
  const note = (await s.run())!;
  assert.match(
    note,
    /host worker-1 is not returned to service \(Nova refused to bring the nova-compute service of worker-1 back \(HTTP 400\): Unable to force up host worker-1/,
  );
  assert.is(s.nova.service('worker-1').forced_down, true);
  // still on maintenance: the detection component's return watch finds the host at its next look
  assert.ok(s.repo.getHostByName('worker-1')!.on_maintenance);
});

test('Restore by a deposed remediator (its Lease lapsed): nothing is sent to Nova, and the deletion fails for the Lease holder to look at again', async () => {
  const s = await setup({ policy: 'Restore', holdsLease: () => false });
  await rejection(s.run(), LeaseNotHeld);
  assert.is(s.nova.count('updateService'), 0);
  assert.is(s.nova.service('worker-1').forced_down, true);
  assert.ok(s.repo.getHostByName('worker-1')!.on_maintenance);
});

test.run();
