// A fence that cannot be done never leads to an evacuation, on real Nova 34
// with emulated BMCs (tools/openstack-cloud/bmc/): cpu1 has spec.fencing at its
// Redfish BMC (sushy-emulator), its nova-compute really dies, and a
// COMPUTE_HOST notification is POSTed once Nova reports it down. With the BMC
// unreachable (the emulator stopped) or refusing (a wrong password in the
// Secret) no evacuate reaches Nova at all; the reason shows through kubectl
// (condition FencingVerified False, an Event) and through a REST GET
// (recovery_workflow_details, 1.1), and the metric the alert
// MasakariFencingFailed fires on is set. Once the BMC is back (the emulator
// started again, the Secret fixed) the recovery completes with nobody
// stepping in: the engine's retry fences and evacuates.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bootServer, waitServers } from '../../tools/openstack-cloud/servers.ts';
import {
  alertExpr,
  bmcSecret,
  eventsFor,
  evacuates,
  fencingFor,
  metricValue,
  notificationCr,
  patchHaHost,
  powerOf,
  waitFor,
} from './support/bmc.ts';
import {
  createSegment,
  facade,
  failHost,
  HOST_DOWN_PAYLOAD,
  notify,
  servers,
  waitNotification,
  withScenario,
  type Env,
} from './support/scenario.ts';

const test = suite('BMC fence failures on real Nova');

const FAILED = 'cpu1';
const HELD_METRIC = 'masakari_fencing_held_notifications';

async function scenario(
  name: string,
  breakBmc: (e: Env) => Promise<void>,
  fixBmc: (e: Env) => Promise<void>,
  reason: string,
): Promise<void> {
  await withScenario(`openstack-fence-${name}`, async (e) => {
    const bmcs = await e.cloud.bmcs();
    const segment = await createSegment(e, 'auto', [{ name: 'cpu1' }, { name: 'cpu2' }, { name: 'cpu3' }]);
    await bmcSecret(e, 'bmc-cpu1', bmcs.username, bmcs.password);
    await patchHaHost(e, segment.id, FAILED, { fencing: fencingFor(bmcs, 'redfish', FAILED, 'bmc-cpu1') });
    const ids = await Promise.all(
      [0, 1].map((i) => bootServer(e.cloud.admin, e.flavor, { name: `fence-${name}-${i}`, host: FAILED })),
    );
    await waitServers(e.cloud.admin, ids, 'ACTIVE');
    await failHost(e, FAILED);
    await breakBmc(e);

    const novaSince = (await e.cloud.exchanges(0)).last;
    const powerSince = (await e.cloud.powerEvents(0)).last;
    const created = await notify(e, 'COMPUTE_HOST', FAILED, HOST_DOWN_PAYLOAD);
    const uuid = created.notification_uuid;

    // held: the condition says why, through kubectl
    const condition = await waitFor('condition FencingVerified False', async () => {
      const cr = await notificationCr(e, uuid);
      const c = cr.status?.conditions?.find((x) => x.type === 'FencingVerified');
      return c?.status === 'False' ? c : undefined;
    });
    assert.is(condition.reason, reason, condition.message);
    const cr = await notificationCr(e, uuid);
    const events = await waitFor('Event FencingFailed', async () => {
      const text = await eventsFor(e, 'notification', cr.metadata.name ?? '');
      return text.includes('FencingFailed') ? text : undefined;
    });
    assert.ok(events.includes('FencingFailed'), events);
    // ... and through REST, in the progress details of microversion 1.1
    const { notification } = (await facade(e, 'GET', `/notifications/${uuid}`)) as {
      notification: { status: string; recovery_workflow_details?: unknown };
    };
    assert.ok(['new', 'running'].includes(notification.status), notification.status);
    const details = JSON.stringify(notification.recovery_workflow_details ?? []);
    assert.ok(details.includes(reason) || details.includes(condition.message.slice(0, 40)), details);
    // the alert's metric
    assert.ok(alertExpr('MasakariFencingFailed').includes(HELD_METRIC), alertExpr('MasakariFencingFailed'));
    assert.is(await metricValue(e, HELD_METRIC, { driver: 'redfish', reason }), 1);

    // a while later: still held, nothing evacuated
    await new Promise((r) => setTimeout(r, 10_000));
    assert.is(evacuates((await e.cloud.exchanges(novaSince)).exchanges).length, 0, 'no evacuate reached Nova');
    assert.is(powerOf((await e.cloud.powerEvents(powerSince)).events, FAILED, 'redfish').length, 0);

    // the BMC is back: the engine's own retry fences and recovers
    await fixBmc(e);
    const done = await waitNotification(e, uuid, 300_000);
    assert.is(done.status, 'finished', JSON.stringify(done));
    const off = powerOf((await e.cloud.powerEvents(powerSince)).events, FAILED, 'redfish').find(
      (p) => p.power === 'Off',
    );
    assert.ok(off, 'powered off at the BMC once it was back');
    const moves = evacuates((await e.cloud.exchanges(novaSince)).exchanges);
    assert.is(moves.length, ids.length);
    for (const m of moves) assert.ok(Date.parse(m.at) > Date.parse(off.at), `evacuate ${m.at} before Off ${off.at}`);
    for (const s of await servers(e, ids)) assert.is.not(s['OS-EXT-SRV-ATTR:host'], FAILED);
    assert.is((await metricValue(e, HELD_METRIC, { driver: 'redfish', reason })) ?? 0, 0, 'the alert clears');
  });
}

test('unreachable BMC (the emulator stopped): held, no evacuate; recovered once it is back', async () => {
  await scenario(
    'unreachable',
    async (e) => void (await e.cloud.bmcLife('redfish', 'stop')),
    async (e) => void (await e.cloud.bmcLife('redfish', 'start')),
    'BmcUnreachable',
  );
});

test('refusing BMC (a wrong password in the Secret): held, no evacuate; recovered once the Secret is fixed', async () => {
  await scenario(
    'refused',
    async (e) => bmcSecret(e, 'bmc-cpu1', (await e.cloud.bmcs()).username, 'not-the-password'),
    async (e) => {
      const bmcs = await e.cloud.bmcs();
      await bmcSecret(e, 'bmc-cpu1', bmcs.username, bmcs.password);
    },
    'BmcRefused',
  );
});

test.run();
