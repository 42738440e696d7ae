// Leader election with two engine components on one namespace: exactly one
// processes notifications; when it stops mid-recovery the other takes the run
// over (same run number) and completes it without evacuating anything twice.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import { ENGINE_LEASE_NAME } from '../../../src/engine/engine.ts';
import { assertEvacuatedOnce, engineEnv, eventually, HOST_DOWN, waitPhase } from './support.ts';

interface Lease {
  spec?: { holderIdentity?: string | null };
}

test('one leader acts; stopping it mid-recovery hands the run to the other, which completes it exactly once', async () => {
  const env = await engineEnv('engine-leader', ['compute-1', 'compute-2', 'compute-3']);
  try {
    const seg = await env.segment('seg');
    await env.host('compute-1', seg);
    const a = await env.startEngine('engine-a');
    const b = await env.startEngine('engine-b');
    // A ready engine has synced its caches; its first campaign, which creates the Lease, may come a moment later.
    const holder = async () =>
      (
        await env.kube
          .get<Lease>(RESOURCES.leases, env.namespace, ENGINE_LEASE_NAME)
          .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)))
      )?.spec?.holderIdentity;
    const first = await eventually('a lease holder', holder, (h) => h === 'engine-a' || h === 'engine-b');
    const [leader, other] = first === 'engine-a' ? [a, b] : [b, a];

    const ids = Array.from(
      { length: 6 },
      (_, i) => env.sim.state.addServer({ name: `vm-${i}`, host: 'compute-1', metadata: { HA_Enabled: 'True' } }).id,
    );
    env.sim.state.latencies.evacuate = 1_500;
    env.sim.state.failHost('compute-1');
    const name = await env.notify('COMPUTE_HOST', 'compute-1', HOST_DOWN);

    await eventually(
      'an evacuation in flight',
      async () => (await env.get(name)).status?.vmoves?.some((m) => m.status === 'ongoing'),
      (v) => v === true,
      30_000,
    );
    const owner = async () => String(((await env.get(name)).status?.engine as { owner?: string } | undefined)?.owner);
    assert.ok((await owner()).startsWith(`${leader.identity}#`));

    await leader.stop();
    await eventually('the other engine leads', holder, (h) => h === other.identity, 10_000);
    const done = await waitPhase(env, name, ['finished', 'error', 'failed'], 60_000);
    assert.is(done.status?.phase, 'finished', JSON.stringify(done.status?.engine));
    assert.is(done.status?.runs, 1);
    assert.ok((await owner()).startsWith(`${other.identity}#`));
    assertEvacuatedOnce(env.sim, ids, 'compute-1');
    const events = await env.kube.list<{ reason?: string; reportingInstance?: string; regarding?: { name?: string } }>(
      RESOURCES.events,
      env.namespace,
    );
    const mine = events.items.filter((e) => e.regarding?.name === name);
    assert.ok(mine.some((e) => e.reason === 'RecoveryStarted' && e.reportingInstance === leader.identity));
    assert.ok(mine.some((e) => e.reason === 'RecoveryResumed' && e.reportingInstance === other.identity));
  } finally {
    env.sim.state.latencies.evacuate = 0;
    await env.close();
  }
});

test('a lone engine stopped gracefully mid-recovery leaves no server locked; its successor completes the run', async () => {
  const env = await engineEnv('engine-graceful', ['compute-1', 'compute-2', 'compute-3']);
  try {
    const seg = await env.segment('seg');
    await env.host('compute-1', seg);
    const first = await env.startEngine('engine-old');
    const ids = Array.from(
      { length: 6 },
      (_, i) => env.sim.state.addServer({ name: `vm-${i}`, host: 'compute-1', metadata: { HA_Enabled: 'True' } }).id,
    );
    env.sim.state.latencies.evacuate = 2_000;
    env.sim.state.failHost('compute-1');
    const name = await env.notify('COMPUTE_HOST', 'compute-1', HOST_DOWN);
    await eventually(
      'a server locked',
      () => ids.some((id) => env.sim.state.servers.get(id)?.locked),
      (v) => v,
      30_000,
    );
    await first.stop();
    assert.equal(
      ids.filter((id) => env.sim.state.servers.get(id)?.locked),
      [],
      'servers still locked after a graceful stop',
    );
    assert.is((await env.get(name)).status?.phase, 'running');

    await env.startEngine('engine-new');
    const done = await waitPhase(env, name, ['finished', 'error', 'failed'], 60_000);
    assert.is(done.status?.phase, 'finished', JSON.stringify(done.status?.engine));
    assertEvacuatedOnce(env.sim, ids);
  } finally {
    env.sim.state.latencies.evacuate = 0;
    await env.close();
  }
});

test.run();
