// Instance and process failures on real Nova 34, through the `openstack` CLI:
// a VM notification makes the engine stop and start the server (Masakari's
// instance failure flow) and it ends ACTIVE on its host; a process
// notification disables the host's nova-compute service with Masakari's reason.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bootServer, getServer, waitServers } from '../../tools/openstack-cloud/servers.ts';
import {
  captureWorld,
  computeService,
  createSegment,
  notify,
  saveTranscript,
  waitNotification,
  withScenario,
} from './support/scenario.ts';

const test = suite('instance and process failure on real Nova');

test('a VM notification restarts the server: Nova saw os-stop then os-start from us, and it ends ACTIVE in place', async () => {
  await withScenario('openstack-instance', async (e) => {
    const [, id] = await Promise.all([
      createSegment(e, 'auto', [{ name: 'cpu2' }]),
      bootServer(e.cloud.admin, e.flavor, { name: 'instance-failure', host: 'cpu2' }),
    ]);
    await waitServers(e.cloud.admin, [id], 'ACTIVE');
    const world = await captureWorld(e, null, [id]);
    const since = (await e.cloud.exchanges(0)).last;
    const created = await notify(e, 'VM', 'cpu2', {
      event: 'LIFECYCLE',
      instance_uuid: id,
      vir_domain_event: 'STOPPED_FAILED',
    });
    const done = await waitNotification(e, created.notification_uuid);
    await saveTranscript(e, 'instance-failure', world, since);
    assert.is(done.status, 'finished', JSON.stringify(done));
    const s = await getServer(e.cloud.admin, id);
    assert.is(s.status, 'ACTIVE');
    assert.is(s['OS-EXT-SRV-ATTR:host'], 'cpu2');
    assert.is(s['OS-EXT-STS:task_state'] ?? null, null);
    assert.not.ok(s.locked);
    const actions = (await e.cloud.exchanges(since)).exchanges
      .filter((x) => x.method === 'POST' && x.url.endsWith(`/servers/${id}/action`) && x.status === 202)
      .map((x) => Object.keys(x.requestBody as object)[0]);
    assert.ok(actions.includes('os-stop') && actions.includes('os-start'), `actions seen: ${actions.join(', ')}`);
    assert.ok(actions.indexOf('os-stop') < actions.lastIndexOf('os-start'));
  });
});

test('a process notification disables the nova-compute service with Masakari reason', async () => {
  await withScenario('openstack-process', async (e) => {
    await createSegment(e, 'auto', [{ name: 'cpu3' }]);
    const world = await captureWorld(e, null, []);
    const since = (await e.cloud.exchanges(0)).last;
    // exactly "nova-compute": Masakari (and we) skip the recovery of any other process name, a path included
    const created = await notify(e, 'PROCESS', 'cpu3', { event: 'STOPPED', process_name: 'nova-compute' });
    const done = await waitNotification(e, created.notification_uuid);
    await saveTranscript(e, 'process-failure', world, since);
    assert.is(done.status, 'finished', JSON.stringify(done));
    const svc = await computeService(e, 'cpu3');
    assert.is(svc.status, 'disabled');
    assert.is(svc.disabled_reason, 'Masakari detected process failed.');
  });
});

test.run();
