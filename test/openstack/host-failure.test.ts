// Host failure on real Nova 34, for each recovery method, driven through our
// facade with the real `openstack` CLI and checked through Nova's own API.
// The failed host carries 8 servers: 4 ACTIVE, 1 SHUTOFF, 1 ERROR, 1 locked by
// its owner (all HA_Enabled) and 1 without HA_Enabled, which stays where it is
// (evacuate_all_instances = false). Its nova-compute is really SIGKILLed and
// the notification is sent once Nova itself reports the service down.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bootFleet,
  captureWorld,
  saveTranscript,
  computeService,
  createSegment,
  evacuations,
  facade,
  failHost,
  HOST_DISABLE_REASON,
  HOST_DOWN_PAYLOAD,
  notify,
  servers,
  waitNotification,
  withScenario,
  type Env,
  type Fleet,
  type Segment,
} from './support/scenario.ts';

const test = suite('host failure on real Nova');

const FAILED = 'cpu1';
const AGGREGATE = 'ha-aggregate';

/** What Nova must show after a recovery that moved the fleet off FAILED. */
async function checkRecovered(e: Env, fleet: Fleet, allowedTargets: string[]): Promise<void> {
  const after = await servers(e, fleet.all);
  for (const s of after) {
    const want = fleet.expected.get(s.id);
    if (!want) {
      // the server without HA_Enabled stays on the failed host, untouched
      assert.is(s['OS-EXT-SRV-ATTR:host'], FAILED, `${s.name} (no HA_Enabled) must not move`);
      continue;
    }
    assert.ok(
      allowedTargets.includes(s['OS-EXT-SRV-ATTR:host'] ?? ''),
      `${s.name} is on ${s['OS-EXT-SRV-ATTR:host']}, expected one of ${allowedTargets.join(', ')}`,
    );
    assert.is(s.status, want, `${s.name} must end in its original status`);
    assert.is(s['OS-EXT-STS:task_state'] ?? null, null, `${s.name} task_state`);
    if (s.id === fleet.ownerLocked) {
      assert.ok(s.locked, `${s.name}: the owner's lock must stay`);
      assert.is(s.locked_reason, 'owner maintenance');
    } else {
      assert.not.ok(s.locked, `${s.name} left locked`);
    }
    const moves = await evacuations(e, s.id);
    assert.is(moves.length, 1, `${s.name}: ${moves.length} evacuation migrations (${JSON.stringify(moves)})`);
    assert.is(moves[0]?.source_compute, FAILED);
  }
  const svc = await computeService(e, FAILED);
  assert.is(svc.status, 'disabled');
  assert.is(svc.disabled_reason, HOST_DISABLE_REASON);
}

async function aggregateHosts(e: Env, id: number): Promise<string[]> {
  const r = await e.cloud.admin('GET', `/os-aggregates/${id}`);
  return (r.body as { aggregate: { hosts: string[] } }).aggregate.hosts;
}

/** The failed host's aggregate (the cloud reset deletes it before the next scenario). */
async function createAggregate(e: Env): Promise<number> {
  const created = await e.cloud.admin('POST', '/os-aggregates', { aggregate: { name: AGGREGATE } });
  const id = (created.body as { aggregate: { id: number } }).aggregate.id;
  await e.cloud.admin('POST', `/os-aggregates/${id}/action`, { add_host: { host: FAILED } });
  return id;
}

async function scenario(
  method: 'auto' | 'reserved_host' | 'auto_priority' | 'rh_priority',
  check: (e: Env, fleet: Fleet, aggregate: number, segment: Segment) => Promise<void>,
): Promise<void> {
  await withScenario(`openstack-${method}`, async (e) => {
    const reserved = method !== 'auto';
    const [segment, aggregate, fleet] = await Promise.all([
      createSegment(e, method, [{ name: 'cpu1' }, { name: 'cpu2' }, { name: 'cpu3', reserved }]),
      createAggregate(e),
      bootFleet(e, FAILED),
    ]);
    await failHost(e, FAILED);
    const world = await captureWorld(e, FAILED, fleet.all);
    const since = (await e.cloud.exchanges(0)).last;
    const created = await notify(e, 'COMPUTE_HOST', FAILED, HOST_DOWN_PAYLOAD);
    const done = await waitNotification(e, created.notification_uuid);
    await saveTranscript(e, `host-failure-${method}`, world, since);
    assert.is(done.status, 'finished', `notification ended ${done.status}: ${JSON.stringify(done)}`);
    await check(e, fleet, aggregate, segment);
  });
}

test('reserved_host: every HA server on the reserved host, which joins the aggregate and is no longer reserved', async () => {
  await scenario('reserved_host', async (e, fleet, aggregate, segment) => {
    await checkRecovered(e, fleet, ['cpu3']);
    assert.ok(
      (await aggregateHosts(e, aggregate)).includes('cpu3'),
      'reserved host added to the failed host aggregate',
    );
    const { hosts } = (await facade(e, 'GET', `/segments/${segment.id}/hosts`)) as {
      hosts: { name: string; reserved: boolean }[];
    };
    assert.is(hosts.find((h) => h.name === 'cpu3')?.reserved, false);
  });
});

test('auto: every HA server evacuated by the scheduler, original power state, owner lock kept, host disabled', async () => {
  await scenario('auto', async (e, fleet) => {
    await checkRecovered(e, fleet, ['cpu2', 'cpu3']);
  });
});

test('auto_priority: the scheduler places them (auto succeeds first)', async () => {
  await scenario('auto_priority', async (e, fleet) => {
    await checkRecovered(e, fleet, ['cpu2', 'cpu3']);
  });
});

test('rh_priority: the reserved host takes them first', async () => {
  await scenario('rh_priority', async (e, fleet) => {
    await checkRecovered(e, fleet, ['cpu3']);
  });
});

test.run();
