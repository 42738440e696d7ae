import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileHostFailure } from '../domain/testing/memory-service.ts';
import { NovaError } from '../openstack/types.ts';
import { world } from './testing/world.ts';
import { NovaBadRequest } from '../openstack/types.ts';

const DETECT = { enabled: true, gracePeriodSeconds: 30 };

test('a host down past its grace period becomes one COMPUTE_HOST notification with the hostmonitor payload, through the REST intake', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT });
  w.nova.service('cmp1').state = 'down';
  const looks = await w.lookFor(20);
  assert.equal(
    looks.flatMap((l) => l.raised),
    [],
    'nothing before 30 s',
  );
  w.clock.advance(10_000); // t = 40 s since the first look that saw it down
  assert.equal((await w.look()).raised, ['cmp1']);
  const [n, ...more] = w.repo.listNotifications();
  assert.is(more.length, 0);
  assert.is(n!.type, 'COMPUTE_HOST');
  assert.is(n!.status, 'new');
  assert.equal(n!.payload, { event: 'STOPPED', cluster_status: 'OFFLINE', host_status: 'NORMAL' });
  assert.match(n!.generated_time, /^2026-12-04T12:00:40/, 'generated now');
  assert.ok(w.events.some((e) => e.reason === 'HostFailureDetected' && e.regarding.kind === 'HaHost'));
  // Raised once: later looks leave it to the engine.
  assert.equal(
    (await w.lookFor(60)).flatMap((l) => l.raised),
    [],
  );
  assert.is(w.repo.listNotifications().length, 1);
  assert.is(await w.metric('masakari_detection_notifications_total', { outcome: 'raised' }), 1);
  assert.is(await w.metric('masakari_detection_observation_healthy'), 1);
});

test('what a look raises is dated when Nova was asked, and a replica that lost its Lease during the look raises nothing', async () => {
  let held = true;
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT, holdsLease: () => held });
  w.nova.service('cmp1').state = 'down';
  await w.lookFor(20);
  // the look that finds cmp1 past its grace period: Nova answers, then this replica stalls past its Lease
  w.nova.onListServices = () => {
    w.clock.advance(45_000);
    held = false;
  };
  assert.equal((await w.look()).raised, []);
  assert.is(w.repo.listNotifications().length, 0, 'the holder looks afresh');
  // held again, Nova slow: the notification says when Nova saw the host down, not when it was filed
  held = true;
  const asked = w.clock.now().toISOString().slice(0, 19);
  w.nova.onListServices = () => w.clock.advance(20_000);
  assert.equal((await w.look()).raised, ['cmp1']);
  assert.is(w.repo.listNotifications()[0]!.generated_time.slice(0, 19), asked);
});

test('a host back up within its grace period raises nothing, and its next failure starts a new grace period', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT });
  w.nova.service('cmp1').state = 'down';
  await w.lookFor(20);
  w.nova.service('cmp1').state = 'up';
  await w.lookFor(10);
  w.nova.service('cmp1').state = 'down';
  assert.equal(
    (await w.lookFor(20)).flatMap((l) => l.raised),
    [],
  );
  assert.is(w.repo.listNotifications().length, 0);
});

test('one GET /os-services per look for all the hosts, never one per host', async () => {
  const names = Array.from({ length: 40 }, (_, i) => `cmp${i}`);
  const w = await world({ hosts: names, detection: DETECT });
  await w.lookFor(50);
  assert.is(w.nova.count('listServices'), 6);
  for (const c of w.nova.calls) assert.equal(c.args, [undefined, { binary: 'nova-compute' }]);
});

test('segments without detection (or disabled) are not watched: Nova is not even asked', async () => {
  const w = await world({ hosts: ['cmp1'], detection: { enabled: false } });
  w.nova.service('cmp1').state = 'down';
  const looks = await w.lookFor(120);
  assert.ok(looks.every((l) => l.look === 'idle'));
  assert.is(w.nova.count('listServices'), 0);
  assert.is(await w.metric('masakari_detection_observation_healthy'), undefined, 'no series, not a 0 that would alert');
  assert.is(w.repo.listNotifications().length, 0);
});

test('Nova unreachable: nothing raised, the observation gauge goes 0, an Event on the segment, and grace periods start afresh', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT });
  w.nova.service('cmp1').state = 'down';
  await w.lookFor(20); // cmp1 down for 20 s of its 30
  w.nova.failNext('listServices', new NovaError(0, 'connect ECONNREFUSED'), new NovaError(503, 'unavailable'));
  const blind = await w.lookFor(10);
  assert.equal(
    blind.map((l) => l.look),
    ['blind', 'blind'],
  );
  assert.is(await w.metric('masakari_detection_observation_healthy', { segment_uuid: w.segmentUuid }), 0);
  assert.is(await w.metric('masakari_detection_polls_total', { result: 'nova_unreachable' }), 2);
  const ev = w.events.filter((e) => e.reason === 'DetectionBlind');
  assert.is(ev.length, 1, 'one Event when it goes blind, not one per look');
  assert.is(ev[0]!.regarding.kind, 'FailoverSegment');
  assert.match(ev[0]!.note!, /ECONNREFUSED/);
  // Seeing again: cmp1 was down for 40 s of wall time, but its grace period starts afresh.
  assert.equal(
    (await w.lookFor(20)).flatMap((l) => l.raised),
    [],
  );
  assert.is(await w.metric('masakari_detection_observation_healthy'), 1);
  assert.ok(w.events.some((e) => e.reason === 'DetectionRestored'));
  w.clock.advance(10_000);
  assert.equal((await w.look()).raised, ['cmp1']);
});

test('most hosts down at once is an observation problem: nothing raised while it lasts', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3', 'cmp4'], detection: DETECT });
  for (const h of ['cmp1', 'cmp2', 'cmp3']) w.nova.service(h).state = 'down';
  const looks = await w.lookFor(300);
  assert.ok(looks.every((l) => l.look === 'blind'));
  assert.is(w.repo.listNotifications().length, 0);
  assert.is(await w.metric('masakari_detection_polls_total', { result: 'most_hosts_down' }), looks.length);
  assert.match(w.events.find((e) => e.reason === 'DetectionBlind')!.note!, /3 of 4 watched hosts look down at once/);
  // Two of four is not "most": those are raised after their grace period.
  w.nova.service('cmp3').state = 'up';
  const after = await w.lookFor(40);
  assert.equal(after.flatMap((l) => l.raised).sort(), ['cmp1', 'cmp2']);
});

test('a single watched host can still be raised: the limit is never below one host', async () => {
  const w = await world({ hosts: ['cmp1'], detection: DETECT });
  w.nova.service('cmp1').state = 'down';
  assert.equal(
    (await w.lookFor(30)).flatMap((l) => l.raised),
    ['cmp1'],
  );
});

test('a Node that is not Ready counts as down even while Nova still shows the service up', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT });
  w.readiness.set('cmp2', 'Unknown');
  assert.equal(
    (await w.lookFor(30)).flatMap((l) => l.raised),
    ['cmp2'],
  );
  assert.match(w.events.find((e) => e.reason === 'HostFailureDetected')!.note!, /Node is Ready=Unknown/);
});

test('a host whose recovery is still open (new at the fencing gate, not on maintenance yet) is not raised again, however old that notification', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT });
  const old = await fileHostFailure(w.service, 'cmp1', new Date(w.clock.now().getTime() - 3_600_000));
  w.nova.service('cmp1').state = 'down';
  await w.lookFor(90);
  assert.equal(
    w.repo.listNotifications().map((n) => n.notification_uuid),
    [old.notification_uuid],
  );
  assert.is(await w.metric('masakari_detection_notifications_total', { outcome: 'already_handled' }), 1);
});

test("the intake's duplicate refusal is already handled, not an error", async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: { enabled: true, gracePeriodSeconds: 0 } });
  const first = await fileHostFailure(w.service, 'cmp1', w.clock.now());
  w.repo.setNotificationState(first.notification_uuid, { status: 'ignored' });
  w.nova.service('cmp1').state = 'down';
  assert.equal((await w.look()).raised, []);
  assert.is(w.repo.listNotifications().length, 1);
  assert.is(await w.metric('masakari_detection_notifications_total', { outcome: 'already_handled' }), 1);
  assert.is(await w.metric('masakari_detection_notifications_total', { outcome: 'failed' }), undefined);
});

test('a duplicate or a host on maintenance is already handled, not an error, and not retried every look', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], detection: DETECT });
  // A monitor (or the remediator) filed the same event first.
  await fileHostFailure(w.service, 'cmp1', w.clock.now());
  w.nova.service('cmp1').state = 'down';
  await w.lookFor(90);
  assert.is(w.repo.listNotifications().length, 1);
  assert.is(await w.metric('masakari_detection_notifications_total', { outcome: 'already_handled' }), 1);
  assert.is(await w.metric('masakari_detection_notifications_total', { outcome: 'failed' }), undefined);

  // On maintenance by a person: not watched at all.
  w.personMaintenance.add('cmp2');
  w.repo.setHostFlags(w.repo.getHostByName('cmp2')!.uuid, { on_maintenance: true });
  w.nova.service('cmp2').state = 'down';
  await w.lookFor(90);
  assert.is(w.repo.listNotifications().length, 1);
});

test('return to service, Restore: once nova-compute reports again and the BMC says On, forced_down, disabled and on_maintenance are undone', async () => {
  const w = await world({
    hosts: ['cmp1', 'cmp2', 'cmp3'],
    detection: DETECT,
    returnToService: { policy: 'Restore' },
    fenced: ['cmp1'],
  });
  await w.recovered('cmp1');
  w.power.set('cmp1', 'Off');
  // Still dead: updated_at does not move, forced_down keeps it down; nothing happens, the BMC is not even asked.
  assert.equal(
    (await w.lookFor(30)).flatMap((l) => l.returned),
    [],
  );
  assert.equal(w.bmcCalls, []);
  assert.is(w.nova.count('updateService'), 0);
  // Its row written once (a person's `service set` does that too): not yet reporting, the BMC not asked.
  w.nova.service('cmp1').updated_at = '2026-12-04T12:04:50.000000';
  assert.equal((await w.look()).returned, []);
  assert.equal(w.bmcCalls, []);
  // nova-compute reports again (its row's updated_at advances at a second look) but the BMC still says Off: not back.
  w.nova.service('cmp1').updated_at = '2026-12-04T12:05:00.000000';
  assert.equal((await w.look()).returned, []);
  assert.equal(w.bmcCalls, ['cmp1']);
  assert.is(w.nova.count('updateService'), 0);
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance);
  // Powered on and reporting: returned.
  w.power.set('cmp1', 'On');
  w.nova.service('cmp1').updated_at = '2026-12-04T12:05:10.000000';
  assert.equal((await w.look()).returned, ['cmp1']);
  const svc = w.nova.service('cmp1');
  assert.is(svc.forced_down, false);
  assert.is(svc.status, 'enabled');
  assert.is(w.repo.getHostByName('cmp1')!.on_maintenance, false);
  const ev = w.events.find((e) => e.reason === 'HostReturnedToService')!;
  assert.match(ev.note!, /forced_down cleared, nova-compute service enabled, on_maintenance cleared/);
  assert.is(await w.metric('masakari_return_to_service_total', { outcome: 'restored' }), 1);
  assert.equal(
    w.nova.calls.filter((c) => c.method === 'updateService').map((c) => c.args),
    [[svc.id, { forced_down: false, status: 'enabled' }]],
  );
});

test('return to service of a segment without detection (a remediator\'s host): Nova refusing to clear forced_down is "not yet", retried at the next look', async () => {
  // no spec.detection: the segment is watched only for the return (the Medik8s remediator raised the recovery)
  const w = await world({ hosts: ['cmp1', 'cmp2'], returnToService: { policy: 'Restore' } });
  await w.recovered('cmp1');
  assert.equal((await w.look()).returned, []);
  // the repaired host's nova-compute reports again, but Nova still has its done evacuation records
  w.nova.service('cmp1').updated_at = '2026-12-04T12:04:50.000000';
  assert.equal((await w.look()).returned, []);
  w.nova.service('cmp1').updated_at = '2026-12-04T12:05:00.000000';
  w.nova.failNext(
    'updateService',
    new NovaBadRequest(
      400,
      'Unable to force up host cmp1 as `done` evacuation migration records remain associated with the host.',
    ),
  );
  assert.equal(
    (await w.lookFor(10)).flatMap((l) => l.returned),
    [],
  );
  const deferred = w.events.find((e) => e.reason === 'ReturnToServiceDeferred')!;
  assert.match(deferred.note!, /not returned to service yet: Nova refused .*HTTP 400.*evacuation migration records/);
  assert.is(await w.metric('masakari_return_to_service_total', { outcome: 'deferred' }), 1);
  assert.is(w.nova.service('cmp1').forced_down, true);
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance);
  // its records cleaned up, Nova agrees: the next look returns it
  w.nova.service('cmp1').updated_at = '2026-12-04T12:05:30.000000';
  assert.equal((await w.look()).returned, ['cmp1']);
  assert.is(w.nova.service('cmp1').forced_down, false);
  assert.is(w.nova.service('cmp1').status, 'enabled');
  assert.is(w.repo.getHostByName('cmp1')!.on_maintenance, false);
});

test('return to service by a deposed replica (its detection Lease lapsed): nothing is sent to Nova, the Lease holder returns the host', async () => {
  let held = true;
  const w = await world({
    hosts: ['cmp1', 'cmp2', 'cmp3'],
    detection: DETECT,
    returnToService: { policy: 'Restore' },
    holdsLease: () => held,
  });
  await w.recovered('cmp1');
  assert.equal((await w.look()).returned, []);
  w.nova.service('cmp1').updated_at = '2026-12-04T12:04:50.000000';
  assert.equal((await w.look()).returned, []);
  // Back and reporting, but this replica stalled past its Lease (a pause, a frozen VM) in the middle of the look.
  w.nova.service('cmp1').updated_at = '2026-12-04T12:05:00.000000';
  held = false;
  w.clock.advance(10_000);
  assert.equal((await w.look()).returned, []);
  assert.is(w.nova.count('updateService'), 0, 'no os-services PUT from a deposed replica');
  assert.is(w.nova.service('cmp1').forced_down, true);
  assert.is(w.nova.service('cmp1').status, 'disabled');
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance, 'nor is its maintenance cleared');
  assert.is(await w.metric('masakari_return_to_service_total', { outcome: 'failed' }), undefined, 'not a failure');
  assert.not.ok(w.events.some((e) => e.reason === 'HostReturnedToService'));
  // The Lease held again (this replica, or the next leader, looks): returned.
  held = true;
  w.nova.service('cmp1').updated_at = '2026-12-04T12:05:10.000000';
  w.clock.advance(10_000);
  assert.equal((await w.look()).returned, ['cmp1']);
  assert.is(w.nova.service('cmp1').forced_down, false);
  assert.is(w.repo.getHostByName('cmp1')!.on_maintenance, false);
});

test('return to service: a BMC that cannot be read never counts as On', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2'], returnToService: { policy: 'Restore' }, fenced: ['cmp1'] });
  await w.recovered('cmp1');
  w.power.set('cmp1', new Error('connect ETIMEDOUT'));
  w.alive.add('cmp1');
  w.nova.service('cmp1').state = 'up';
  w.nova.service('cmp1').forced_down = false;
  assert.equal(
    (await w.lookFor(60)).flatMap((l) => l.returned),
    [],
  );
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance);
  assert.is(w.nova.count('updateService'), 0);
});

test('return to service, LeaveDisabled: the host stays out of service, with one Event that says so', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2'], detection: DETECT, fenced: ['cmp1'] });
  await w.recovered('cmp1');
  Object.assign(w.nova.service('cmp1'), { forced_down: false, state: 'up' });
  w.alive.add('cmp1');
  await w.lookFor(120);
  assert.equal(w.bmcCalls, ['cmp1'], 'its BMC asked once, not at every look after the Event');
  assert.is(w.nova.count('updateService'), 0);
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance);
  const ev = w.events.filter((e) => e.reason === 'HostLeftDisabled');
  assert.is(ev.length, 1);
  assert.match(ev[0]!.note!, /openstack compute service set --enable --up cmp1 nova-compute/);
  assert.is(await w.metric('masakari_return_to_service_total', { outcome: 'left_disabled' }), 1);
});

test("return to service never undoes a person's maintenance, nor a recovery that did not finish", async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], returnToService: { policy: 'Restore' } });
  const rec = await w.recovered('cmp1');
  w.repo.setNotificationState(rec.notification_uuid, { status: 'failed' });
  w.personMaintenance.add('cmp2');
  w.repo.setHostFlags(w.repo.getHostByName('cmp2')!.uuid, { on_maintenance: true });
  for (const h of ['cmp1', 'cmp2']) Object.assign(w.nova.service(h), { state: 'up', forced_down: false });
  w.alive.add('cmp1').add('cmp2');
  await w.lookFor(60);
  assert.is(w.nova.count('updateService'), 0);
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance);
  assert.ok(w.repo.getHostByName('cmp2')!.on_maintenance);
});

test('return to service waits while another recovery of the segment runs, without touching Nova', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2', 'cmp3'], returnToService: { policy: 'Restore' } });
  await w.recovered('cmp1');
  Object.assign(w.nova.service('cmp1'), { state: 'up', forced_down: false });
  const other = await fileHostFailure(w.service, 'cmp2', w.clock.now());
  w.repo.setNotificationState(other.notification_uuid, { status: 'running' });
  w.alive.add('cmp1');
  assert.equal(
    (await w.lookFor(20)).flatMap((l) => l.returned),
    [],
  );
  assert.is(w.nova.count('updateService'), 0);
  assert.ok(w.events.some((e) => e.reason === 'ReturnToServiceDeferred'));
  w.repo.setNotificationState(other.notification_uuid, { status: 'finished' });
  assert.equal((await w.look()).returned, ['cmp1']);
});

test('a blind look returns nothing to service either', async () => {
  const w = await world({ hosts: ['cmp1', 'cmp2'], returnToService: { policy: 'Restore' } });
  await w.recovered('cmp1');
  Object.assign(w.nova.service('cmp1'), { state: 'up', forced_down: false });
  w.alive.add('cmp1');
  await w.lookFor(10);
  w.nova.failNext('listServices', new NovaError(500, 'boom'));
  assert.equal(await w.look(), { look: 'blind', raised: [], returned: [] });
  assert.ok(w.repo.getHostByName('cmp1')!.on_maintenance);
});

test.run();
