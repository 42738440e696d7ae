// Freshness and replay end to end (docs/operations.md, Safety model): the
// process's API (sealing its notifications), store reconcilers and engine on
// one real API server, with the Nova simulator. A notification whose
// generated_time is past notifications_expired_interval ends `failed` without
// a Nova call, whether it came through REST or kubectl; a notification saved
// with `kubectl get -o yaml`, purged and applied again is not admitted by its
// old seal and goes through the kubectl-path intake, which refuses it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { callApi } from '../../support/api-call.ts';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { createComponent as createApi } from '../../../src/api/component.ts';
import type { ApiComponent } from '../../../src/api/component.ts';
import type { Component } from '../../../src/app/component.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION, LABELS } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import type { Simulator } from '../../../tools/simulator/server.ts';
import {
  createAdmissionSeal,
  loadAdmissionSealKey,
  SEAL_WINDOW_BEFORE_S,
  withSealedNotifications,
} from '../../../src/store/admission/seal.ts';
import { REASONS, readyCondition } from '../../../src/domain/admitted.ts';
import { hostOnMaintenance } from '../../../src/domain/messages.ts';
import { eventually, fastConfig, HOST_DOWN, lastError } from './support.ts';
import { startComponent } from '../../../src/testing/component.ts';

interface Ctx {
  ns: TestNamespace;
  sim: Simulator;
  /** What kubectl sees: the API server's objects, no seal view. */
  raw: KubeClient;
  api: ApiComponent;
  engine: Component;
  stopping: AbortController;
}

const t = suite<Ctx>('freshness and replay', {} as Ctx);
const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });
const DAY_MS = 86_400_000;
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, '');

t.before(async (ctx) => {
  ctx.ns = await useNamespace('freshness');
  ctx.sim = await startSimulator({ hosts: ['compute-1', 'compute-2', 'compute-3'] });
  const nova = createNovaClient(ctx.sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 1 });
  ctx.raw = createKubeClient(ctx.ns.kc);
  ctx.stopping = new AbortController();
  const { namespace } = ctx.ns;
  const key = await loadAdmissionSealKey(ctx.raw, namespace, log, ctx.stopping.signal);
  assert.ok(key);
  const admissionSeal = createAdmissionSeal(key);
  const kube = withSealedNotifications(createKubeClient(ctx.ns.kc), admissionSeal, namespace);
  const config = fastConfig((c) => {
    c.DEFAULT.auth_strategy = 'noauth2';
    c.DEFAULT.wait_period_after_service_update = 1;
    c.DEFAULT.wait_period_after_evacuation = 1;
  });
  const common = { config, namespace, kube, nova, log, signal: ctx.stopping.signal };
  ctx.api = await startComponent(
    { ...common, metrics: new Registry(), identity: 'api-freshness', admissionSeal },
    (app) => createApi(app, { listen: { host: '127.0.0.1', port: 0 } }),
  );
  ctx.engine = await startComponent({ ...common, metrics: new Registry(), identity: 'engine-freshness' }, createEngine);
  await eventually(
    'engine ready',
    () => ctx.engine.ready(),
    (r) => r,
  );
  const seg = await callApi(ctx.api, 'POST', '/v1/segments', {
    segment: { name: 'seg-fresh', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(seg.status, 201);
  for (const name of ['compute-1', 'compute-2', 'compute-3']) {
    const host = await callApi(ctx.api, 'POST', `/v1/segments/${seg.json.segment.uuid}/hosts`, {
      host: { name, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    assert.is(host.status, 201);
  }
});

t.after(async (ctx) => {
  ctx.stopping?.abort();
  await ctx.engine?.stop();
  await ctx.api?.stop();
  await ctx.sim?.stop();
  await ctx.ns?.cleanup();
});

/** Nova requests the simulator received since `from` (Keystone's are not Nova's). */
const novaCallsSince = (sim: Simulator, from: number) =>
  sim.state.requestLog.slice(from).filter((r) => r.path.startsWith('/compute'));

const byUuid = async (raw: KubeClient, namespace: string, uuid: string): Promise<Notification | undefined> =>
  (await raw.list<Notification>(RESOURCES.notifications, namespace, { labelSelector: `${LABELS.uuid}=${uuid}` }))
    .items[0];

t(
  'freshness: a host failure generated 31 days ago POSTed through REST is answered 202, then ends failed with the reason and no Nova call',
  async (ctx) => {
    const { api, sim, raw, ns } = ctx;
    sim.state.addServer({ name: 'vm-old-1', host: 'compute-1', metadata: { HA_Enabled: 'True' } });
    sim.state.failHost('compute-1');
    const from = sim.state.requestLog.length;
    const generated = isoSeconds(Date.now() - 31 * DAY_MS);
    const posted = await callApi(api, 'POST', '/v1/notifications', {
      notification: { type: 'COMPUTE_HOST', hostname: 'compute-1', generated_time: generated, payload: HOST_DOWN },
    });
    assert.is(posted.status, 202);
    assert.is(posted.json.notification.status, 'new');
    const uuid: string = posted.json.notification.notification_uuid;
    const shown = await eventually(
      'the notification failed',
      async () => (await callApi(api, 'GET', `/v1/notifications/${uuid}`)).json.notification,
      (n) => n?.status === 'failed',
    );
    assert.is(shown.notification_uuid, uuid);
    const stored = await byUuid(raw, ns.namespace, uuid);
    assert.is(
      lastError(stored!),
      `Notification ${uuid} is expired: its generated_time ${generated} is older than notifications_expired_interval ` +
        '(86400 s); it is not run.',
    );
    assert.is(stored?.status?.runs, undefined, 'never run');
    assert.equal(novaCallsSince(sim, from), []);
  },
);

t(
  'freshness: the same notification created with kubectl (no seal) is admitted by the kubectl path, then ends failed with the reason and no Nova call',
  async (ctx) => {
    const { sim, raw, ns } = ctx;
    sim.state.failHost('compute-2');
    const from = sim.state.requestLog.length;
    const generated = isoSeconds(Date.now() - 31 * DAY_MS);
    await raw.create<Notification>(RESOURCES.notifications, ns.namespace, {
      apiVersion: API_VERSION,
      kind: 'Notification',
      metadata: { name: 'kubectl-old' },
      spec: { type: 'COMPUTE_HOST', hostname: 'compute-2', generatedTime: generated, payload: HOST_DOWN },
    });
    const n = await eventually(
      'the notification failed',
      () => raw.get<Notification>(RESOURCES.notifications, ns.namespace, 'kubectl-old'),
      (x) => x.status?.phase === 'failed',
    );
    assert.match(lastError(n) ?? '', `is expired: its generated_time ${generated} is older than`);
    assert.is(n.status?.runs, undefined, 'never run');
    assert.equal(novaCallsSince(sim, from), []);
  },
);

t(
  'replay: a finished host failure saved as kubectl get -o yaml, purged and created again is refused by the kubectl-path intake (host on maintenance) and makes no Nova call',
  async (ctx) => {
    const { api, sim, raw, ns } = ctx;
    // The hosts the earlier tests failed take the evacuated servers.
    sim.state.recoverHost('compute-1');
    sim.state.recoverHost('compute-2');
    sim.state.addServer({ name: 'vm-first', host: 'compute-3', metadata: { HA_Enabled: 'True' } });
    sim.state.failHost('compute-3');
    const posted = await callApi(api, 'POST', '/v1/notifications', {
      notification: {
        type: 'COMPUTE_HOST',
        hostname: 'compute-3',
        generated_time: isoSeconds(Date.now()),
        payload: HOST_DOWN,
      },
    });
    assert.is(posted.status, 202);
    const uuid: string = posted.json.notification.notification_uuid;
    const finished = await eventually(
      'the first recovery finished',
      () => byUuid(raw, ns.namespace, uuid),
      (n) => n?.status?.phase === 'finished',
      60_000,
    );

    // kubectl get -o yaml, then what `kubectl create -f` sends: no uid, resourceVersion, creationTimestamp or status.
    const saved = structuredClone(finished!);
    const name = saved.metadata.name!;
    delete saved.status;
    for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation'] as const) {
      delete saved.metadata[field];
    }
    // Retention or a purge deletes a notification days after it ended; a copy created again inside the seal's
    // window (seconds after the original's create) would still be admitted by it (docs/operations.md, Replay).
    const outsideWindow =
      Date.parse(finished!.metadata.creationTimestamp!) + (SEAL_WINDOW_BEFORE_S + 2) * 1000 - Date.now();
    if (outsideWindow > 0) await new Promise((r) => setTimeout(r, outsideWindow));
    await raw.delete(RESOURCES.notifications, ns.namespace, name);
    await eventually(
      'the notification purged',
      () =>
        raw.get(RESOURCES.notifications, ns.namespace, name).then(
          () => false,
          (e: unknown) => isNotFound(e),
        ),
      (gone) => gone,
    );
    // Servers placed on the host since: the replay must not evacuate them.
    sim.state.recoverHost('compute-3');
    sim.state.addServer({ name: 'vm-new-1', host: 'compute-3', metadata: { HA_Enabled: 'True' } });
    sim.state.addServer({ name: 'vm-new-2', host: 'compute-3', metadata: { HA_Enabled: 'True' } });
    const from = sim.state.requestLog.length;
    await raw.create<Notification>(RESOURCES.notifications, ns.namespace, saved);

    const refused = await eventually(
      'the replay refused',
      () => raw.get<Notification>(RESOURCES.notifications, ns.namespace, name),
      (n) => readyCondition(n)?.reason === REASONS.hostOnMaintenance,
      20_000,
    );
    assert.is(readyCondition(refused)?.message, hostOnMaintenance('compute-3', 'COMPUTE_HOST'));
    // The engine has had every chance: the reconciler's grace is 5 s and the engine looks at once.
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await raw.get<Notification>(RESOURCES.notifications, ns.namespace, name);
    assert.is(after.status?.phase, undefined, 'never picked up by the engine');
    assert.is(after.status?.uuid, undefined, 'never admitted');
    assert.equal(novaCallsSince(sim, from), []);
    const listed = await callApi(api, 'GET', '/v1/notifications');
    assert.not.ok(
      (listed.json.notifications as Array<{ notification_uuid: string }>).some((x) => x.notification_uuid === uuid),
      'the API shows the purged notification no more',
    );
  },
);

t.run();
