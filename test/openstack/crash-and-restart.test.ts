// Crash safety on real Nova 34: the engine is SIGKILLed while it evacuates a
// failed host, a new one starts on the same facade and finishes the job, and
// Nova's records show exactly one evacuation migration per server. Then the
// failed compute comes back: Nova completes the evacuations (the source's
// ComputeManager._destroy_evacuated_instances marks them "completed"), the
// servers stay where they were moved, and our records still say the host is
// on maintenance and the notification finished.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bootFleet,
  computeService,
  createSegment,
  evacuations,
  facade,
  failHost,
  HOST_DOWN_PAYLOAD,
  notify,
  servers,
  startEngineProcess,
  waitNotification,
  withScenario,
} from './support/scenario.ts';

const test = suite('crash safety and the failed compute coming back, on real Nova');

const FAILED = 'cpu2';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('engine SIGKILLed mid-evacuation: a restarted engine finishes, one evacuation per server; the compute restarts cleanly', async () => {
  await withScenario('openstack-crash', async (e) => {
    const [segment, fleet] = await Promise.all([
      createSegment(e, 'auto', [{ name: FAILED }, { name: 'cpu1' }, { name: 'cpu3' }]),
      bootFleet(e, FAILED),
    ]);
    const moving = [...fleet.expected.keys()];
    await failHost(e, FAILED);
    const since = (await e.cloud.exchanges(0)).last;
    const created = await notify(e, 'COMPUTE_HOST', FAILED, HOST_DOWN_PAYLOAD);

    // kill the engine as soon as Nova has accepted its first evacuation, before it has done them all
    const deadline = Date.now() + 180_000;
    let evacuated = 0;
    while (evacuated === 0) {
      if (Date.now() > deadline) throw new Error('the engine sent no evacuation within 180 s');
      const { exchanges } = await e.cloud.exchanges(since);
      evacuated = exchanges.filter(
        (x) => x.method === 'POST' && x.status === 200 && JSON.stringify(x.requestBody ?? '').includes('"evacuate"'),
      ).length;
      if (!evacuated) await sleep(200);
    }
    assert.ok(evacuated < moving.length, `the engine had already sent all ${evacuated} evacuations before the kill`);
    const apiPort = Number(new URL(e.operator.apiUrl).port);
    await e.operator.kill();
    e.operator = await startEngineProcess(e.cloud, e.ns, apiPort);

    const done = await waitNotification(e, created.notification_uuid);
    assert.is(done.status, 'finished', JSON.stringify(done));
    for (const id of moving) {
      const moves = await evacuations(e, id);
      assert.is(moves.length, 1, `server ${id}: ${moves.length} evacuation migrations`);
    }
    const after = await servers(e, moving);
    for (const s of after) {
      assert.is.not(s['OS-EXT-SRV-ATTR:host'], FAILED, `${s.name} still on ${FAILED}`);
      assert.is(s.status, fleet.expected.get(s.id));
      assert.is(s.locked ?? false, s.id === fleet.ownerLocked, `${s.name} lock`);
    }

    // the failed compute comes back
    await e.cloud.startCompute(FAILED);
    const svc = await computeService(e, FAILED);
    assert.is(svc.state, 'up');
    assert.is(svc.status, 'disabled', 'Nova keeps the service disabled until an operator enables it');
    for (const id of moving) {
      const deadline2 = Date.now() + 60_000;
      let status = (await evacuations(e, id))[0]?.status;
      while (status !== 'completed' && Date.now() < deadline2) {
        await sleep(1_000);
        status = (await evacuations(e, id))[0]?.status;
      }
      assert.is(status, 'completed', `evacuation of ${id} once the source is back`);
    }
    const still = await servers(e, moving);
    for (const s of still) {
      assert.is.not(s['OS-EXT-SRV-ATTR:host'], FAILED, `${s.name} went back to ${FAILED}`);
      assert.is(s.status, fleet.expected.get(s.id));
    }
    const { hosts } = (await facade(e, 'GET', `/segments/${segment.id}/hosts`)) as {
      hosts: { name: string; on_maintenance: boolean }[];
    };
    const host = hosts.find((h) => h.name === FAILED);
    assert.is(host?.on_maintenance, true, 'the failed host stays on maintenance until an operator clears it');
    const { notification } = (await facade(e, 'GET', `/notifications/${created.notification_uuid}`)) as {
      notification: { status: string };
    };
    assert.is(notification.status, 'finished');
  });
});

test.run();
