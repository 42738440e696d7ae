// Failure paths end to end: Nova errors and timeouts (error → one periodic
// retry → failed), no Nova at all, and expiry cancelling a running recovery.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import { engineEnv, eventually, fastConfig, HOST_DOWN, lastError, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';

const t = suite('engine failures');
let env: EngineEnv;
let seg: { name: string; uuid: string };

t.before(async () => {
  env = await engineEnv('engine-failures', ['compute-1', 'compute-2', 'compute-3']);
  seg = await env.segment('seg');
  await env.host('compute-1', seg);
  await env.host('compute-2', seg);
});

t.after(async () => {
  await env.close();
});

const vmPayload = (id: string) => ({ event: 'LIFECYCLE', vir_domain_event: 'STOPPED_FAILED', instance_uuid: id });

t('Nova 5xx: error, one periodic retry, then failed', async () => {
  const engine = await env.startEngine('engine-5xx');
  try {
    const server = env.sim.state.addServer({ name: 'vm-5xx', host: 'compute-2', metadata: { HA_Enabled: 'True' } });
    env.sim.state.faults.push({ method: 'GET', path: `/compute/v2.1/servers/${server.id}`, count: 1000, kind: 500 });
    const name = await env.notify('VM', 'compute-2', vmPayload(server.id));
    const errored = await waitPhase(env, name, ['error', 'failed']);
    assert.match(lastError(errored) ?? '', "Failed to execute instance failure flow for notification '");
    const failed = await waitPhase(env, name, 'failed');
    assert.is(failed.status?.runs, 2);
    assert.equal([...new Set(failed.status?.recoveryWorkflowDetails?.map((e) => e.run))], [0, 1]);
  } finally {
    env.sim.state.faults = [];
    await engine.stop();
  }
});

t('Nova timeouts: the hung call ends at the request timeout, error, retry, failed', async () => {
  const impatient = createNovaClient(env.sim.clientCredentials, { timeoutMs: 700, maxRetries: 0 });
  const engine = await env.startEngine('engine-timeout', { nova: impatient });
  try {
    const server = env.sim.state.addServer({ name: 'vm-hang', host: 'compute-2', metadata: { HA_Enabled: 'True' } });
    env.sim.state.faults.push({
      method: 'POST',
      path: `/compute/v2.1/servers/${server.id}/action`,
      count: 2,
      kind: 'hang',
    });
    const name = await env.notify('VM', 'compute-2', vmPayload(server.id));
    const failed = await waitPhase(env, name, 'failed');
    assert.is(failed.status?.runs, 2);
    const stop = failed.status?.recoveryWorkflowDetails?.find((e) => e.name === 'StopInstanceTask' && e.run === 1);
    assert.is(stop?.state, 'REVERTED');
  } finally {
    env.sim.state.faults = [];
    await engine.stop();
  }
});

t('retry succeeds when Nova recovers in between', async () => {
  const engine = await env.startEngine('engine-recover');
  try {
    const server = env.sim.state.addServer({ name: 'vm-blip', host: 'compute-2', metadata: { HA_Enabled: 'True' } });
    env.sim.state.faults.push({ method: 'GET', path: `/compute/v2.1/servers/${server.id}`, count: 2, kind: 503 });
    const name = await env.notify('VM', 'compute-2', vmPayload(server.id));
    const n = await waitPhase(env, name, ['finished', 'failed']);
    assert.is(n.status?.phase, 'finished');
    assert.is(n.status?.runs, 2);
  } finally {
    env.sim.state.faults = [];
    await engine.stop();
  }
});

t('without Nova: error with a clear reason, never a crash', async () => {
  const engine = await env.startEngine('engine-nonova', { nova: null });
  try {
    const name = await env.notify('PROCESS', 'compute-2', { event: 'STOPPED', process_name: 'nova-compute' });
    const n = await waitPhase(env, name, ['error', 'failed']);
    assert.match(lastError(n) ?? '', 'No Nova client is configured');
    await waitPhase(env, name, 'failed');
  } finally {
    await engine.stop();
  }
});

t(
  'expiry: a recovery still running past notifications_expired_interval is failed, cancelled, and its locks released',
  async () => {
    const config = fastConfig((c) => {
      c.DEFAULT.notifications_expired_interval = 4;
      c.DEFAULT.wait_period_after_evacuation = 60;
    });
    const engine = await env.startEngine('engine-expiry', { config });
    try {
      const ids = [1, 2, 3].map(
        (i) => env.sim.state.addServer({ name: `vm-exp-${i}`, host: 'compute-1', metadata: { HA_Enabled: 'True' } }).id,
      );
      env.sim.state.latencies.evacuate = 120_000;
      env.sim.state.failHost('compute-1');
      const name = await env.notify('COMPUTE_HOST', 'compute-1', HOST_DOWN);
      await eventually(
        'a server locked by the recovery',
        () => ids.some((id) => env.sim.state.servers.get(id)?.locked),
        (v) => v,
        20_000,
      );
      const n = await waitPhase(env, name, 'failed', 30_000);
      assert.is(lastError(n), `Notification ${n.status?.uuid} is expired.`);
      await eventually(
        'every server unlocked',
        () => ids.filter((id) => env.sim.state.servers.get(id)?.locked),
        (v) => v.length === 0,
        20_000,
      );
      // Events are written in the background: the unlocks may well finish first.
      await eventually(
        'an Expired Event regarding the notification',
        async () =>
          (
            await env.kube.list<{ reason?: string; regarding?: { name?: string } }>(RESOURCES.events, env.namespace)
          ).items.filter((e) => e.reason === 'RecoveryExpired' && e.regarding?.name === name),
        (found) => found.length > 0,
        20_000,
      );
    } finally {
      env.sim.state.latencies.evacuate = 0;
      await engine.stop();
    }
  },
);

t.run();
