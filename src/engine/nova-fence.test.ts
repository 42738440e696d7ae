import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeNova } from '../testing/fake-nova.ts';
import { fenceNova, LeaseNotHeld, NOVA_SIDE_EFFECTS } from './nova-fence.ts';

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

test.run();
