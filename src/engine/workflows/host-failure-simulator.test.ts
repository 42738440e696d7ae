// The host-failure workflow end to end against the Nova/Keystone simulator
// through the real HTTP client: paging over several pages of servers (B12),
// Nova's own preconditions, and exactly-once evacuation counted by the
// simulator, including after a crash and resumption.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createNovaClient } from '../../openstack/index.ts';
import type { HttpNovaClient } from '../../openstack/index.ts';
import type { SimServerInput } from '../../../tools/simulator/records.ts';
import type { Simulator } from '../../../tools/simulator/server.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import { runHostFailure } from './host-failure.ts';
import { MemoryEngine } from './testing/memory-context.ts';
import { serverLockKey } from '../nova/server-locks.ts';
import { systemClock } from '../../time/clock.ts';
import type { Clock } from '../../time/clock.ts';

const FAILED = 'compute-1';

interface World {
  sim: Simulator;
  nova: HttpNovaClient;
}

const sim = suite<{ w?: World }>('host-failure against the simulator', {});

sim.before.each(async (ctx) => {
  const s = await startSimulator({
    hosts: [FAILED, 'compute-2', 'compute-3', 'rh-1'],
    maxLimit: 2,
    latencyMs: { evacuate: 40, stop: 20 },
  });
  ctx.w = { sim: s, nova: createNovaClient(s.clientCredentials, { timeoutMs: 5_000, maxRetries: 2 }) };
});

sim.after.each(async (ctx) => {
  await ctx.w?.nova.session.close();
  ctx.w?.sim.state.clearTimers();
  await ctx.w?.sim.stop();
});

function engineFor(w: World, method: 'auto' | 'reserved_host' = 'auto', clock?: Clock): MemoryEngine {
  return new MemoryEngine({
    nova: w.nova,
    ...(clock ? { clock } : {}),
    hostname: FAILED,
    recoveryMethod: method,
    hosts: [
      {
        name: 'rh-1',
        segmentUuid: 'segment-1',
        reserved: true,
        onMaintenance: false,
        createdAt: '2026-01-01T00:00:00Z',
      },
    ],
    segmentUuid: 'segment-1',
  });
}

function addServers(w: World): string[] {
  const inputs = [
    { name: 'ha-1', metadata: { HA_Enabled: 'True' } },
    { name: 'plain-1' },
    { name: 'stopped-1', vm_state: 'stopped' },
    { name: 'error-1', vm_state: 'error' },
    { name: 'ha-2', metadata: { HA_Enabled: 'true' } },
  ];
  return inputs.map((i) => w.sim.state.addServer({ host: FAILED, ...i }).id);
}

sim('auto: every page of servers is evacuated exactly once and ends in its state', async ({ w }) => {
  const ids = addServers(w!);
  w!.sim.state.failHost(FAILED);
  const engine = engineFor(w!);
  await runHostFailure(engine.context(), engine.startFallbackRun);
  const moves = engine.vmoves();
  assert.is(moves.length, 5, 'all pages (max_limit 2) were read');
  assert.equal(
    moves
      .slice(0, 2)
      .map((m) => m.instanceName)
      .sort(),
    ['ha-1', 'ha-2'],
  );
  assert.ok(moves.every((m) => m.status === 'succeeded' && m.destHost !== FAILED && m.destHost !== null));
  const servers = ids.map((id) => w!.sim.state.servers.get(id)!);
  assert.equal(
    servers.map((s) => [s.name, s.vmState, s.locked, s.host !== FAILED]),
    [
      ['ha-1', 'active', false, true],
      ['plain-1', 'active', false, true],
      ['stopped-1', 'stopped', false, true],
      ['error-1', 'error', false, true],
      ['ha-2', 'active', false, true],
    ],
  );
  for (const id of ids) assert.is(w!.sim.state.actionCounts.evacuate?.[id], 1);
  const svc = w!.sim.state.serviceOf(FAILED)!;
  assert.is(svc.disabled, true);
  assert.is(svc.disabledReason, 'Masakari detected host failed.');
});

sim('reserved_host: evacuates onto the reserved host after enabling it', async ({ w }) => {
  const ids = ['a', 'b'].map((name) => w!.sim.state.addServer({ host: FAILED, name }).id);
  const rh = w!.sim.state.serviceOf('rh-1')!;
  rh.disabled = true;
  rh.disabledReason = 'reserved';
  w!.sim.state.failHost(FAILED);
  const engine = engineFor(w!, 'reserved_host');
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.is(rh.disabled, false);
  assert.is(engine.host('rh-1').reserved, false);
  for (const id of ids) assert.is(w!.sim.state.servers.get(id)!.host, 'rh-1');
});

sim('crash after each evacuate call, resume: the simulator counts exactly one evacuation per server', async ({ w }) => {
  const ids = addServers(w!);
  w!.sim.state.failHost(FAILED);
  const engine = engineFor(w!);
  // Crash once right after the second evacuate call reached Nova, then resume.
  const original = w!.nova.evacuate.bind(w!.nova);
  let calls = 0;
  w!.nova.evacuate = async (...args) => {
    await original(...args);
    if (++calls === 2) engine.crashNow();
  };
  await runHostFailure(engine.context(), engine.startFallbackRun).catch(() => undefined);
  assert.ok(engine.crashed);
  engine.restart();
  await runHostFailure(engine.context(), engine.startFallbackRun);
  for (const id of ids) assert.is(w!.sim.state.actionCounts.evacuate?.[id], 1, `evacuations of ${id}`);
  assert.ok(engine.vmoves().every((m) => m.status === 'succeeded'));
});

/** Nova refuses the next `count` unlocks of the server with a 500. */
function failUnlocks(w: World, id: string, count: number): void {
  w.sim.state.faults.push({ path: `/compute/v2.1/servers/${id}/action`, action: 'unlock', count, kind: 500 });
}

sim(
  'a server left locked after finished: an unlock refused 5 times and then accepted leaves it unlocked',
  async ({ w }) => {
    const id = w!.sim.state.addServer({ host: FAILED, name: 'ha-1' }).id;
    w!.sim.state.failHost(FAILED);
    failUnlocks(w!, id, 5);
    const engine = engineFor(w!);
    await runHostFailure(engine.context(), engine.startFallbackRun);
    assert.is(w!.sim.state.servers.get(id)!.locked, false);
    assert.is(engine.effects()[serverLockKey(id)]?.state, 'done');
    assert.is(w!.sim.state.faults.length, 0, 'every refusal was used');
  },
);

sim('a server left locked after finished: an unlock Nova always refuses stays journalled as held', async ({ w }) => {
  const id = w!.sim.state.addServer({ host: FAILED, name: 'ha-1' }).id;
  w!.sim.state.failHost(FAILED);
  failUnlocks(w!, id, 1_000);
  const engine = engineFor(w!, 'auto', {
    ...systemClock,
    sleep: (ms, signal) => systemClock.sleep(Math.min(ms, 20), signal),
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.is(w!.sim.state.servers.get(id)!.locked, true);
  assert.is(engine.vmoves()[0]!.status, 'succeeded');
  assert.is(engine.effects()[serverLockKey(id)]?.state, 'intended', 'the engine core ends the run error from this');
});

sim('the failed host still up in Nova: no instance is touched', async ({ w }) => {
  const ids = addServers(w!);
  const engine = engineFor(w!);
  engine.config.DEFAULT.wait_period_after_service_update = 0.3;
  await runHostFailure(engine.context(), engine.startFallbackRun).then(
    () => assert.unreachable('must fail'),
    (err: Error) => assert.match(err.message, /still reported up by Nova/),
  );
  for (const id of ids) {
    const s = w!.sim.state.servers.get(id)!;
    assert.is(s.host, FAILED);
    assert.is(s.locked, false);
  }
  assert.equal(w!.sim.state.actionCounts.evacuate ?? {}, {});
});

sim(
  'selectors through the real client: tagged flavor, Glance image and aggregate, name exclusion, priority order',
  async ({ w }) => {
    const { state } = w!.sim;
    const image = state.addImage({ name: 'ha-image', properties: { evacuable: 'True' } });
    state.addAggregate({ name: 'ha-hosts', hosts: [FAILED], metadata: { evacuable: 'true' } });
    const add = (name: string, extra: Omit<SimServerInput, 'name' | 'host'>) =>
      state.addServer({ name, host: FAILED, ...extra }).id;
    const plain = add('plain', {});
    const byFlavor = add('by-flavor', { flavor_extra_specs: { evacuable: 'true' }, metadata: { HA_Priority: '1' } });
    const byImage = add('by-image', { image_id: image.id, metadata: { HA_Priority: '7' } });
    const byImageToo = add('by-image-2', { image_id: image.id });
    const scratch = add('by-image-scratch', { image_id: image.id, metadata: { HA_Priority: '99' } });
    state.failHost(FAILED);
    const engine = new MemoryEngine({
      nova: w!.nova,
      hostname: FAILED,
      recoveryMethod: 'auto',
      segmentUuid: 'segment-1',
      configure: (c) => {
        c.host_failure.evacuate_all_instances = false;
        c.host_failure.tagged_flavors = true;
        c.host_failure.tagged_images = true;
        c.host_failure.tagged_aggregates = true;
        c.host_failure.skip_servers_with_name = [/-scratch$/];
        c.host_failure.priority_metadata_key = 'HA_Priority';
      },
    });
    await runHostFailure(engine.context(), engine.startFallbackRun);
    assert.equal(
      engine.vmoves().map((m) => m.instanceUuid),
      [byImage, byFlavor, byImageToo],
    );
    assert.equal(Object.keys(state.actionCounts.evacuate ?? {}).sort(), [byImage, byFlavor, byImageToo].sort());
    assert.is(state.servers.get(plain)?.host, FAILED);
    assert.is(state.servers.get(scratch)?.host, FAILED);
    const imageReads = state.requestLog.filter((r) => r.path.startsWith('/image/v2/images/'));
    assert.is(imageReads.length, 1, 'one Glance read for the image three servers share');
  },
);

sim.run();
