import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isRecoverableVmEvent, planNotification, SEGMENT_DISABLED_MESSAGE } from './decisions.ts';
import type { PlanInput } from './decisions.ts';
import { HaService } from '../../domain/ha-service.ts';
import { MasakariError } from '../../domain/errors.ts';
import { MemoryRepository } from '../../domain/testing/memory-repository.ts';

const base = (over: Partial<PlanInput>): PlanInput => ({
  uuid: 'n-1',
  type: 'COMPUTE_HOST',
  sourceHostUuid: 'h-1',
  payload: {},
  segmentEnabled: true,
  ...over,
});

test('only the three exact VM event pairs are recoverable', () => {
  const yes = [
    ['LIFECYCLE', 'STOPPED_FAILED'],
    ['QEMU_GUEST_AGENT_ERROR', 'STOPPED_FAILED'],
    ['IO_ERROR', 'IO_ERROR_REPORT'],
  ];
  const no = [
    ['LIFECYCLE', 'STOPPED_SHUTDOWN'],
    ['LIFECYCLE', 'SUSPENDED_IOERROR'],
    ['IO_ERROR', 'IO_ERROR_PAUSE'],
    ['REBOOT', 'UNKNOWN'],
    ['WATCHDOG', 'WATCHDOG_RESET'],
    ['lifecycle', 'STOPPED_FAILED'],
    ['LIFECYCLE', 'stopped_failed'],
    ['QEMU_GUEST_AGENT_ERROR', 'IO_ERROR_REPORT'],
    ['toString', 'STOPPED_FAILED'],
  ];
  for (const [event, detail] of yes)
    assert.ok(isRecoverableVmEvent({ event: event!, vir_domain_event: detail! }), `${event}/${detail}`);
  for (const [event, detail] of no)
    assert.not.ok(isRecoverableVmEvent({ event: event!, vir_domain_event: detail! }), `${event}/${detail}`);
  assert.not.ok(isRecoverableVmEvent({ event: 'LIFECYCLE' }));
});

test('VM: a recoverable pair runs the instance workflow, any other is ignored with Masakari log text', () => {
  const run = planNotification(
    base({ type: 'VM', payload: { event: 'LIFECYCLE', vir_domain_event: 'STOPPED_FAILED', instance_uuid: 'i' } }),
  );
  assert.equal(run, { kind: 'workflow', workflow: 'instance', maintenance: 'none' });
  const ignored = planNotification(
    base({ type: 'VM', payload: { event: 'LIFECYCLE', vir_domain_event: 'STOPPED_SHUTDOWN' } }),
  );
  assert.is(ignored.kind, 'final');
  if (ignored.kind === 'final') {
    assert.is(ignored.status, 'ignored');
    assert.is(
      ignored.reason,
      `Notification 'n-1' received with payload {"event":"LIFECYCLE","vir_domain_event":"STOPPED_SHUTDOWN"} is ignored.`,
    );
    assert.is(ignored.message, undefined);
  }
});

test('COMPUTE_HOST: host_status missing or not NORMAL is ignored, even for STARTED', () => {
  const missing = planNotification(base({ payload: { event: 'STOPPED' } }));
  assert.equal(missing, {
    kind: 'final',
    status: 'ignored',
    reason: "Notification 'n-1' ignored as host_status is not provided.",
  });
  const unknown = planNotification(base({ payload: { event: 'STARTED', host_status: 'unknown' } }));
  assert.equal(unknown, {
    kind: 'final',
    status: 'ignored',
    reason: "Notification 'n-1' ignored as host_status is 'UNKNOWN'",
  });
});

test('COMPUTE_HOST: STARTED finishes, STOPPED (any case) sets maintenance and runs the host workflow', () => {
  const started = planNotification(base({ payload: { event: 'STARTED', host_status: 'NORMAL' } }));
  assert.is(started.kind === 'final' && started.status, 'finished');
  const stopped = planNotification(
    base({ payload: { event: 'stopped', host_status: 'normal', cluster_status: 'OFFLINE' } }),
  );
  assert.equal(stopped, { kind: 'workflow', workflow: 'host', maintenance: 'on-and-unreserve' });
  const odd = planNotification(base({ payload: { event: 'RESTARTED', host_status: 'NORMAL' } }));
  assert.is(odd.kind === 'final' && odd.status, 'ignored');
});

test('PROCESS: STARTED finishes without maintenance, STOPPED sets maintenance for any process name', () => {
  const started = planNotification(
    base({ type: 'PROCESS', payload: { event: 'started', process_name: 'nova-compute' } }),
  );
  assert.equal(started, {
    kind: 'final',
    status: 'finished',
    reason: "Notification type 'PROCESS' received for host 'h-1': 'nova-compute' has been started.",
  });
  for (const name of ['nova-compute', 'libvirtd', 'sshd']) {
    assert.equal(planNotification(base({ type: 'PROCESS', payload: { event: 'STOPPED', process_name: name } })), {
      kind: 'workflow',
      workflow: 'process',
      maintenance: 'on',
    });
  }
});

/**
 * A PROCESS STOPPED of `processName` as far as the engine's plan goes, then a
 * real host failure through the API's intake: what the monitors would see.
 */
async function processStoppedThenHostFailure(
  processName: string,
  over: Partial<PlanInput> = {},
): Promise<{ maintenance: string; hostFailure: number }> {
  const repo = new MemoryRepository();
  const svc = new HaService(
    repo,
    { exists: async () => true },
    { osapi_max_limit: 1000, duplicate_notification_detection_interval: 180 },
  );
  const segment = await svc.createSegment({
    segment: { name: 'seg', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  const hostRow = await svc.createHost(segment.uuid, {
    host: { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  const processNotification = await svc.createNotification({
    notification: {
      type: 'PROCESS',
      hostname: 'compute-1',
      generated_time: '2026-01-01T00:00:00',
      payload: { event: 'STOPPED', process_name: processName },
    },
  });
  const plan = planNotification(
    base({
      uuid: processNotification.notification_uuid,
      type: 'PROCESS',
      sourceHostUuid: hostRow.uuid,
      payload: { event: 'STOPPED', process_name: processName },
      ...over,
    }),
  );
  const maintenance = plan.kind === 'workflow' ? plan.maintenance : 'none';
  // What the engine writes before it runs the workflow (notification-processor.ts).
  if (maintenance !== 'none') repo.setHostFlags(hostRow.uuid, { on_maintenance: true });
  try {
    await svc.createNotification({
      notification: {
        type: 'COMPUTE_HOST',
        hostname: 'compute-1',
        generated_time: '2026-01-01T00:05:00',
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
    });
    return { maintenance, hostFailure: 202 };
  } catch (e) {
    assert.instance(e, MasakariError);
    assert.is(
      (e as MasakariError).message,
      "Notification received from host compute-1 of type 'COMPUTE_HOST' is ignored as the host is already under maintenance.",
    );
    return { maintenance, hostFailure: (e as MasakariError).status };
  }
}

test('B7: a libvirtd STOPPED blocks a later host failure with 409', async () => {
  // Masakari's behaviour, kept as the default: any process puts the host on maintenance.
  assert.equal(await processStoppedThenHostFailure('libvirtd'), { maintenance: 'on', hostFailure: 409 });
});

test('B7 with maintenance_only_for_nova_compute: a libvirtd STOPPED leaves the host in service and a later host failure is accepted', async () => {
  assert.equal(await processStoppedThenHostFailure('libvirtd', { maintenanceOnlyForNovaCompute: true }), {
    maintenance: 'none',
    hostFailure: 202,
  });
  assert.equal(
    planNotification(
      base({
        type: 'PROCESS',
        payload: { event: 'STOPPED', process_name: 'libvirtd' },
        maintenanceOnlyForNovaCompute: true,
      }),
    ),
    { kind: 'workflow', workflow: 'process', maintenance: 'none' },
    'the process workflow still runs (and skips, as for any process but nova-compute)',
  );
});

test('B7 with maintenance_only_for_nova_compute: nova-compute STOPPED still sets maintenance (exact, case-sensitive name)', async () => {
  assert.equal(await processStoppedThenHostFailure('nova-compute', { maintenanceOnlyForNovaCompute: true }), {
    maintenance: 'on',
    hostFailure: 409,
  });
  assert.equal(
    (await processStoppedThenHostFailure('Nova-Compute', { maintenanceOnlyForNovaCompute: true })).maintenance,
    'none',
  );
});

test('a disabled segment ignores every type with the upstream message (typo included)', () => {
  for (const type of ['COMPUTE_HOST', 'VM', 'PROCESS'] as const) {
    const p = planNotification(
      base({ type, segmentEnabled: false, payload: { event: 'STOPPED', host_status: 'NORMAL' } }),
    );
    assert.equal(p, {
      kind: 'final',
      status: 'ignored',
      reason: 'Failover segment is disabled.',
      message: SEGMENT_DISABLED_MESSAGE,
    });
  }
  assert.is(SEGMENT_DISABLED_MESSAGE, 'Recovery aboart: the segment HA is disabled.');
});

test.run();
