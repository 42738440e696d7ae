import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { memoryService } from '../domain/testing/memory-service.ts';
import type { HaHost, Notification } from '../model/types.ts';
import { NovaBadRequest, NovaError } from '../openstack/types.ts';
import { FakeNova, novaService } from '../testing/fake-nova.ts';
import {
  finishedRecovery,
  hostPower,
  notBackBecause,
  onMaintenanceByRecovery,
  restoreHost,
  returnPolicyOf,
} from './return-to-service.ts';
import { createNovaClient } from '../openstack/index.ts';
import { LeaseNotHeld, leaseFencedNova } from '../runtime/lease-fence.ts';
import { startSimulator } from '../../tools/simulator/server.ts';

/** Host h1 as a recovery left it: on maintenance, its service disabled and forced down. */
async function setup() {
  const { repo, service, hosts } = await memoryService({ hosts: ['h1'] });
  repo.setHostFlags(hosts[0]!.uuid, { on_maintenance: true });
  const nova = new FakeNova();
  const compute = nova.addHost('h1', { status: 'disabled', forced_down: true, state: 'down' });
  return { repo, service, nova, compute, host: () => repo.getHostByName('h1')! };
}

const hahost = (spec: Partial<HaHost['spec']>, status: HaHost['status'], generation = 1): HaHost =>
  ({ metadata: { name: 'h', generation }, spec: { name: 'h', ...spec }, status }) as HaHost;

test('policy: Restore only when asked; absent is LeaveDisabled', () => {
  assert.is(returnPolicyOf({ returnToService: { policy: 'Restore' } }), 'Restore');
  assert.is(returnPolicyOf({ returnToService: { policy: 'LeaveDisabled' } }), 'LeaveDisabled');
  assert.is(returnPolicyOf({}), 'LeaveDisabled');
});

test("on maintenance by a recovery: the engine's latch while spec says false; never a person's", () => {
  assert.ok(onMaintenanceByRecovery(hahost({ onMaintenance: false }, { onMaintenance: true, flagsGeneration: 1 })));
  assert.not.ok(onMaintenanceByRecovery(hahost({ onMaintenance: true }, { onMaintenance: true, flagsGeneration: 1 })));
  // A newer spec (generation 2) overrides the latch: not on maintenance at all.
  assert.not.ok(
    onMaintenanceByRecovery(hahost({ onMaintenance: false }, { onMaintenance: true, flagsGeneration: 1 }, 2)),
  );
});

test("the recovery undone is the host's newest COMPUTE_HOST notification, and only when finished", () => {
  const n = (id: number, phase: string, type = 'COMPUTE_HOST', host = 'hu'): Notification =>
    ({ metadata: { name: `n${id}` }, spec: { type }, status: { id, phase, sourceHostUuid: host } }) as Notification;
  assert.is(finishedRecovery('hu', [n(1, 'finished'), n(2, 'failed')]), undefined);
  assert.is(finishedRecovery('hu', [n(2, 'finished'), n(1, 'failed'), n(3, 'running', 'VM')])?.metadata.name, 'n2');
  assert.is(finishedRecovery('hu', [n(2, 'finished', 'COMPUTE_HOST', 'other')]), undefined);
});

test('back: BMC On, service reporting, Node Ready, each only where it applies', () => {
  const compute = novaService('h', { status: 'disabled', state: 'down', forced_down: true });
  assert.is(notBackBecause('h', { compute, reporting: true }), undefined);
  assert.match(notBackBecause('h', { compute, reporting: false })!, 'not reporting');
  assert.match(notBackBecause('h', { compute, reporting: true, nodeReady: false })!, 'Node is not Ready');
  assert.match(notBackBecause('h', { compute, reporting: true, power: 'Off' })!, 'power Off, not On');
  assert.match(notBackBecause('h', { compute, reporting: true, power: { error: 'timeout' } })!, 'cannot tell');
  assert.match(notBackBecause('h', { compute: undefined, reporting: false })!, 'no nova-compute service');
});

test('hostPower: none without spec.fencing; an error (or no driver) is never On', async () => {
  const plain = hahost({}, {});
  assert.is(await hostPower(plain, undefined), undefined);
  const fenced = hahost({ fencing: { driver: 'ipmi', address: '10.0.0.5', credentialsSecretRef: { name: 's' } } }, {});
  assert.match(JSON.stringify(await hostPower(fenced, undefined)), 'no BMC driver');
  const failing = await hostPower(fenced, async () => {
    throw new Error('Secret s not found');
  });
  assert.equal(failing, { error: 'Secret s not found' });
});

test('restore: one PUT for forced_down and status, then on_maintenance through the host update', async () => {
  const s = await setup();
  const out = await restoreHost({ nova: s.nova, service: s.service }, s.host(), s.compute);
  assert.equal(out, {
    done: true,
    steps: ['forced_down cleared', 'nova-compute service enabled', 'on_maintenance cleared'],
  });
  assert.equal(s.nova.callLines(), [`updateService ${s.compute.id}`]);
  assert.is(s.host().on_maintenance, false);
});

test('restore: Nova refusing is deferred with its words, maintenance untouched; Nova failing throws for the next look', async () => {
  const s = await setup();
  s.nova.failNext('updateService', new NovaBadRequest(400, 'Invalid input'));
  const out = await restoreHost({ nova: s.nova, service: s.service }, s.host(), s.compute);
  assert.is(out.done, false);
  assert.match(!out.done ? out.message : '', 'HTTP 400');
  assert.ok(s.host().on_maintenance);
  s.nova.failNext('updateService', new NovaError(503, 'unavailable'));
  await rejection(restoreHost({ nova: s.nova, service: s.service }, s.host(), s.compute), NovaError);
  assert.ok(s.host().on_maintenance);
});

const DETECTION = { holder: 'the built-in detection', lease: 'masakari-detection' };

test('restore by a deposed Lease holder: the os-services PUT is not sent, maintenance untouched', async () => {
  const s = await setup();
  const warned: string[] = [];
  const nova = leaseFencedNova(s.nova, () => false, DETECTION, { warn: (m) => warned.push(m) })!;
  const err = await rejection(restoreHost({ nova, service: s.service }, s.host(), s.compute), LeaseNotHeld);
  assert.match(
    err.message,
    'not sending updateService to Nova: the built-in detection no longer holds the masakari-detection Lease',
  );
  assert.equal(warned, [err.message]);
  assert.equal(s.nova.callLines(), [], 'nothing sent');
  assert.is(s.nova.service('h1').forced_down, true);
  assert.ok(s.host().on_maintenance);
});

test('restore: the Lease lapsing while the PUT is on its way stops its retry (per HTTP attempt, Nova simulator)', async () => {
  const { repo, service, hosts } = await memoryService({ hosts: ['h1'] });
  repo.setHostFlags(hosts[0]!.uuid, { on_maintenance: true });
  const sim = await startSimulator({ hosts: ['h1'] });
  const http = createNovaClient(sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 3 });
  try {
    Object.assign(sim.state.mustService('h1'), { forcedDown: true, disabled: true });
    const compute = (await http.listServices({ binary: 'nova-compute', host: 'h1' }))[0]!;
    // Nova answers the first PUT with a 500: the transport would send it again (the PUT is idempotent).
    sim.state.faults.push({ method: 'PUT', path: '/compute/v2.1/os-services', count: 1, kind: 500 });
    const puts = () => sim.state.requestLog.filter((r) => r.method === 'PUT');
    // The holder stalls past its Lease while the first attempt is on its way.
    const nova = leaseFencedNova(http, () => puts().length === 0, DETECTION, { warn: () => undefined })!;
    await rejection(restoreHost({ nova, service }, repo.getHostByName('h1')!, compute), LeaseNotHeld);
    assert.is(puts().length, 1, 'the retry was not sent');
    assert.is(sim.state.mustService('h1').forcedDown, true);
    assert.is(sim.state.mustService('h1').disabled, true);
    assert.ok(repo.getHostByName('h1')!.on_maintenance);
  } finally {
    await http.session.close();
    sim.state.clearTimers();
    await sim.stop();
  }
});

test.run();
