// The four recovery methods end to end: real API server, the engine
// component, the Nova simulator over HTTP. Each scenario fails its own
// compute host, so the maintenance latch of one does not affect another.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { engineEnv, eventually, HOST_DOWN, phaseOf, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';
import type { Notification } from '../../../src/model/types.ts';

const t = suite('recovery methods');
let env: EngineEnv;

const HOSTS = ['src-a', 'tgt-a', 'src-r', 'rsv-r1', 'rsv-r2', 'src-n', 'src-ap', 'rsv-ap', 'src-rp'];

t.before(async () => {
  env = await engineEnv('engine-methods', HOSTS);
  // Reserved hosts are spares: disabled in Nova until a recovery enables one.
  for (const h of ['rsv-r1', 'rsv-r2', 'rsv-ap']) env.sim.state.mustService(h).disabled = true;
  await env.startEngine('engine-methods-1');
});

t.after(async () => {
  await env.close();
});

const hostOf = (id: string) => env.sim.state.servers.get(id)?.host;
const evacuations = (id: string) => env.sim.state.actionCounts.evacuate?.[id] ?? 0;
const runsOf = (n: Notification) => new Set((n.status?.vmoves ?? []).map((v) => v.run ?? 0)).size;

t('auto: Nova picks the target; the instance moves and the host is left on maintenance', async () => {
  const seg = await env.segment('seg-auto', { recoveryMethod: 'auto' });
  await env.host('src-a', seg);
  await env.host('tgt-a', seg);
  const vm = env.sim.state.addServer({ name: 'vm-a', host: 'src-a', metadata: { HA_Enabled: 'True' } });
  env.sim.state.failHost('src-a');
  const n = await waitPhase(env, await env.notify('COMPUTE_HOST', 'src-a', HOST_DOWN), 'finished');
  assert.is.not(hostOf(vm.id), 'src-a');
  assert.is(evacuations(vm.id), 1);
  assert.equal(
    n.status?.vmoves?.map((v) => [v.status, v.sourceHost]),
    [['succeeded', 'src-a']],
  );
  assert.is((await env.getHost('src-a')).status?.onMaintenance, true);
});

t('reserved_host: the newest reserved host fails mid-way, the next one takes the instance', async () => {
  const seg = await env.segment('seg-rh', { recoveryMethod: 'reserved_host' });
  await env.host('src-r', seg);
  await env.host('rsv-r1', seg, { reserved: true });
  await env.host('rsv-r2', seg, { reserved: true }); // newest: tried first
  env.sim.state.failHost('rsv-r2'); // enabled by the workflow, but dead: the evacuation to it fails
  const vm = env.sim.state.addServer({ name: 'vm-r', host: 'src-r', metadata: { HA_Enabled: 'True' } });
  env.sim.state.failHost('src-r');
  const n = await waitPhase(env, await env.notify('COMPUTE_HOST', 'src-r', HOST_DOWN), 'finished');
  assert.is(hostOf(vm.id), 'rsv-r1');
  assert.is(env.sim.state.mustService('rsv-r1').disabled, false, 'the chosen spare was enabled in Nova');
  // Both spares were consumed (Masakari marks each tried host reserved=false).
  assert.is((await env.getHost('rsv-r1')).status?.reserved, false);
  assert.is((await env.getHost('rsv-r2')).status?.reserved, false);
  const final = (n.status?.vmoves ?? []).filter((v) => v.status === 'succeeded');
  assert.is(final.length, 1);
  assert.is(final[0]?.destHost, 'rsv-r1');
});

t('reserved_host without reserved hosts: error with Masakari message, then failed after the retry', async () => {
  const seg = await env.segment('seg-none', { recoveryMethod: 'reserved_host' });
  await env.host('src-n', seg);
  const vm = env.sim.state.addServer({ name: 'vm-n', host: 'src-n', metadata: { HA_Enabled: 'True' } });
  env.sim.state.failHost('src-n');
  const name = await env.notify('COMPUTE_HOST', 'src-n', HOST_DOWN);
  const n = await eventually(
    'error or failed',
    () => env.get(name),
    (x) => ['error', 'failed'].includes(phaseOf(x)),
  );
  assert.ok(
    JSON.stringify(n.status).includes('No reserved_hosts available for evacuation.'),
    JSON.stringify(n.status?.engine),
  );
  await waitPhase(env, name, 'failed');
  assert.is(evacuations(vm.id), 0);
  assert.is(hostOf(vm.id), 'src-n');
});

t('auto_priority: auto fails, the reserved_host fallback run recovers the instance', async () => {
  const seg = await env.segment('seg-ap', { recoveryMethod: 'auto_priority' });
  await env.host('src-ap', seg);
  await env.host('rsv-ap', seg, { reserved: true });
  const vm = env.sim.state.addServer({ name: 'vm-ap', host: 'src-ap', metadata: { HA_Enabled: 'True' } });
  env.sim.state.failHost('src-ap');
  // The auto run's first action on the server (its lock) fails, and so does the lock's one retry
  // (openstack_max_retries is 1 here; a lock is re-sent after any 5xx): the auto flow ends in failure.
  env.sim.state.faults.push({ method: 'POST', path: `/compute/v2.1/servers/${vm.id}/action`, count: 2, kind: 500 });
  const n = await waitPhase(env, await env.notify('COMPUTE_HOST', 'src-ap', HOST_DOWN), 'finished');
  assert.is(hostOf(vm.id), 'rsv-ap');
  assert.is(evacuations(vm.id), 1);
  assert.is(runsOf(n), 2, 'one run per flow: auto, then reserved_host');
  assert.is(env.sim.state.servers.get(vm.id)?.locked, false);
});

t('rh_priority without reserved hosts: falls back to auto', async () => {
  const seg = await env.segment('seg-rp', { recoveryMethod: 'rh_priority' });
  await env.host('src-rp', seg);
  const vm = env.sim.state.addServer({ name: 'vm-rp', host: 'src-rp', metadata: { HA_Enabled: 'True' } });
  env.sim.state.failHost('src-rp');
  await waitPhase(env, await env.notify('COMPUTE_HOST', 'src-rp', HOST_DOWN), 'finished');
  assert.is.not(hostOf(vm.id), 'src-rp');
  assert.is(evacuations(vm.id), 1);
});

t.run();
