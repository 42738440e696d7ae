// Built-in detection and the return to service on the real control plane, with
// the engine and detection components and the Nova simulator: a compute dies
// and, with nobody POSTing anything, the detection raises the notification and
// the engine recovers the host; the host comes back (its nova-compute reports
// again while still forced down) and the segment's Restore policy returns it
// to service, and LeaveDisabled leaves the next one out of service with an
// Event; a Nova that cannot be read raises nothing and says so, and a
// host down during that blind spell is raised only after a fresh grace period.
import { eventually } from '../../support/eventually.ts';

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { componentEnv, detectionLooks, metricValue, notificationsOf } from '../../support/component-env.ts';
import type { ComponentEnv } from '../../support/component-env.ts';
import type { Component } from '../../../src/app/component.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import { createComponent as createDetection } from '../../../src/detection/component.ts';
import type { DetectionComponent } from '../../../src/detection/component.ts';
import { effectiveFlags } from '../../../src/domain/host-flags.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { FailoverSegment, HaHost, Notification } from '../../../src/model/types.ts';
import { startComponent } from '../../../src/testing/component.ts';

const HOSTS = ['det-1', 'det-2', 'det-3', 'det-4', 'det-5'];
const GRACE_SECONDS = 2;

interface Env extends ComponentEnv {
  engine: Component;
  detection: DetectionComponent;
  metrics: Registry;
}

const test = suite<{ env?: Env }>('built-in detection and return to service', {});

const hostObject = async (env: Env, name: string) =>
  (await env.kube.list<HaHost>(RESOURCES.hosts, env.ns.namespace)).items.find((h) => h.spec.name === name)!;

const metric = (env: Env, name: string, labels: Record<string, string> = {}) => metricValue(env.metrics, name, labels);
const looks = (env: Env, n: number) => detectionLooks(env.metrics, n);

test.before(async (ctx) => {
  const env = await componentEnv({
    namespace: 'detection',
    segment: 'detected',
    hosts: HOSTS,
    servers: [
      { name: 'vm-a', host: 'det-1', metadata: { HA_Enabled: 'True' } },
      { name: 'vm-b', host: 'det-1', metadata: { HA_Enabled: 'True' } },
    ],
    segmentSpec: {
      detection: { enabled: true, gracePeriodSeconds: GRACE_SECONDS },
      returnToService: { policy: 'Restore' },
    },
  });
  const metrics = new Registry();
  const engine = await startComponent(env.appContext('test-engine'), createEngine);
  const detection = await startComponent(env.appContext('test-detection', metrics), (app) =>
    createDetection(app, { pollIntervalMs: 300 }),
  );
  ctx.env = { ...env, engine, detection, metrics };
  await eventually(
    'the detection leader',
    async () => detection.isLeading(),
    (l) => l,
  );
});

test.after(async ({ env }) => {
  await env?.close(env.detection, env.engine);
});

test('a REST update of the segment keeps spec.detection and spec.returnToService', async ({ env }) => {
  const e = env!;
  const seg = e.store.listSegments().find((s) => s.name === 'detected')!;
  await e.store.updateSegment(seg.uuid, { description: 'watched by the operator' });
  const obj = await e.kube.get<FailoverSegment>(RESOURCES.segments, e.ns.namespace, e.segmentName);
  assert.is(obj.spec.description, 'watched by the operator');
  assert.equal(obj.spec.detection, { enabled: true, gracePeriodSeconds: GRACE_SECONDS });
  assert.equal(obj.spec.returnToService, { policy: 'Restore' });
});

test('a dead compute is raised with no POST and recovered; back again, Restore returns it to service', async ({
  env,
}) => {
  const e = env!;
  // Dead, and forced down by the fencing step as it leaves the service: Nova shows it down whatever
  // nova-compute does. Forced down now, not after the recovery: a write to the service row after the
  // recovery finished would read as a report of a nova-compute that is back (src/detection/heartbeat.ts).
  e.sim.state.failHost('det-1', { forcedDown: true });
  const n = await eventually(
    'a notification for det-1',
    () => notificationsOf(e, 'det-1'),
    (ns) => ns.length > 0,
    30_000,
  );
  assert.is(n.length, 1);
  assert.is(n[0]!.spec.type, 'COMPUTE_HOST');
  assert.equal(n[0]!.spec.payload, { event: 'STOPPED', cluster_status: 'OFFLINE', host_status: 'NORMAL' });
  assert.is(await metric(e, 'masakari_detection_notifications_total', { outcome: 'raised' }), 1);
  const finished = await eventually(
    'the recovery to finish',
    () => e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, n[0]!.metadata.name!),
    (x) => x.status?.phase === 'finished' || x.status?.phase === 'failed',
    60_000,
  );
  assert.is(finished.status?.phase, 'finished', JSON.stringify(finished.status?.message));
  for (const s of [...e.sim.state.servers.values()]) assert.is.not(s.host, 'det-1');
  assert.ok(effectiveFlags(await hostObject(e, 'det-1')).onMaintenance);
  assert.ok(e.sim.state.serviceOf('det-1')!.disabled);

  await looks(e, 3);
  assert.ok(effectiveFlags(await hostObject(e, 'det-1')).onMaintenance, 'still dead: not returned');
  assert.is(await notificationsOf(e, 'det-1').then((x) => x.length), 1, 'on maintenance: not raised again');

  // Powered on: nova-compute reports again (its row's updated_at moves) while still forced down; a second
  // after the recovery's last write, as Nova's timestamps have whole seconds.
  await new Promise((r) => setTimeout(r, 1_100));
  e.sim.state.recoverHost('det-1');
  await eventually(
    'det-1 returned to service',
    async () => effectiveFlags(await hostObject(e, 'det-1')).onMaintenance,
    (m) => !m,
    30_000,
  );
  const svc = e.sim.state.serviceOf('det-1')!;
  assert.is(svc.forcedDown, false);
  assert.is(svc.disabled, false);
  assert.ok(e.sim.state.isUp(svc));
  assert.is(await metric(e, 'masakari_return_to_service_total', { outcome: 'restored' }), 1);
  // Watched again, and up: nothing more is raised.
  await looks(e, 3);
  assert.is(await notificationsOf(e, 'det-1').then((x) => x.length), 1);
});

test('LeaveDisabled: a recovered host that is back stays out of service, with an Event that says so', async ({
  env,
}) => {
  const e = env!;
  await e.kube.mergePatch(RESOURCES.segments, e.ns.namespace, e.segmentName, {
    spec: { returnToService: { policy: 'LeaveDisabled' } },
  });
  e.sim.state.failHost('det-3');
  const [n] = await eventually(
    'a notification for det-3',
    () => notificationsOf(e, 'det-3'),
    (ns) => ns.length > 0,
    30_000,
  );
  await eventually(
    'the recovery of det-3 to finish',
    () => e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, n!.metadata.name!),
    (x) => x.status?.phase === 'finished',
    60_000,
  );
  e.sim.state.recoverHost('det-3');
  const host = await hostObject(e, 'det-3');
  const event = await eventually(
    'the HostLeftDisabled Event',
    async () =>
      (
        await e.kube.list<{ reason?: string; note?: string; regarding?: { name?: string } }>(
          RESOURCES.events,
          e.ns.namespace,
        )
      ).items.find((ev) => ev.reason === 'HostLeftDisabled' && ev.regarding?.name === host.metadata.name),
    (ev) => ev !== undefined,
    30_000,
  );
  assert.match(event!.note ?? '', 'openstack compute service set --enable --up det-3 nova-compute');
  await looks(e, 3);
  assert.ok(effectiveFlags(await hostObject(e, 'det-3')).onMaintenance);
  assert.ok(e.sim.state.serviceOf('det-3')!.disabled);
  await e.kube.mergePatch(RESOURCES.segments, e.ns.namespace, e.segmentName, {
    spec: { returnToService: { policy: 'Restore' } },
  });
});

test('Nova unreachable: nothing is raised and the gauge says so; a host down meanwhile gets a fresh grace period', async ({
  env,
}) => {
  const e = env!;
  e.sim.state.faults.push({ method: 'GET', path: '/compute/v2.1/os-services', count: 100_000, kind: 503 });
  await eventually(
    'the observation gauge at 0',
    () => metric(e, 'masakari_detection_observation_healthy'),
    (v) => v === 0,
    30_000,
  );
  e.sim.state.failHost('det-2');
  await new Promise((r) => setTimeout(r, (GRACE_SECONDS + 2) * 1000));
  assert.equal(await notificationsOf(e, 'det-2'), [], 'nothing raised while blind');
  assert.ok(((await metric(e, 'masakari_detection_polls_total', { result: 'nova_unreachable' })) ?? 0) > 0);

  e.sim.state.faults = [];
  const restoredAt = Date.now();
  const raised = await eventually(
    'det-2 raised after a fresh grace period',
    () => notificationsOf(e, 'det-2'),
    (ns) => ns.length > 0,
    30_000,
  );
  assert.ok(Date.now() - restoredAt >= GRACE_SECONDS * 1000, 'not before a whole grace period after seeing again');
  assert.is(raised.length, 1);
  assert.is(await metric(e, 'masakari_detection_observation_healthy'), 1);
});

test.run();
