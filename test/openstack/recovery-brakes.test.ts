// Brakes on mass failure on real Nova 34: a segment of the cloud's three
// computes with spec.recoveryLimits.maxUnhealthyHosts 1 (set with kubectl, as
// the Masakari API has no such field). Two of its hosts really die at once
// (their nova-compute SIGKILLed) and both are notified together through the
// `openstack` CLI: one is recovered onto the third host, the other is held
// `new` (the Masakari API shows it as Masakari would; the Notification's
// condition, an Event and the metric say why). Clearing the recovered host's
// maintenance, as an operator does once it is repaired, lets the held one
// start and recover too: with kubectl, since Masakari's API refuses to update
// a host of a segment that has a notification `new`.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LABELS } from '../../src/model/constants.ts';
import type { FailoverSegment, Notification } from '../../src/model/types.ts';
import { bootServer, waitServers } from '../../tools/openstack-cloud/servers.ts';
import {
  createSegment,
  facade,
  failHost,
  HOST_DOWN_PAYLOAD,
  notify,
  openstack,
  waitNotification,
  withScenario,
  type Env,
  type NotificationView,
} from './support/scenario.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const test = suite('brakes on mass failure on real Nova');

async function kubectlJson<T>(e: Env, args: string[]): Promise<T> {
  const r = await e.ns.kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function notificationCr(e: Env, uuid: string): Promise<Notification> {
  const list = await kubectlJson<{ items: Notification[] }>(e, [
    'get',
    'notifications',
    '-l',
    `${LABELS.uuid}=${uuid}`,
  ]);
  const n = list.items[0];
  if (!n) throw new Error(`no Notification with uuid ${uuid}`);
  return n;
}

async function status(e: Env, uuid: string): Promise<string> {
  const { notification } = (await facade(e, 'GET', `/notifications/${uuid}`)) as { notification: NotificationView };
  return notification.status;
}

async function heldGauge(e: Env): Promise<string[]> {
  const text = await (await fetch(`${e.operator.metricsUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('masakari_recovery_held_notifications{'));
}

test('maxUnhealthyHosts 1, two hosts die at once: one recovered, one held until the first is back', async () => {
  await withScenario('openstack-brakes', async (e) => {
    const segment = await createSegment(e, 'auto', [{ name: 'cpu1' }, { name: 'cpu2' }, { name: 'cpu3' }]);
    const segs = await kubectlJson<{ items: FailoverSegment[] }>(e, [
      'get',
      'failoversegments',
      '-l',
      `${LABELS.uuid}=${segment.id}`,
    ]);
    const segName = segs.items[0]?.metadata.name ?? '';
    const patched = await e.ns.kubectl([
      'patch',
      'failoversegment',
      segName,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { recoveryLimits: { maxUnhealthyHosts: 1 } } }),
    ]);
    assert.is(patched.code, 0, patched.stderr);
    const [vm1, vm2] = await Promise.all([
      bootServer(e.cloud.admin, e.flavor, { name: 'brake-vm-1', host: 'cpu1' }),
      bootServer(e.cloud.admin, e.flavor, { name: 'brake-vm-2', host: 'cpu2' }),
    ]);
    await waitServers(e.cloud.admin, [vm1, vm2], 'ACTIVE');
    await Promise.all([failHost(e, 'cpu1'), failHost(e, 'cpu2')]);
    const [a, b] = await Promise.all([
      notify(e, 'COMPUTE_HOST', 'cpu1', HOST_DOWN_PAYLOAD),
      notify(e, 'COMPUTE_HOST', 'cpu2', HOST_DOWN_PAYLOAD),
    ]);
    const uuids = [a.notification_uuid, b.notification_uuid];

    // One of the two runs to its end; the other stays new, held.
    const deadline = Date.now() + 300_000;
    let statuses: string[] = [];
    for (;;) {
      statuses = await Promise.all(uuids.map((u) => status(e, u)));
      if (statuses.some((s) => ['finished', 'error', 'failed'].includes(s))) break;
      if (Date.now() > deadline) throw new Error(`no recovery ended: ${statuses.join(', ')}`);
      await sleep(1_000);
    }
    const first = statuses.indexOf('finished');
    assert.ok(first >= 0, `one recovery finished: ${statuses.join(', ')}`);
    const heldUuid = uuids[1 - first] ?? '';
    const [firstHost, heldHost] = first === 0 ? ['cpu1', 'cpu2'] : ['cpu2', 'cpu1'];
    const heldView = (await openstack(e, ['notification', 'show', heldUuid])) as NotificationView & {
      message?: unknown;
      updated_at?: unknown;
    };
    assert.is(heldView.status, 'new');
    assert.is(heldView.updated_at ?? null, null, 'the Masakari view is that of a new notification');

    const cr = await notificationCr(e, heldUuid);
    const held = cr.status?.conditions?.find((c) => c.type === 'RecoveryHeld');
    assert.is(held?.status, 'True');
    assert.is(held?.reason, 'SegmentUnhealthyLimit');
    assert.ok(held?.message.includes('maxUnhealthyHosts 1'), held?.message);
    let events = '';
    for (let i = 0; i < 30 && !events.includes('RecoveryHeld'); i++) {
      if (i > 0) await sleep(1_000);
      events = (await e.ns.kubectl(['events', '--for', `notification/${cr.metadata.name}`])).stdout;
    }
    assert.ok(events.includes('RecoveryHeld'), events);
    const gauge = await heldGauge(e);
    assert.ok(
      gauge.some(
        (l) => l.includes(`segment_uuid="${segment.id}"`) && l.includes('SegmentUnhealthyLimit') && / 1$/.test(l),
      ),
      gauge.join('\n'),
    );

    // The recovered host is back. Masakari's API refuses to update a host of a segment with an unfinished
    // notification (the held one is `new`), as Masakari does; the kubectl path clears the latch.
    const { hosts } = (await facade(e, 'GET', `/segments/${segment.id}/hosts`)) as {
      hosts: { name: string; uuid: string; on_maintenance: boolean }[];
    };
    const back = hosts.find((h) => h.name === firstHost);
    assert.is(back?.on_maintenance, true, `${firstHost} is on maintenance after its recovery`);
    const refused = await openstack(e, [
      'segment',
      'host',
      'update',
      segment.id,
      back?.uuid ?? '',
      '--on_maintenance',
      'False',
    ]).catch((err: Error) => err);
    assert.ok(refused instanceof Error && refused.message.includes('in-use to process notifications'), String(refused));
    const hahosts = await kubectlJson<{ items: { metadata: { name: string } }[] }>(e, [
      'get',
      'hahosts',
      '-l',
      `${LABELS.uuid}=${back?.uuid ?? ''}`,
    ]);
    const cleared = await e.ns.kubectl([
      'patch',
      'hahost',
      hahosts.items[0]?.metadata.name ?? '',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"onMaintenance":false}}',
    ]);
    assert.is(cleared.code, 0, cleared.stderr);
    const done = await waitNotification(e, heldUuid);
    assert.is(done.status, 'finished', `the held recovery of ${heldHost} ended ${done.status}`);
    const after = await notificationCr(e, heldUuid);
    const released = after.status?.conditions?.find((c) => c.type === 'RecoveryHeld');
    assert.is(released?.status, 'False');
    assert.is(released?.reason, 'UnderLimit');
    for (const id of [vm1, vm2]) {
      const r = await e.cloud.admin('GET', `/servers/${id}`);
      const host = (r.body as { server: Record<string, string> }).server['OS-EXT-SRV-ATTR:host'];
      assert.is(host, 'cpu3', `server ${id} evacuated to the surviving host`);
    }
  });
});

test.run();
