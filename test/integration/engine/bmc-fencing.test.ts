// BMC fencing on a real API server: the REST facade (objects created through
// it, spec.fencing added with kubectl), the engine component, the Nova
// simulator and the simulator's fake Redfish BMC linked to it (power off =
// that host's nova-compute down). A BMC that refuses the credentials holds
// the notification new with nothing evacuated, visible through kubectl
// (condition, Event) and REST (recovery_workflow_details at 1.1) and in the
// metrics; once the credentials work the recovery completes by itself, with
// the power-off confirmed before the compute service is forced down and
// before any evacuate.
import http from 'node:http';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createComponent as createApi } from '../../../src/api/component.ts';
import type { ApiComponent } from '../../../src/api/component.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { CONDITIONS, LABELS } from '../../../src/model/constants.ts';
import { BMC_POWER_OFF_TASK } from '../../../src/model/recovery-tasks.ts';
import type { HaHost, HostFencing, Notification } from '../../../src/model/types.ts';
import { linkToNova, startFakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import type { FakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import { callApi } from '../../support/api-call.ts';
import type { Doc } from '../../support/api-call.ts';
import { eventually } from '../../support/eventually.ts';
import { engineEnv, fastConfig } from './support.ts';
import type { EngineEnv, RunningEngine } from './support.ts';
import { startComponent } from '../../../src/testing/component.ts';

const t = suite('BMC fencing before evacuation (engine, REST, fake Redfish BMC)');
let env: EngineEnv;
let api: ApiComponent;
let bmc: FakeRedfish;

t.before(async () => {
  env = await engineEnv('engine-bmc', ['bmc-1', 'spare-1']);
  bmc = await startFakeRedfish({ systems: ['bmc-1'], username: 'admin', password: 'right' });
  linkToNova(bmc, env.sim.state);
  const config = fastConfig();
  config.DEFAULT.auth_strategy = 'noauth2';
  api = await startComponent(
    {
      config,
      namespace: env.namespace,
      kube: env.kube,
      nova: env.nova,
      log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
      metrics: new Registry(),
      identity: 'api-bmc-test',
      signal: new AbortController().signal,
    },
    (app) => createApi(app, { listen: { host: '127.0.0.1', port: 0 }, webhook: false, tls: false }),
  );
});

t.after(async () => {
  await api?.stop();
  await bmc?.stop();
  await env?.close();
});

/** GET at a microversion (callApi sends none). */
function getAt(path: string, microversion: string): Promise<{ status: number; json: Doc }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: api.address().port,
        method: 'GET',
        path,
        headers: { 'OpenStack-API-Version': `instance-ha ${microversion}` },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const fencingCondition = (n: Notification) => n.status?.conditions?.find((c) => c.type === CONDITIONS.fencingVerified);

async function notificationByUuid(uuid: string): Promise<Notification> {
  const list = await env.kube.list<Notification>(RESOURCES.notifications, env.namespace);
  // A sealed notification carries its uuid in a label before its status is written.
  const n = list.items.find((x) => x.metadata.labels?.[LABELS.uuid] === uuid);
  if (!n) throw new Error(`no notification ${uuid}`);
  return n;
}

t('a refusing BMC holds the recovery, visibly; fixed, it fences, forces down and evacuates in that order', async () => {
  const seg = await callApi(api, 'POST', '/v1/segments', {
    segment: { name: 'seg-bmc', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(seg.status, 201, JSON.stringify(seg.json));
  for (const name of ['bmc-1', 'spare-1']) {
    const h = await callApi(api, 'POST', `/v1/segments/${seg.json.segment.uuid}/hosts`, {
      host: { name, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    assert.is(h.status, 201, JSON.stringify(h.json));
  }
  await env.kube.create(RESOURCES.secrets, env.namespace, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bmc-1-credentials' },
    stringData: { username: 'admin', password: 'right' },
  });
  // kubectl/GitOps adds the BMC; the REST API neither shows nor drops it.
  const hosts = await env.kube.list<HaHost>(RESOURCES.hosts, env.namespace);
  const hostObj = hosts.items.find((h) => h.spec.name === 'bmc-1')!;
  const fencing: HostFencing = {
    driver: 'redfish',
    address: bmc.url,
    systemId: 'bmc-1',
    credentialsSecretRef: { name: 'bmc-1-credentials' },
    timeoutSeconds: 2,
    powerOffTimeoutSeconds: 10,
  };
  await env.kube.mergePatch(RESOURCES.hosts, env.namespace, hostObj.metadata.name!, { spec: { fencing } });
  const put = await callApi(api, 'PUT', `/v1/segments/${seg.json.segment.uuid}/hosts/${hostObj.status!.uuid}`, {
    host: { type: 'COMPUTEA' },
  });
  assert.is(put.status, 200, JSON.stringify(put.json));
  assert.not.ok('fencing' in put.json.host);
  const afterPut = await env.kube.get<HaHost>(RESOURCES.hosts, env.namespace, hostObj.metadata.name!);
  assert.equal(afterPut.spec.fencing?.address, bmc.url, 'a REST PUT keeps spec.fencing');
  assert.is(afterPut.spec.fencing?.timeoutSeconds, 2);

  const server = env.sim.state.addServer({ name: 'vm-bmc', host: 'bmc-1', metadata: { HA_Enabled: 'True' } });
  // nova-compute dies while the host keeps its power: only the BMC can make it safe.
  env.sim.state.failHost('bmc-1');
  bmc.password = 'rotated-elsewhere';
  let evacuationsAtPowerOff: number | undefined;
  bmc.onPower((id, power) => {
    if (id === 'bmc-1' && power === 'Off')
      evacuationsAtPowerOff = env.sim.state.actionCounts.evacuate?.[server.id] ?? 0;
  });
  const engine: RunningEngine = await env.startEngine('engine-bmc-1');

  const posted = await callApi(api, 'POST', '/v1/notifications', {
    notification: {
      type: 'COMPUTE_HOST',
      hostname: 'bmc-1',
      generated_time: new Date().toISOString().replace(/\.\d+Z$/, ''),
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
    },
  });
  assert.is(posted.status, 202, JSON.stringify(posted.json));
  const uuid: string = posted.json.notification.notification_uuid;

  // kubectl view: held new, the reason in the condition and an Event.
  const held = await eventually(
    'FencingVerified=False BmcRefused',
    () => notificationByUuid(uuid),
    (n) => fencingCondition(n)?.reason === 'BmcRefused',
    30_000,
  );
  assert.is(held.status?.phase ?? 'new', 'new');
  assert.is(fencingCondition(held)?.status, 'False');
  assert.match(fencingCondition(held)!.message, 'answered HTTP 401');
  assert.is(held.status?.fencing, undefined);
  const events = await eventually(
    'a FencingFailed Event',
    async () =>
      (
        await env.kube.list<{ reason?: string; note?: string; regarding?: { name?: string } }>(
          RESOURCES.events,
          env.namespace,
        )
      ).items.filter((e) => e.regarding?.name === held.metadata.name && e.reason === 'FencingFailed'),
    (l) => l.length > 0,
  );
  assert.match(events[0]!.note!, 'check the credentials Secret');
  // REST view at 1.1: still new, the fence's attempts in recovery_workflow_details.
  const shown = await getAt(`/v1/notifications/${uuid}`, '1.1');
  assert.is(shown.status, 200);
  assert.is(shown.json.notification.status, 'new');
  const task = (shown.json.notification.recovery_workflow_details as Doc[]).find((x) => x.name === BMC_POWER_OFF_TASK);
  assert.ok(task, JSON.stringify(shown.json.notification.recovery_workflow_details));
  assert.is(task.state, 'RUNNING');
  assert.match(
    task.progress_details[0].message,
    /^Attempt 1: Fencing host bmc-1 through redfish .* failed \(refused\)/,
  );
  // At 1.0 nothing new shows: the Masakari shape.
  assert.not.ok('recovery_workflow_details' in (await getAt(`/v1/notifications/${uuid}`, '1.0')).json.notification);
  const gauge = await engine.metrics.getSingleMetricAsString('masakari_fencing_held_notifications');
  assert.match(gauge, 'masakari_fencing_held_notifications{driver="redfish",reason="BmcRefused"} 1');
  assert.is(env.sim.state.actionCounts.evacuate?.[server.id] ?? 0, 0, 'nothing evacuated');
  assert.is(env.sim.state.serviceOf('bmc-1')?.forcedDown ?? false, false, 'not forced down');

  // The credentials work again: the next attempt (backoff 5 s) fences and the recovery completes.
  bmc.password = 'right';
  const done = await eventually(
    'finished',
    () => notificationByUuid(uuid),
    (n) => n.status?.phase === 'finished',
    60_000,
  );
  assert.is(evacuationsAtPowerOff, 0, 'the host was off before any evacuate');
  assert.is(env.sim.state.actionCounts.evacuate?.[server.id], 1);
  assert.is(fencingCondition(done)?.status, 'True');
  assert.is(fencingCondition(done)?.reason, 'BmcPoweredOff');
  assert.is(done.status?.fencing?.driver, 'redfish');
  assert.is(done.status?.fencing?.powerState, 'Off');
  assert.ok(Date.parse(done.status!.fencing!.poweredOffAt) >= Date.parse(done.metadata.creationTimestamp!));
  assert.is(env.sim.state.serviceOf('bmc-1')?.forcedDown, true);
  const forceOff = bmc.log.find((r) => r.resetType === 'ForceOff' && r.status === 204)!;
  const forcedDown = env.sim.state.requestLog.find((r) => r.method === 'PUT' && r.path.includes('/os-services/'))!;
  assert.ok(forceOff && forcedDown, 'both calls seen');
  assert.ok(forceOff.at.getTime() <= Date.parse(forcedDown.at), 'fence, then force down');
  const final = await getAt(`/v1/notifications/${uuid}`, '1.1');
  const names = (final.json.notification.recovery_workflow_details as Doc[]).map((x) => x.name);
  assert.equal(names.slice(0, 2), [BMC_POWER_OFF_TASK, 'DisableComputeServiceTask']);
  const attempts = await engine.metrics.getSingleMetricAsString('masakari_fencing_attempts_total');
  assert.match(attempts, 'masakari_fencing_attempts_total{driver="redfish",result="refused"}');
  assert.match(attempts, 'masakari_fencing_attempts_total{driver="redfish",result="success"} 1');
});

t.run();
