// When NodeHealthCheck deletes a MasakariRemediation (its Node is healthy
// again), the remediator undoes what the remediation caused by the segment's
// returnToService policy: on the real control plane, with the engine, the
// remediator and the Nova simulator, a host whose recovery finished, forced
// down by the remediation, comes back in service once the CR is deleted.
import { eventually } from '../../support/eventually.ts';

import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { fastConfig } from '../engine/support.ts';
import type { Component } from '../../../src/app/component.ts';
import { HaService } from '../../../src/domain/ha-service.ts';
import { effectiveFlags } from '../../../src/domain/host-flags.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { REMEDIATION_RESOURCES, RESOURCES } from '../../../src/k8s/resources.ts';
import type { MasakariRemediation, NodeLike } from '../../../src/model/remediation-types.ts';
import type { HaHost, Notification } from '../../../src/model/types.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import type { HttpNovaClient } from '../../../src/openstack/index.ts';
import { createComponent as createRemediation } from '../../../src/remediation/component.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import type { Simulator } from '../../../tools/simulator/server.ts';
import { standaloneStore } from '../../../src/testing/store.ts';
import type { CrRepositoryHandle } from '../../../src/store/index.ts';
import { startComponent } from '../../../src/testing/component.ts';
import type { ContextWithoutManager } from '../../../src/testing/component.ts';

const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });
const NODE = `rtn-${randomBytes(3).toString('hex')}`;

interface Env {
  ns: TestNamespace;
  kube: KubeClient;
  sim: Simulator;
  nova: HttpNovaClient;
  store: CrRepositoryHandle;
  engine: Component;
  /** Started once the finished remediation exists, as after a remediator restart: it never raced its making. */
  remediation?: Component;
  appContext: (identity: string) => ContextWithoutManager;
  stop: AbortController;
}

const test = suite<{ env?: Env }>('a deleted MasakariRemediation returns its host to service', {});

test.before(async (ctx) => {
  const ns = await useNamespace('remediation-return');
  const kube = createKubeClient(ns.kc);
  const sim = await startSimulator({
    hosts: [NODE, `${NODE}-spare`],
    servers: [{ name: 'vm-a', host: NODE, metadata: { HA_Enabled: 'True' } }],
  });
  const nova = createNovaClient(sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 1 });
  const config = fastConfig();
  const store = standaloneStore({ kube, namespace: ns.namespace, config, log });
  await store.start();
  const segment = await store.createSegment({
    name: 'returning',
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  for (const name of [NODE, `${NODE}-spare`]) {
    await store.createHost(segment.uuid, {
      name,
      type: 'COMPUTE',
      control_attributes: 'SSH',
      reserved: false,
      on_maintenance: false,
    });
  }
  await kube.mergePatch(RESOURCES.segments, ns.namespace, segment.k8sName, {
    spec: { returnToService: { policy: 'Restore' } },
  });
  await eventually(
    'hosts admitted',
    async () => store.listHosts().length,
    (n) => n === 2,
  );
  const stop = new AbortController();
  const appContext = (identity: string) => ({
    config,
    namespace: ns.namespace,
    kube,
    nova,
    log: log.child({ identity }),
    metrics: new Registry(),
    identity,
    signal: stop.signal,
  });
  const engine = await startComponent(appContext('test-engine'), createEngine);
  ctx.env = { ns, kube, sim, nova, store, engine, appContext, stop };
});

test.after(async ({ env }) => {
  if (!env) return;
  env.stop.abort();
  await env.remediation?.stop();
  await env.engine.stop();
  await env.store.stop();
  await env.nova.session.close();
  env.sim.state.clearTimers();
  await env.sim.stop();
  await env.kube.delete(RESOURCES.nodes, undefined, NODE).catch(() => undefined);
  await env.ns.cleanup();
});

test('Restore: deleting the remediation of a recovered, healthy host clears forced_down, disabled and on_maintenance', async ({
  env,
}) => {
  const e = env!;
  // What a remediation leaves: the host fenced and forced down, its notification's recovery finished.
  e.sim.state.failHost(NODE, { forcedDown: true });
  const fencedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const service = new HaService(e.store, { exists: async () => true }, fastConfig().DEFAULT);
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
  e.remediation = await startComponent(e.appContext('test-remediation'), (app) =>
    createRemediation(app, { followIntervalMs: 300 }),
  );
  await e.kube.delete(REMEDIATION_RESOURCES.remediations, e.ns.namespace, NODE);
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
