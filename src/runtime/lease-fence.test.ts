import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeNova } from '../testing/fake-nova.ts';
import { fenceNova, LeaseNotHeld, NOVA_SIDE_EFFECTS } from './lease-fence.ts';
import { createNovaClient } from '../openstack/index.ts';
import { startSimulator } from '../../tools/simulator/server.ts';

test('side effects are sent only while the Lease is held; reads always; a refusal reports before it rejects', async () => {
  const nova = new FakeNova();
  nova.addHost('compute-1', { state: 'down' });
  nova.addHost('compute-2');
  const server = nova.addServer({ name: 'vm', host: 'compute-1' });
  let held = true;
  const lost: string[] = [];
  const fenced = fenceNova(
    nova,
    () => held,
    (err) => lost.push(err.message),
  );
  await fenced.lockServer(server.id);
  assert.is(nova.servers.get(server.id)!.locked, true);
  held = false;
  const err = await fenced.unlockServer(server.id).catch((e: unknown) => e);
  assert.instance(err, LeaseNotHeld);
  assert.is(lost.length, 1);
  assert.is(nova.servers.get(server.id)!.locked, true, 'no unlock after a lost lease');
  assert.not.ok(nova.callLines().includes(`unlockServer ${server.id}`));
  for (const name of NOVA_SIDE_EFFECTS) {
    const e = await (fenced[name] as (...a: unknown[]) => Promise<unknown>)('x', 'y').catch((x: unknown) => x);
    assert.instance(e, LeaseNotHeld, name);
  }
  assert.is((await fenced.getServer(server.id)).id, server.id, 'reads are not fenced');
  nova.stop();
});

test('lease fencing per HTTP attempt: a retry of a side effect is not sent once the Lease is lost', async () => {
  const sim = await startSimulator({ hosts: ['compute-1', 'compute-2'] });
  const http = createNovaClient(sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 3 });
  try {
    const id = sim.state.addServer({ host: 'compute-1', name: 'vm' }).id;
    // Nova answers the first lock with a 500: the transport would retry it (lock is idempotent).
    sim.state.faults.push({ path: `/compute/v2.1/servers/${id}/action`, action: 'lock', count: 1, kind: 500 });
    const calls = () => sim.state.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/action'));
    const lost: string[] = [];
    // The Lease expires while the first attempt is on its way.
    const fenced = fenceNova(
      http,
      () => calls().length === 0,
      (err) => lost.push(err.message),
    );
    const err = await fenced.lockServer(id).catch((e: unknown) => e);
    assert.instance(err, LeaseNotHeld);
    assert.is(calls().length, 1, 'the retry was not sent');
    assert.is(lost.length, 1);
    assert.is(sim.state.servers.get(id)!.locked, false);
  } finally {
    await http.session.close();
    sim.state.clearTimers();
    await sim.stop();
  }
});

test.run();
