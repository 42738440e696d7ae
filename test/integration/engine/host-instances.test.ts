// Which instances a host recovery moves, and the state they end in: real API
// server, the engine component, the Nova simulator over HTTP.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineEnv, fastConfig, HOST_DOWN, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';

const defaults = suite('host recovery with default [host_failure] options');
let env: EngineEnv;

defaults.before(async () => {
  env = await engineEnv('engine-instances', ['src-1', 'dst-1']);
  await env.startEngine('engine-instances-1');
});
defaults.after(async () => {
  await env.close();
});

defaults('HA-enabled first, then the rest; stopped stays stopped, error stays error, none left locked', async () => {
  const seg = await env.segment('seg-i');
  await env.host('src-1', seg);
  await env.host('dst-1', seg);
  const s = env.sim.state;
  const plain = s.addServer({ name: 'plain', host: 'src-1', metadata: {} });
  const ha = s.addServer({ name: 'ha', host: 'src-1', metadata: { HA_Enabled: 'True' } });
  const stopped = s.addServer({ name: 'stopped', host: 'src-1', metadata: { HA_Enabled: 'yes' }, vm_state: 'stopped' });
  const broken = s.addServer({ name: 'broken', host: 'src-1', metadata: { HA_Enabled: 'True' }, vm_state: 'error' });
  s.failHost('src-1');
  const n = await waitPhase(env, await env.notify('COMPUTE_HOST', 'src-1', HOST_DOWN), 'finished');

  for (const v of [plain, ha, stopped, broken]) assert.is(s.servers.get(v.id)?.host, 'dst-1', v.name);
  assert.is(s.servers.get(stopped.id)?.vmState, 'stopped');
  assert.is(s.servers.get(broken.id)?.vmState, 'error');
  assert.is(s.servers.get(ha.id)?.vmState, 'active');
  assert.ok(
    [...s.servers.values()].every((v) => !v.locked),
    'no server left locked',
  );
  // HA_Enabled instances are recorded (and evacuated) before the others (upstream B2 fixed).
  const order = (n.status?.vmoves ?? []).map((v) => v.instanceName);
  assert.is(order.at(-1), 'plain', JSON.stringify(order));
  const prepare = n.status?.recoveryWorkflowDetails?.find((t) => t.name === 'PrepareHAEnabledInstancesTask');
  assert.ok(
    prepare?.progressDetails.some((d) => d.message === "Total HA Enabled instances count: '3'"),
    JSON.stringify(prepare?.progressDetails),
  );
});

defaults.run();

const strict = suite('host recovery with evacuate_all_instances=false, ignore_instances_in_error_state=true');
let env2: EngineEnv;

strict.before(async () => {
  env2 = await engineEnv('engine-instances-strict', ['src-2', 'dst-2']);
  await env2.startEngine('engine-instances-2', {
    config: fastConfig((c) => {
      c.host_failure.evacuate_all_instances = false;
      c.host_failure.ignore_instances_in_error_state = true;
    }),
  });
});
strict.after(async () => {
  await env2.close();
});

strict('only HA-enabled instances that are not in error are evacuated', async () => {
  const seg = await env2.segment('seg-s');
  await env2.host('src-2', seg);
  await env2.host('dst-2', seg);
  const s = env2.sim.state;
  const plain = s.addServer({ name: 'plain', host: 'src-2', metadata: {} });
  const ha = s.addServer({ name: 'ha', host: 'src-2', metadata: { HA_Enabled: 'True' } });
  const broken = s.addServer({ name: 'broken', host: 'src-2', metadata: { HA_Enabled: 'True' }, vm_state: 'error' });
  s.failHost('src-2');
  const n = await waitPhase(env2, await env2.notify('COMPUTE_HOST', 'src-2', HOST_DOWN), 'finished');
  assert.is(s.servers.get(ha.id)?.host, 'dst-2');
  assert.is(s.servers.get(plain.id)?.host, 'src-2');
  assert.is(s.servers.get(broken.id)?.host, 'src-2');
  assert.equal(
    (n.status?.vmoves ?? []).map((v) => v.instanceName),
    ['ha'],
  );
  const prepare = n.status?.recoveryWorkflowDetails?.find((t) => t.name === 'PrepareHAEnabledInstancesTask');
  assert.ok(
    prepare?.progressDetails.some(
      (d) => d.message === `Ignoring recovery of HA_Enabled instance '${broken.id}' as it is in 'error' state.`,
    ),
    JSON.stringify(prepare?.progressDetails),
  );
});

strict.run();
