// requireFencing on a segment gives API-path notifications the remediator's
// fencing gate: the engine never evacuates a host that is not proven fenced.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../../support/eventually.ts';
import { engineEnv, HOST_DOWN, phaseOf, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { REMEDIATION_ANNOTATIONS } from '../../../src/model/remediation-constants.ts';

const t = suite('engine fencing gate (requireFencing)');
let env: EngineEnv;

t.before(async () => {
  env = await engineEnv('engine-fencing', ['fenced-1', 'spare-1', 'fenced-2', 'spare-2']);
});

t.after(async () => {
  await env.close();
});

t('a host failure waits, untouched, until fencing is proven, then recovers', async () => {
  const seg = await env.segment('seg-fenced', { requireFencing: true });
  await env.host('fenced-1', seg);
  await env.host('spare-1', seg);
  const server = env.sim.state.addServer({ name: 'vm-1', host: 'fenced-1', metadata: { HA_Enabled: 'True' } });
  env.sim.state.failHost('fenced-1');
  await env.kube.create(RESOURCES.nodes, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'fenced-1' } });
  await env.startEngine('engine-fencing-1');

  const name = await env.notify('COMPUTE_HOST', 'fenced-1', HOST_DOWN);
  await new Promise((r) => setTimeout(r, 3_000));
  const waiting = await env.get(name);
  assert.is(phaseOf(waiting), 'new', 'no proof of fencing: the notification is not processed');
  assert.is(env.sim.state.actionCounts.evacuate?.[server.id] ?? 0, 0, 'nothing evacuated');
  assert.is((await env.getHost('fenced-1')).status?.onMaintenance, undefined, 'host untouched');

  // A person vouches for the fencing (audited: recorded in the engine's log and the run's event).
  await env.kube.mergePatch(RESOURCES.notifications, env.namespace, name, {
    metadata: { annotations: { [REMEDIATION_ANNOTATIONS.fencingApprovedBy]: 'alice@example.org' } },
  });
  const done = await waitPhase(env, name, 'finished');
  assert.is(done.status?.vmoves?.length, 1);
  assert.is(env.sim.state.actionCounts.evacuate?.[server.id], 1);
});

t(
  'a fencing proof taken from the wrong Node: two Nodes annotated with one host hold it, named, until one is left',
  async () => {
    const seg = await env.segment('seg-fenced-2', { requireFencing: true });
    await env.host('fenced-2', seg);
    await env.host('spare-2', seg);
    const server = env.sim.state.addServer({ name: 'vm-2', host: 'fenced-2', metadata: { HA_Enabled: 'True' } });
    env.sim.state.failHost('fenced-2');
    // Nodes are cluster-wide: their names carry a per-run suffix.
    const suffix = randomBytes(3).toString('hex');
    const [a, b] = [`wrong-${suffix}-a`, `wrong-${suffix}-b`];
    for (const node of [a, b]) {
      await env.kube.create(RESOURCES.nodes, undefined, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: node, annotations: { [REMEDIATION_ANNOTATIONS.computeHost]: 'fenced-2' } },
      });
    }
    try {
      const name = await env.notify('COMPUTE_HOST', 'fenced-2', HOST_DOWN);
      // Even a person's approval does not count while the host's Node is in doubt.
      await env.kube.mergePatch(RESOURCES.notifications, env.namespace, name, {
        metadata: { annotations: { [REMEDIATION_ANNOTATIONS.fencingApprovedBy]: 'alice@example.org' } },
      });
      const events = await eventually(
        'a WaitingForFencing Event naming both Nodes',
        async () =>
          (
            await env.kube.list<{ reason?: string; note?: string; regarding?: { name?: string } }>(
              RESOURCES.events,
              env.namespace,
            )
          ).items.filter((e) => e.regarding?.name === name && e.reason === 'WaitingForFencing'),
        (l) => l.some((e) => e.note?.includes('more than one Node')),
      );
      const note = events.find((e) => e.note?.includes('more than one Node'))!.note!;
      assert.match(note, `host fenced-2 maps to more than one Node: ${a}, ${b}`);
      assert.match(note, `annotate each of the others with ${REMEDIATION_ANNOTATIONS.computeHost}=<the host it runs>`);
      await new Promise((r) => setTimeout(r, 2_000));
      assert.is(phaseOf(await env.get(name)), 'new', 'the notification waits at the gate');
      assert.is(env.sim.state.actionCounts.evacuate?.[server.id] ?? 0, 0, 'nothing evacuated');

      // The wrong annotation is fixed: one Node maps to the host, and the approval counts as before.
      await env.kube.mergePatch(RESOURCES.nodes, undefined, b, {
        metadata: { annotations: { [REMEDIATION_ANNOTATIONS.computeHost]: 'elsewhere' } },
      });
      await waitPhase(env, name, 'finished');
      assert.is(env.sim.state.actionCounts.evacuate?.[server.id], 1);
    } finally {
      for (const node of [a, b]) await env.kube.delete(RESOURCES.nodes, undefined, node).catch(() => undefined);
    }
  },
);

t.run();
