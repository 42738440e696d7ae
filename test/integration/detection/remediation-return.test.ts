// When NodeHealthCheck deletes a MasakariRemediation (its Node is healthy
// again), the remediator undoes what the remediation caused by the segment's
// returnToService policy: on the real control plane, with the engine, the
// remediator and the Nova simulator, a host whose recovery finished, forced
// down by the remediation, comes back in service once the CR is deleted; a
// remediator whose Lease lapsed sends nothing to Nova and keeps the finalizer
// for the Lease holder.
import { eventually } from '../../support/eventually.ts';

import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { componentEnv, managerWithHold } from '../../support/component-env.ts';
import type { ComponentEnv } from '../../support/component-env.ts';
import type { Component } from '../../../src/app/component.ts';
import { HaService } from '../../../src/domain/ha-service.ts';
import { effectiveFlags } from '../../../src/domain/host-flags.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import { REMEDIATION_RESOURCES, RESOURCES } from '../../../src/k8s/resources.ts';
import type { MasakariRemediation, NodeLike } from '../../../src/model/remediation-types.ts';
import type { HaHost, Notification } from '../../../src/model/types.ts';
import { createComponent as createRemediation } from '../../../src/remediation/component.ts';
import type { Manager } from '../../../src/runtime/manager.ts';
import { startComponent } from '../../../src/testing/component.ts';

const NODE = `rtn-${randomBytes(3).toString('hex')}`;

interface Env extends ComponentEnv {
  engine: Component;
  /** Started once the finished remediation exists, as after a remediator restart: it never raced its making. */
  remediation?: Component;
  /** The remediator's manager, whose Lease hold the test controls. */
  manager?: Manager;
}

const test = suite<{ env?: Env }>('a deleted MasakariRemediation returns its host to service', {});

test.before(async (ctx) => {
  const env = await componentEnv({
    namespace: 'remediation-return',
    segment: 'returning',
    hosts: [NODE, `${NODE}-spare`],
    servers: [{ name: 'vm-a', host: NODE, metadata: { HA_Enabled: 'True' } }],
    segmentSpec: { returnToService: { policy: 'Restore' } },
  });
  const engine = await startComponent(env.appContext('test-engine'), createEngine);
  ctx.env = { ...env, engine };
});

test.after(async ({ env }) => {
  if (!env) return;
  await env.kube.delete(RESOURCES.nodes, undefined, NODE).catch(() => undefined);
  await env.close(env.remediation, env.manager, env.engine);
});

test('Restore: deleting the remediation of a recovered, healthy host clears forced_down, disabled and on_maintenance', async ({
  env,
}) => {
  const e = env!;
  // What a remediation leaves: the host fenced and forced down, its notification's recovery finished.
  e.sim.state.failHost(NODE, { forcedDown: true });
  const fencedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const service = new HaService(e.store, { exists: async () => true }, e.config.DEFAULT);
  const filed = await service.createNotification({
    notification: {
      type: 'COMPUTE_HOST',
      hostname: NODE,
      generated_time: fencedAt,
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
    },
  });
  await eventually(
    'the recovery to finish',
    () => e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, filed.k8sName),
    (n) => n.status?.phase === 'finished' || n.status?.phase === 'failed',
    60_000,
  );
  const hostName = (await e.kube.list<HaHost>(RESOURCES.hosts, e.ns.namespace)).items.find((h) => h.spec.name === NODE)!
    .metadata.name!;
  const host = () => e.kube.get<HaHost>(RESOURCES.hosts, e.ns.namespace, hostName);
  assert.ok(effectiveFlags(await host()).onMaintenance);
  assert.ok(e.sim.state.serviceOf(NODE)!.disabled);

  // The machine is repaired: nova-compute runs (still forced down), the Node is Ready.
  e.sim.state.recoverHost(NODE);
  const node = await e.kube.create<NodeLike>(RESOURCES.nodes, undefined, { metadata: { name: NODE } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await e.kube.replaceStatus(RESOURCES.nodes, undefined, NODE, {
    ...node,
    status: {
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now, reason: 'KubeletReady', message: '' }],
    },
  });

  // The finished remediation NodeHealthCheck now deletes.
  const created = await e.kube.create<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, e.ns.namespace, {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'MasakariRemediation',
    metadata: { name: NODE, finalizers: ['masakari.openkeel.io/remediation'] },
    spec: { segmentNamespace: e.ns.namespace },
  });
  const condition = (type: string) => ({
    type,
    status: type === 'Succeeded' ? 'True' : 'False',
    reason: 'RemediationFinishedSuccessfully',
    message: 'done',
    lastTransitionTime: now,
  });
  await e.kube.replaceStatus(REMEDIATION_RESOURCES.remediations, e.ns.namespace, NODE, {
    ...created,
    status: {
      nodeName: NODE,
      hostName: NODE,
      fencedAt,
      startedAt: fencedAt,
      finishedAt: now,
      notificationName: filed.k8sName,
      notificationUuid: filed.notification_uuid,
      conditions: [condition('Succeeded'), condition('Processing')],
    },
  });
  // The remediator that sees the deletion first has let its Lease lapse (stalled past its renew deadline,
  // still in its term): it sends nothing to Nova and keeps the finalizer for the Lease holder.
  const { manager, hold } = managerWithHold(e, 'test-remediation');
  hold.good = false;
  e.manager = manager;
  e.remediation = await createRemediation(
    { ...e.appContext('test-remediation'), manager: e.manager },
    { followIntervalMs: 300 },
  );
  await e.manager.start();
  const puts = () =>
    e.sim.state.requestLog.filter((r) => r.method === 'PUT' && r.path.startsWith('/compute/v2.1/os-services')).length;
  const before = puts();
  await e.kube.delete(REMEDIATION_RESOURCES.remediations, e.ns.namespace, NODE);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.is(puts(), before, 'no os-services PUT from a remediator that no longer holds its Lease');
  const kept = await e.kube.get<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, e.ns.namespace, NODE);
  assert.ok(kept.metadata.finalizers?.includes('masakari.openkeel.io/remediation'), 'finalizer kept');
  assert.ok(effectiveFlags(await host()).onMaintenance);

  // Held again: the deletion is looked at again and the host returned.
  hold.good = true;
  await eventually(
    'the remediation gone',
    async () =>
      (await e.kube.list<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, e.ns.namespace)).items.length,
    (n) => n === 0,
    30_000,
  );
  assert.is(effectiveFlags(await host()).onMaintenance, false);
  const svc = e.sim.state.serviceOf(NODE)!;
  assert.is(svc.forcedDown, false);
  assert.is(svc.disabled, false);
  assert.ok(e.sim.state.isUp(svc));
  const events = await e.kube.list<{ reason?: string; note?: string }>(RESOURCES.events, e.ns.namespace);
  const deleted = events.items.find((ev) => ev.reason === 'RemediationDeleted');
  assert.match(
    deleted?.note ?? '',
    `host ${NODE} returned to service (forced_down cleared, nova-compute service enabled, on_maintenance cleared)`,
  );
});

test.run();
