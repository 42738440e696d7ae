// Brakes on mass failure through the engine component on a real API server
// and the Nova simulator: three of three hosts of a segment with
// spec.recoveryLimits.maxUnhealthyHosts 1 fail at once. One is recovered, two
// are held (condition, Event, metric); clearing the first host's maintenance
// (the HaHost update wakes the held ones) lets one more start, and an
// approver's annotation lets the last one pass.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineEnv, eventually, HOST_DOWN, phaseOf, waitPhase } from './support.ts';
import type { EngineEnv, RunningEngine } from './support.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { CONDITIONS } from '../../../src/model/constants.ts';
import { REMEDIATION_ANNOTATIONS } from '../../../src/model/remediation-constants.ts';
import type { Notification } from '../../../src/model/types.ts';

const t = suite('engine brakes on mass failure (recoveryLimits)');
let env: EngineEnv;

const HOSTS = ['compute-1', 'compute-2', 'compute-3'];

t.before(async () => {
  env = await engineEnv('engine-brakes', [...HOSTS, 'spare-1']);
});

t.after(async () => {
  await env.close();
});

const heldOf = (n: Notification) => n.status?.conditions?.find((c) => c.type === CONDITIONS.recoveryHeld);

async function heldGauge(engine: RunningEngine): Promise<Array<{ labels: Record<string, unknown>; value: number }>> {
  const metric = engine.metrics.getSingleMetric('masakari_recovery_held_notifications');
  return ((await metric?.get())?.values ?? []) as Array<{ labels: Record<string, unknown>; value: number }>;
}

t(
  'maxUnhealthyHosts 1: one of three failed hosts is recovered, two are held until a host is back or an approver releases them',
  async () => {
    const seg = await env.segment('seg-brakes');
    await env.kube.mergePatch(RESOURCES.segments, env.namespace, seg.name, {
      spec: { recoveryLimits: { maxUnhealthyHosts: 1 } },
    });
    for (const h of HOSTS) await env.host(h, seg);
    const servers = HOSTS.map((h) =>
      env.sim.state.addServer({ name: `vm-${h}`, host: h, metadata: { HA_Enabled: 'True' } }),
    );
    for (const h of HOSTS) env.sim.state.failHost(h);
    const engine = await env.startEngine('engine-brakes-1');
    const names = await Promise.all(HOSTS.map((h) => env.notify('COMPUTE_HOST', h, HOST_DOWN)));

    const all = () => Promise.all(names.map((n) => env.get(n)));
    const first = await eventually(
      'one recovery finished and two held',
      all,
      (ns) =>
        ns.filter((n) => phaseOf(n) === 'finished').length === 1 &&
        ns.filter((n) => phaseOf(n) === 'new' && heldOf(n)?.status === 'True').length === 2,
      60_000,
    );
    const recovered = first.find((n) => phaseOf(n) === 'finished');
    const held = first.filter((n) => phaseOf(n) === 'new');
    for (const n of held) {
      assert.is(heldOf(n)?.reason, 'SegmentUnhealthyLimit');
      assert.ok(heldOf(n)?.message.includes('maxUnhealthyHosts 1: 1 host of 3 is'), heldOf(n)?.message);
    }
    const evacuated = servers.filter((s) => (env.sim.state.actionCounts.evacuate?.[s.id] ?? 0) > 0);
    assert.is(evacuated.length, 1, 'only the recovered host was evacuated');
    const events = await eventually(
      'a RecoveryHeld Event per held notification',
      async () =>
        (
          await env.kube.list<{ reason?: string; regarding?: { kind?: string; name?: string } }>(
            RESOURCES.events,
            env.namespace,
          )
        ).items.filter((e) => e.reason === 'RecoveryHeld' && e.regarding?.kind === 'Notification'),
      (es) => es.length >= 2,
    );
    assert.equal(events.map((e) => e.regarding?.name).sort(), held.map((n) => n.metadata.name).sort());
    assert.equal(await heldGauge(engine), [
      { labels: { segment_uuid: seg.uuid, reason: 'SegmentUnhealthyLimit' }, value: 2 },
    ]);

    // The first host is back: its maintenance cleared as `kubectl patch --subresource=status` does.
    const firstHost = recovered?.spec.hostname ?? '';
    assert.is((await env.getHost(firstHost)).status?.onMaintenance, true);
    await env.kube.mergePatch(
      RESOURCES.hosts,
      env.namespace,
      `host-${firstHost}`,
      { status: { onMaintenance: false } },
      { status: true },
    );
    const second = await eventually(
      'one held recovery started once the first host was back',
      all,
      (ns) => ns.filter((n) => phaseOf(n) === 'finished').length === 2,
      60_000,
    );
    const last = second.find((n) => phaseOf(n) === 'new');
    assert.ok(last, 'the third is still held: the host recovered second counts now');
    assert.is(heldOf(last)?.status, 'True');

    await env.kube.mergePatch(RESOURCES.notifications, env.namespace, last.metadata.name ?? '', {
      metadata: { annotations: { [REMEDIATION_ANNOTATIONS.recoveryReleasedBy]: 'alice@example.org' } },
    });
    const done = await waitPhase(env, last.metadata.name ?? '', 'finished', 60_000);
    assert.is(heldOf(done)?.status, 'False');
    assert.is(heldOf(done)?.reason, 'ReleasedByApprover');
    assert.ok(heldOf(done)?.message.includes('alice@example.org'));
    for (const s of servers) assert.is(env.sim.state.actionCounts.evacuate?.[s.id], 1);
    assert.equal(await heldGauge(engine), []);
  },
);

t.run();
