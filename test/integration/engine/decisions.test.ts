// The engine's decision tables end to end: real API server, Nova simulator,
// one engine component.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { Notification } from '../../../src/model/types.ts';
import { engineEnv, eventually, HOST_DOWN, waitPhase } from './support.ts';
import type { EngineEnv, RunningEngine } from './support.ts';

const t = suite('engine decisions');
let env: EngineEnv;
let seg: { name: string; uuid: string };
let off: { name: string; uuid: string };
let engine: RunningEngine;

interface KubeEvent {
  type?: string;
  reason?: string;
  action?: string;
  note?: string;
  reportingInstance?: string;
  regarding?: { apiVersion?: string; kind?: string; name?: string; uid?: string };
}

t.before(async () => {
  env = await engineEnv('engine-decisions', ['compute-1', 'compute-2', 'compute-3', 'compute-4']);
  seg = await env.segment('seg-on');
  off = await env.segment('seg-off', { enabled: false });
  await env.host('compute-1', seg);
  await env.host('compute-2', seg);
  await env.host('compute-3', off);
  engine = await env.startEngine('engine-1');
});

t.after(async () => {
  await env.close();
});

t('a disabled segment: ignored with the upstream message, host untouched', async () => {
  const name = await env.notify('COMPUTE_HOST', 'compute-3', HOST_DOWN);
  const n = await waitPhase(env, name, 'ignored');
  assert.is(n.status?.message, 'Recovery aboart: the segment HA is disabled.');
  assert.is(n.status?.runs, undefined);
  assert.is((await env.getHost('compute-3')).status?.onMaintenance, undefined);
});

t('COMPUTE_HOST with host_status UNKNOWN or missing is ignored; STARTED finishes', async () => {
  const unknown = await env.notify('COMPUTE_HOST', 'compute-1', {
    event: 'STOPPED',
    host_status: 'UNKNOWN',
    cluster_status: 'OFFLINE',
  });
  const missing = await env.notify('COMPUTE_HOST', 'compute-1', { event: 'STOPPED', cluster_status: 'OFFLINE' });
  const started = await env.notify('COMPUTE_HOST', 'compute-1', {
    event: 'STARTED',
    host_status: 'NORMAL',
    cluster_status: 'ONLINE',
  });
  assert.is((await waitPhase(env, unknown, 'ignored')).status?.message, undefined);
  await waitPhase(env, missing, 'ignored');
  await waitPhase(env, started, 'finished');
  assert.is((await env.getHost('compute-1')).status?.onMaintenance, undefined);
});

t('VM: each recoverable event pair restarts the instance; other pairs are ignored without touching Nova', async () => {
  const pairs: Array<[string, string, 'finished' | 'ignored']> = [
    ['LIFECYCLE', 'STOPPED_FAILED', 'finished'],
    ['QEMU_GUEST_AGENT_ERROR', 'STOPPED_FAILED', 'finished'],
    ['IO_ERROR', 'IO_ERROR_REPORT', 'finished'],
    ['LIFECYCLE', 'STOPPED_SHUTDOWN', 'ignored'],
    ['IO_ERROR', 'IO_ERROR_PAUSE', 'ignored'],
    ['REBOOT', 'UNKNOWN', 'ignored'],
  ];
  for (const [event, detail, expected] of pairs) {
    const server = env.sim.state.addServer({
      name: `vm-${event}-${detail}`,
      host: 'compute-2',
      metadata: { HA_Enabled: 'True' },
    });
    const name = await env.notify('VM', 'compute-2', { event, vir_domain_event: detail, instance_uuid: server.id });
    const n = await waitPhase(env, name, expected);
    const stops = env.sim.state.actionCounts['os-stop']?.[server.id] ?? 0;
    const starts = env.sim.state.actionCounts['os-start']?.[server.id] ?? 0;
    if (expected === 'finished') {
      assert.equal([stops, starts], [1, 1], `${event}/${detail}`);
      assert.equal(
        n.status?.recoveryWorkflowDetails?.map((e) => [e.name, e.state]),
        [
          ['StopInstanceTask', 'SUCCESS'],
          ['StartInstanceTask', 'SUCCESS'],
          ['ConfirmInstanceActiveTask', 'SUCCESS'],
        ],
      );
      assert.is(env.sim.state.servers.get(server.id)?.vmState, 'active');
    } else {
      assert.equal([stops, starts], [0, 0], `${event}/${detail}`);
      assert.is(n.status?.recoveryWorkflowDetails, undefined);
    }
  }
});

t('VM: an instance without HA_Enabled is skipped (finished) and left alone', async () => {
  const server = env.sim.state.addServer({ name: 'vm-plain', host: 'compute-2' });
  const name = await env.notify('VM', 'compute-2', {
    event: 'LIFECYCLE',
    vir_domain_event: 'STOPPED_FAILED',
    instance_uuid: server.id,
  });
  const n = await waitPhase(env, name, 'finished');
  assert.is(env.sim.state.actionCounts['os-stop']?.[server.id], undefined);
  assert.equal(
    n.status?.recoveryWorkflowDetails?.[0]?.progressDetails.map((d) => d.message),
    [`Skipping recovery for instance: ${server.id} as it is not Ha_Enabled`],
  );
});

t('PROCESS: nova-compute disables the compute service; another process only sets maintenance', async () => {
  const other = await env.notify('PROCESS', 'compute-2', { event: 'STOPPED', process_name: 'libvirtd' });
  await waitPhase(env, other, 'finished');
  const host = await env.getHost('compute-2');
  assert.equal([host.status?.onMaintenance, host.status?.flagsGeneration], [true, host.metadata.generation]);
  assert.is(env.sim.state.serviceOf('compute-2')?.disabled, false);
  // What `kubectl describe hahost host-compute-2` shows: the engine's Events regarding the HaHost.
  const hostEvents = await eventually(
    'an OnMaintenance Event regarding the HaHost',
    async () =>
      (await env.kube.list<KubeEvent>(RESOURCES.events, env.namespace)).items.filter(
        (e) => e.regarding?.kind === 'HaHost' && e.regarding.name === 'host-compute-2',
      ),
    (events) => events.some((e) => e.reason === 'HostOnMaintenance'),
  );
  const onMaintenance = hostEvents.find((e) => e.reason === 'HostOnMaintenance');
  assert.equal(
    [onMaintenance?.type, onMaintenance?.action, onMaintenance?.reportingInstance, onMaintenance?.regarding?.uid],
    ['Normal', 'SetMaintenance', 'engine-1', host.metadata.uid],
  );
  assert.match(onMaintenance?.note ?? '', 'Set host compute-2 on maintenance (notification ');

  const nc = await env.notify('PROCESS', 'compute-1', { event: 'STOPPED', process_name: 'nova-compute' });
  const n = await waitPhase(env, nc, 'finished');
  assert.is(env.sim.state.serviceOf('compute-1')?.disabled, true);
  assert.is(env.sim.state.serviceOf('compute-1')?.disabledReason, 'Masakari detected process failed.');
  assert.equal(
    n.status?.recoveryWorkflowDetails?.map((e) => e.name),
    ['DisableComputeNodeTask', 'ConfirmComputeNodeDisabledTask'],
  );
});

t('a notification created with kubectl waits until the store admits it, then is processed', async () => {
  const name = await env.notify(
    'COMPUTE_HOST',
    'compute-1',
    { event: 'STARTED', host_status: 'NORMAL' },
    { admit: false },
  );
  await new Promise((r) => setTimeout(r, 1_000));
  assert.is((await env.get(name)).status?.phase, undefined);
  await env.admit(name);
  await waitPhase(env, name, 'finished');
});

t('an ended notification sheds its managedFields, after a run and after a decision without one', async () => {
  const server = env.sim.state.addServer({ name: 'vm-shed', host: 'compute-2', metadata: { HA_Enabled: 'True' } });
  const ran = await env.notify('VM', 'compute-2', {
    event: 'LIFECYCLE',
    vir_domain_event: 'STOPPED_FAILED',
    instance_uuid: server.id,
  });
  const decided = await env.notify('COMPUTE_HOST', 'compute-3', HOST_DOWN);
  for (const [name, phase] of [
    [ran, 'finished'],
    [decided, 'ignored'],
  ] as const) {
    await waitPhase(env, name, phase);
    const stored = await eventually(
      `${name}: managedFields dropped`,
      () => env.kube.get<Notification>(RESOURCES.notifications, env.namespace, name),
      (n) => n.metadata.managedFields === undefined,
    );
    assert.is(stored.status?.phase, phase, 'the status write came first and stayed');
    assert.ok(stored.spec.payload, 'the object is otherwise as it was');
  }
});

t('metrics count final statuses by type', async () => {
  const text = await engine.metrics.metrics();
  assert.match(text, 'masakari_notifications_total{type="VM",status="finished"}');
  assert.match(text, 'masakari_notifications_total{type="COMPUTE_HOST",status="ignored"}');
  assert.match(text, 'masakari_nova_call_duration_seconds_count{method="getServer",status="200"}');
  assert.match(text, 'controller_runtime_reconcile_total');
});

t.run();
