// Detection alone, no monitor, on real Nova 34 with emulated BMCs linked to
// the computes (tools/openstack-cloud/bmc/): a segment of cpu1..cpu3 with
// spec.detection on, cpu1 with spec.fencing at its BMC. cpu1's nova-compute
// is SIGKILLed while its BMC keeps reporting power On, and nobody POSTs
// anything. The operator must raise the notification itself, power cpu1 off
// at the BMC and see it Off, force the compute service down, and evacuate;
// the recording proxy in front of nova-api shows no evacuate before the BMC
// reported Off. Then cpu1 is powered on again at its BMC, and the segment's
// spec.returnToService decides: Restore puts it back in service, LeaveDisabled
// leaves it disabled with an Event. Once with the Redfish driver
// (sushy-emulator) and Restore, once with IPMI (ipmi_sim) and LeaveDisabled.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BmcKind } from '../../tools/openstack-cloud/bmc/emulated-bmcs.ts';
import { bootServer, waitServers } from '../../tools/openstack-cloud/servers.ts';
import {
  bmcSecret,
  DETECTION,
  eventsFor,
  evacuates,
  fencingFor,
  forcedDowns,
  haHost,
  hostUuid,
  notificationCr,
  notificationsOf,
  patchHaHost,
  patchSegment,
  powerOf,
  waitFor,
} from './support/bmc.ts';
import { computeService, createSegment, facade, servers, waitNotification, withScenario } from './support/scenario.ts';

const test = suite('detection, BMC fencing and return to service on real Nova');

const FAILED = 'cpu1';
const GRACE_S = 10;

async function scenario(kind: BmcKind, policy: 'Restore' | 'LeaveDisabled'): Promise<void> {
  await withScenario(
    `openstack-detect-${kind}`,
    async (e) => {
      const bmcs = await e.cloud.bmcs();
      const segment = await createSegment(e, 'auto', [{ name: 'cpu1' }, { name: 'cpu2' }, { name: 'cpu3' }]);
      await bmcSecret(e, 'bmc-cpu1', bmcs.username, bmcs.password);
      await patchHaHost(e, segment.id, FAILED, { fencing: fencingFor(bmcs, kind, FAILED, 'bmc-cpu1') });
      await patchSegment(e, segment.id, {
        detection: { enabled: true, gracePeriodSeconds: GRACE_S },
        returnToService: { policy },
      });
      const ids = await Promise.all(
        [0, 1].map((i) => bootServer(e.cloud.admin, e.flavor, { name: `detect-${kind}-${i}`, host: FAILED })),
      );
      await waitServers(e.cloud.admin, ids, 'ACTIVE');
      const failedUuid = await hostUuid(e, segment.id, FAILED);
      assert.is((await notificationsOf(e, failedUuid)).length, 0);

      const novaSince = (await e.cloud.exchanges(0)).last;
      const powerSince = (await e.cloud.powerEvents(0)).last;
      const death = Date.now();
      // the host "dies" as a hung or crashed hypervisor does: nova-compute gone, the BMC still says On
      await e.cloud.killCompute(FAILED);

      // every HA server ACTIVE elsewhere: the end of the outage for its users
      const allActiveElsewhere = waitFor(
        'every server ACTIVE on another host',
        async () => {
          const list = await servers(e, ids);
          return list.every((s) => s.status === 'ACTIVE' && s['OS-EXT-SRV-ATTR:host'] !== FAILED)
            ? Date.now()
            : undefined;
        },
        300_000,
      );
      const raised = await waitFor('a notification raised by detection', async () => {
        const list = await notificationsOf(e, failedUuid);
        return list[0];
      });
      assert.is(raised.type, 'COMPUTE_HOST');
      const done = await waitNotification(e, raised.notification_uuid);
      assert.is(done.status, 'finished', JSON.stringify(done));
      const activeAt = await allActiveElsewhere;
      assert.is((await notificationsOf(e, failedUuid)).length, 1, 'one notification for one failure');

      // the proof, at the BMC and on the Notification
      const power = powerOf((await e.cloud.powerEvents(powerSince)).events, FAILED, kind);
      const off = power.find((p) => p.power === 'Off');
      assert.ok(off, `the ${kind} BMC of ${FAILED} was powered off: ${JSON.stringify(power)}`);
      assert.is(off.compute, 'was stopped', 'nova-compute was already dead when the power went');
      const cr = await notificationCr(e, raised.notification_uuid);
      const fencing = cr.status?.fencing;
      assert.ok(fencing, `status.fencing: ${JSON.stringify(cr.status)}`);
      assert.is(fencing.driver, kind);
      assert.is(fencing.powerState, 'Off');
      assert.ok(
        Date.parse(fencing.confirmedAt) >= Date.parse(off.at),
        `confirmed ${fencing.confirmedAt}, Off ${off.at}`,
      );

      // what reached Nova: forced_down and every evacuate after the BMC reported Off
      const { exchanges } = await e.cloud.exchanges(novaSince);
      const moves = evacuates(exchanges);
      assert.is(moves.length, ids.length, `evacuates: ${moves.map((x) => x.url).join(', ')}`);
      for (const m of moves) {
        assert.ok(
          Date.parse(m.at) > Date.parse(off.at),
          `evacuate at ${m.at} before the BMC reported Off at ${off.at}`,
        );
      }
      const forced = forcedDowns(exchanges);
      assert.ok(forced.length >= 1, 'the compute service was forced down');
      const firstMove = Math.min(...moves.map((m) => Date.parse(m.at)));
      assert.ok(
        forced.some((f) => Date.parse(f.at) > Date.parse(off.at) && Date.parse(f.at) < firstMove),
        `forced_down after the fence and before the first evacuate: ${forced.map((f) => f.at).join(', ')}`,
      );
      const svc = await computeService(e, FAILED);
      assert.is(svc.forced_down, true);
      assert.is(svc.status, 'disabled');

      // REST created_at is Masakari's UTC time without a zone
      const created = Date.parse(
        /Z|[+-]\d\d:\d\d$/.test(raised.created_at) ? raised.created_at : `${raised.created_at}Z`,
      );
      process.stdout.write(
        `\n[openstack-detect-${kind}] death → every HA server ACTIVE elsewhere ${((activeAt - death) / 1000).toFixed(1)} s: ` +
          `detection ${((created - death) / 1000).toFixed(1)} s, ` +
          `fencing ${((Date.parse(fencing.confirmedAt) - created) / 1000).toFixed(1)} s, ` +
          `evacuation ${((activeAt - Date.parse(fencing.confirmedAt)) / 1000).toFixed(1)} s\n`,
      );

      // back: a person (or automation) powers the host on at its BMC; nova-compute starts and reports
      await e.cloud.bmcPower(kind, FAILED, 'on');
      if (policy === 'Restore') {
        await waitFor(
          'the host back in service',
          async () => {
            const s = await computeService(e, FAILED);
            const { hosts } = (await facade(e, 'GET', `/segments/${segment.id}/hosts`)) as {
              hosts: { name: string; on_maintenance: boolean }[];
            };
            const onMaintenance = hosts.find((h) => h.name === FAILED)?.on_maintenance;
            return s.state === 'up' && s.status === 'enabled' && !s.forced_down && onMaintenance === false
              ? true
              : undefined;
          },
          180_000,
        );
      } else {
        const host = await haHost(e, segment.id, FAILED);
        const events = await waitFor(
          'an Event saying the host is left disabled',
          async () => {
            const text = await eventsFor(e, 'hahost', host.metadata.name ?? '');
            return text.includes('HostLeftDisabled') ? text : undefined;
          },
          180_000,
        );
        assert.ok(events.includes('HostLeftDisabled'), events);
        const s = await computeService(e, FAILED);
        assert.is(s.status, 'disabled', 'LeaveDisabled: the service stays disabled');
        const { hosts } = (await facade(e, 'GET', `/segments/${segment.id}/hosts`)) as {
          hosts: { name: string; on_maintenance: boolean }[];
        };
        assert.is(hosts.find((h) => h.name === FAILED)?.on_maintenance, true, 'LeaveDisabled: still on maintenance');
      }
    },
    DETECTION,
  );
}

test('Redfish: detected, fenced at the BMC, forced down, evacuated; back in service with Restore', async () => {
  await scenario('redfish', 'Restore');
});

test('IPMI: detected, fenced at the BMC, forced down, evacuated; left disabled with LeaveDisabled', async () => {
  await scenario('ipmi', 'LeaveDisabled');
});

test.run();
