// The return to service by a deposed detection replica, on the real control
// plane with the engine and the Nova simulator: the detection component runs
// on a manager whose Lease hold the test lets lapse (a replica stalled past
// its renew deadline, still in its term). Its looks go on, but the
// os-services PUT that would clear forced_down and enable the service is
// never sent (src/runtime/lease-fence.ts, Manager.holdsLease) and the host
// stays on maintenance; once the hold is good again the host is returned.
import { eventually } from '../../support/eventually.ts';

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import { componentEnv, detectionLooks, managerWithHold, notificationsOf } from '../../support/component-env.ts';
import type { ComponentEnv } from '../../support/component-env.ts';
import type { Component } from '../../../src/app/component.ts';
import { createComponent as createDetection } from '../../../src/detection/component.ts';
import { effectiveFlags } from '../../../src/domain/host-flags.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { HaHost, Notification } from '../../../src/model/types.ts';
import type { Manager } from '../../../src/runtime/manager.ts';
import { startComponent } from '../../../src/testing/component.ts';

const HOSTS = ['dep-1', 'dep-2', 'dep-3'];

interface Env extends ComponentEnv {
  engine: Component;
  detection: Component;
  manager: Manager;
  metrics: Registry;
  /** The detection replica's hold on its Lease: false is a stall past the renew deadline. */
  hold: { good: boolean };
}

const test = suite<{ env?: Env }>('return to service by a deposed detection replica', {});

test.before(async (ctx) => {
  const env = await componentEnv({
    namespace: 'deposed-return',
    segment: 'deposed',
    hosts: HOSTS,
    servers: [{ name: 'vm-a', host: 'dep-1', metadata: { HA_Enabled: 'True' } }],
    segmentSpec: { detection: { enabled: true, gracePeriodSeconds: 2 }, returnToService: { policy: 'Restore' } },
  });
  const { manager, hold } = managerWithHold(env, 'test-detection');
  const metrics = new Registry();
  const engine = await startComponent(env.appContext('test-engine'), createEngine);
  const detection = await createDetection(
    { ...env.appContext('test-detection', metrics), manager },
    { pollIntervalMs: 300 },
  );
  await manager.start();
  ctx.env = { ...env, engine, detection, manager, metrics, hold };
});

test.after(async ({ env }) => {
  if (!env) return;
  await env.detection.stop();
  await env.manager.stop();
  await env.close(env.engine);
});

const hostObject = async (env: Env, name: string) =>
  (await env.kube.list<HaHost>(RESOURCES.hosts, env.ns.namespace)).items.find((h) => h.spec.name === name)!;

test('a replica whose detection Lease lapsed sends no os-services PUT; the host is returned once the Lease is held again', async ({
  env,
}) => {
  const e = env!;
  e.sim.state.failHost('dep-1', { forcedDown: true });
  const [n] = await eventually(
    'a notification for dep-1',
    () => notificationsOf(e, 'dep-1'),
    (l) => l.length > 0,
  );
  await eventually(
    'the recovery to finish',
    () => e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, n!.metadata.name!),
    (x) => x.status?.phase === 'finished',
    60_000,
  );
  assert.ok(effectiveFlags(await hostObject(e, 'dep-1')).onMaintenance);
  const svc = e.sim.state.serviceOf('dep-1')!;
  assert.ok(svc.forcedDown && svc.disabled);

  // Stalled past its renew deadline: still in its term, its looks go on; then the host comes back.
  e.hold.good = false;
  const puts = () =>
    e.sim.state.requestLog.filter((r) => r.method === 'PUT' && r.path.startsWith('/compute/v2.1/os-services')).length;
  const before = puts();
  await new Promise((r) => setTimeout(r, 1_100));
  e.sim.state.recoverHost('dep-1');
  await detectionLooks(e.metrics, 5);
  assert.is(puts(), before, 'no os-services PUT from a replica that no longer holds its Lease');
  assert.ok(svc.forcedDown && svc.disabled);
  assert.ok(effectiveFlags(await hostObject(e, 'dep-1')).onMaintenance);

  // Held again (renewed, or the next leader's look): returned at nova-compute's next report, a second
  // later (Nova's timestamps have whole seconds).
  e.hold.good = true;
  await new Promise((r) => setTimeout(r, 1_100));
  e.sim.state.recoverHost('dep-1');
  await eventually(
    'dep-1 returned to service',
    async () => effectiveFlags(await hostObject(e, 'dep-1')).onMaintenance,
    (m) => !m,
  );
  assert.is(svc.forcedDown, false);
  assert.is(svc.disabled, false);
});

test.run();
