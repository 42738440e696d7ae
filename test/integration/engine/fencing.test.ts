// requireFencing on a segment gives API-path notifications the remediator's
// fencing gate: the engine never evacuates a host that is not proven fenced.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineEnv, HOST_DOWN, phaseOf, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { REMEDIATION_ANNOTATIONS } from '../../../src/model/remediation-constants.ts';

const t = suite('engine fencing gate (requireFencing)');
let env: EngineEnv;

t.before(async () => {
  env = await engineEnv('engine-fencing', ['fenced-1', 'spare-1']);
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

t.run();
