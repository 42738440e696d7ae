// Health as GitOps tools compute it, with their own logic, on objects read
// back from the real API server (kubectl get -o json): Argo CD's Lua health
// checks from config/argocd/argocd-cm-health.yaml (Lua 5.1, as gopher-lua)
// and kstatus (Flux, cli-utils) through hack/kstatus. Objects in every state
// a platform engineer meets: an admitted segment and host, a segment the
// operator refuses, a notification new, running, finished and failed (driven
// by the real API facade and engine against the Nova simulator), and the
// MasakariRemediationTemplate, which has no status.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Component } from '../../../src/app/component.ts';
import { createComponent } from '../../../src/engine/component.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION, LABELS } from '../../../src/model/constants.ts';
import type { FailoverSegment, MasakariObject, Notification } from '../../../src/model/types.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import { startOpsServer } from '../../../src/ops/server.ts';
import { unregisterWebhookConfiguration } from '../../../src/webhook/index.ts';
import { fastConfig } from '../engine/support.ts';
import type { OperatorEnv } from '../webhook/support.ts';
import { eventually, operatorEnv } from '../webhook/support.ts';
import { argocdHealth, argocdHealthKeys, argocdScriptFor, kstatus } from './health-tools.ts';
import { startComponent } from '../../../src/testing/component.ts';

interface Ctx {
  env: OperatorEnv;
  engine?: { component: Component; stop: () => void; metrics: Registry };
  segmentUuid: string;
}
const t = suite<Ctx>('GitOps health: Argo CD Lua and kstatus on real objects', {} as Ctx);

t.before(async (ctx) => {
  ctx.env = await operatorEnv('gitops-health');
  const seg = await ctx.env.rest('POST', '/v1/segments', {
    segment: { name: 'health', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(seg.status, 201, JSON.stringify(seg.json));
  ctx.segmentUuid = seg.json.segment.uuid;
  for (const name of ['compute-1', 'compute-2', 'compute-3']) {
    const h = await ctx.env.rest('POST', `/v1/segments/${ctx.segmentUuid}/hosts`, {
      host: { name, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    assert.is(h.status, 201, JSON.stringify(h.json));
  }
});

t.after(async (ctx) => {
  ctx.env.sim.state.latencies.evacuate = 0;
  ctx.env.sim.state.faults = [];
  ctx.engine?.stop();
  await ctx.engine?.component.stop();
  await ctx.env?.close();
});

/** The object as a GitOps tool sees it: `kubectl get -o json`. */
async function readBack(env: OperatorEnv, resource: string, name: string): Promise<MasakariObject> {
  const r = await env.kubectl(['get', resource, name, '-o', 'json']);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as MasakariObject;
}

async function verdicts(obj: object & { kind: string }) {
  const [argo, ks] = await Promise.all([argocdHealth(obj), kstatus(obj)]);
  return { argo: argo?.status, ks: ks.status, detail: { argo, ks } };
}

function startEngine(ctx: Ctx): Promise<void> {
  const stopping = new AbortController();
  const metrics = new Registry();
  const nova = createNovaClient(ctx.env.sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 1 });
  return startComponent(
    {
      config: fastConfig(),
      namespace: ctx.env.ns.namespace,
      kube: ctx.env.kube,
      nova,
      log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
      metrics,
      identity: 'gitops-health-engine',
      signal: stopping.signal,
    },
    createComponent,
  ).then(async (component) => {
    ctx.engine = { component, stop: () => stopping.abort(), metrics };
    await eventually(
      'engine ready',
      () => component.ready(),
      (r) => r,
    );
  });
}

/** POST /v1/notifications; returns the Notification object's name once the REST admission is stored. */
async function notify(env: OperatorEnv, type: string, hostname: string, payload: object): Promise<string> {
  const r = await env.rest('POST', '/v1/notifications', {
    notification: { type, hostname, generated_time: new Date().toISOString().slice(0, 19), payload },
  });
  assert.is(r.status, 202, JSON.stringify(r.json));
  const uuid = r.json.notification.notification_uuid as string;
  const found = await eventually(
    `notification ${uuid} admitted`,
    () =>
      env.kube.list<Notification>(RESOURCES.notifications, env.ns.namespace, {
        labelSelector: `${LABELS.uuid}=${uuid}`,
      }),
    (l) => l.items.length === 1 && l.items[0]?.status?.uuid === uuid && !!l.items[0]?.status?.conditions?.length,
  );
  return found.items[0]!.metadata.name ?? '';
}

const phaseIs = (env: OperatorEnv, name: string, phase: string, timeoutMs = 60_000) =>
  eventually(
    `notification ${name} ${phase}`,
    () => env.kube.get<Notification>(RESOURCES.notifications, env.ns.namespace, name),
    (n) => n.status?.phase === phase,
    timeoutMs,
  );

t(
  'the argocd-cm snippet: one key per kind, none matching MasakariRemediationTemplate, accepted by kubectl',
  async ({ env }) => {
    const keys = Object.keys(argocdHealthKeys());
    assert.equal(keys.sort(), [
      'resource.customizations.health.masakari.openkeel.io_FailoverSegment',
      'resource.customizations.health.masakari.openkeel.io_HaHost',
      'resource.customizations.health.masakari.openkeel.io_MasakariRemediation',
      'resource.customizations.health.masakari.openkeel.io_Notification',
    ]);
    assert.is(argocdScriptFor('MasakariRemediationTemplate'), undefined);
    const r = await env.kubectl([
      'apply',
      '--dry-run=server',
      '-f',
      'config/argocd/argocd-cm-health.yaml',
      '-n',
      env.ns.namespace,
    ]);
    assert.is(r.code, 0, r.stderr);
  },
);

t('an admitted segment and host are Healthy (Argo CD) and Current (kstatus)', async ({ env }) => {
  const seg = (await env.kube.list<FailoverSegment>(RESOURCES.segments, env.ns.namespace)).items.find(
    (s) => s.spec.name === 'health',
  );
  for (const [resource, name] of [
    ['failoversegment', seg?.metadata.name ?? ''],
    ['hahost', (await env.kube.list<MasakariObject>(RESOURCES.hosts, env.ns.namespace)).items[0]?.metadata.name ?? ''],
  ] as const) {
    const v = await verdicts(await readBack(env, resource, name));
    assert.equal([v.argo, v.ks], ['Healthy', 'Current'], `${resource}/${name}: ${JSON.stringify(v.detail)}`);
  }
});

t('a segment the operator refuses (its name is taken) is Degraded (Argo CD) and Failed (kstatus)', async ({ env }) => {
  // The webhook would refuse it at the door; without the webhook (webhook.enabled=false,
  // or failurePolicy Ignore while it is down) the store reconciler refuses it instead.
  await unregisterWebhookConfiguration(env.kube, `masakari-${env.ns.namespace}`);
  const copy = {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name: 'health-copy' },
    spec: { name: 'health', recoveryMethod: 'auto', serviceType: 'COMPUTE' },
  };
  // the API server drops the webhook configuration asynchronously
  await eventually(
    'the copy created without the webhook',
    () =>
      env.kube.create(RESOURCES.segments, env.ns.namespace, copy).then(
        () => 'created',
        (e: Error) => (e.message.includes('already exists') && !e.message.includes('denied') ? 'created' : e.message),
      ),
    (r) => r === 'created',
  );
  const obj = await eventually(
    'the copy refused',
    () => readBack(env, 'failoversegment', 'health-copy'),
    (o) => !!o.status?.conditions?.some((c) => c.type === 'Stalled' && c.status === 'True'),
  );
  const v = await verdicts(obj);
  assert.equal([v.argo, v.ks], ['Degraded', 'Failed'], JSON.stringify(v.detail));
});

t('a notification is Progressing/InProgress while new, Healthy/Current once finished', async (ctx) => {
  const { env } = ctx;
  const name = await notify(env, 'PROCESS', 'compute-1', { event: 'STOPPED', process_name: 'nova-compute' });
  const fresh = (await readBack(env, 'notification', name)) as Notification;
  assert.is(fresh.status?.phase ?? 'new', 'new');
  let v = await verdicts(fresh);
  assert.equal([v.argo, v.ks], ['Progressing', 'InProgress'], `new: ${JSON.stringify(v.detail)}`);

  await startEngine(ctx);
  await phaseIs(env, name, 'finished');
  v = await verdicts(await readBack(env, 'notification', name));
  assert.equal([v.argo, v.ks], ['Healthy', 'Current'], `finished: ${JSON.stringify(v.detail)}`);
  const waited = await env.kubectl(['wait', '--for=condition=Ready', '--timeout=10s', `notification/${name}`]);
  assert.is(waited.code, 0, waited.stderr);
  // the specific event reasons, as docs/operations.md shows them with `kubectl events --for`
  await eventually(
    'RecoveryStarted, ServiceDisabled and RecoveryFinished events',
    () => env.kubectl(['events', '--for', `notification/${name}`]),
    (r) =>
      r.code === 0 && ['RecoveryStarted', 'ServiceDisabled', 'RecoveryFinished'].every((x) => r.stdout.includes(x)),
  );
});

t('a failed recovery is Degraded (Argo CD) and Failed (kstatus), and not Ready', async ({ env }) => {
  const server = env.sim.state.addServer({ name: 'vm-5xx', host: 'compute-3', metadata: { HA_Enabled: 'True' } });
  env.sim.state.faults.push({ method: 'GET', path: `/compute/v2.1/servers/${server.id}`, count: 1000, kind: 500 });
  const name = await notify(env, 'VM', 'compute-3', {
    event: 'LIFECYCLE',
    vir_domain_event: 'STOPPED_FAILED',
    instance_uuid: server.id,
  });
  await phaseIs(env, name, 'failed');
  env.sim.state.faults = [];
  const obj = await readBack(env, 'notification', name);
  const v = await verdicts(obj);
  assert.equal([v.argo, v.ks], ['Degraded', 'Failed'], JSON.stringify(v.detail));
  const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
  assert.is.not(ready?.status, 'True', 'a failed recovery must not report Ready=True');
  // still a Masakari notification: the API lists it with its status
  const listed = await env.rest('GET', `/v1/notifications/${obj.status?.uuid}`);
  assert.is(listed.json.notification?.status, 'failed', JSON.stringify(listed.json));
});

t('a running recovery is Progressing (Argo CD) and InProgress (kstatus)', async ({ env }) => {
  env.sim.state.addServer({ name: 'vm-slow', host: 'compute-2', metadata: { HA_Enabled: 'True' } });
  env.sim.state.latencies.evacuate = 120_000;
  env.sim.state.failHost('compute-2');
  const name = await notify(env, 'COMPUTE_HOST', 'compute-2', {
    event: 'STOPPED',
    host_status: 'NORMAL',
    cluster_status: 'OFFLINE',
  });
  await phaseIs(env, name, 'running');
  const v = await verdicts(await readBack(env, 'notification', name));
  assert.equal([v.argo, v.ks], ['Progressing', 'InProgress'], JSON.stringify(v.detail));
});

/** GET /metrics from an ops server serving `registry`, as Prometheus scrapes it. */
async function scrape(registry: Registry): Promise<string> {
  const ops = await startOpsServer({
    host: '127.0.0.1',
    port: 0,
    registry,
    readiness: { phase: () => 'running', components: () => [] },
    log: pino({ level: 'silent' }),
  });
  try {
    const res = await fetch(`http://127.0.0.1:${ops.address.port}/metrics`);
    assert.is(res.status, 200);
    return await res.text();
  } finally {
    await ops.close();
  }
}

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

t(
  'state metrics on /metrics: hosts by segment and flags, notifications by type and status, oldest running',
  async (ctx) => {
    const api = await scrape(ctx.env.metrics);
    const seg = ctx.segmentUuid;
    // the PROCESS and COMPUTE_HOST recoveries put compute-1 and compute-2 on maintenance
    assert.is(sample(api, `masakari_hosts{segment_uuid="${seg}",on_maintenance="true",reserved="false"}`), 2, api);
    assert.is(sample(api, `masakari_hosts{segment_uuid="${seg}",on_maintenance="false",reserved="false"}`), 1, api);
    assert.is(sample(api, 'masakari_notifications_stored{type="PROCESS",status="finished"}'), 1);
    assert.is(sample(api, 'masakari_notifications_stored{type="VM",status="failed"}'), 1);
    assert.is(sample(api, 'masakari_notifications_stored{type="COMPUTE_HOST",status="running"}'), 1);
    assert.is(sample(api, 'masakari_notifications_stored{type="VM",status="new"}'), 0, 'zeros are reported');
    const oldest = sample(api, 'masakari_notification_oldest_running_age_seconds');
    assert.ok(oldest !== undefined && oldest > 0 && oldest < 600, `oldest running age ${oldest}`);
    // work-queue metrics with client-go's names, from the store reconcilers and the engine
    for (const name of [
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_unfinished_work_seconds',
    ]) {
      assert.match(api, new RegExp(`^${name}\\{name="[^"]+"\\} `, 'm'), `${name} on the api's /metrics`);
    }
    const engine = await scrape(ctx.engine!.metrics);
    assert.match(engine, /^workqueue_longest_running_processor_seconds\{name="[^"]+"\} /m, engine.slice(0, 2000));
  },
);

t('MasakariRemediationTemplate: no Argo CD health check applies, kstatus says Current', async ({ env }) => {
  const r = await env.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: API_VERSION,
      kind: 'MasakariRemediationTemplate',
      metadata: { name: 'health-template' },
      spec: { template: { spec: {} } },
    }),
  );
  assert.is(r.code, 0, r.stderr);
  const obj = await readBack(env, 'masakariremediationtemplate', 'health-template');
  assert.is(await argocdHealth(obj), undefined);
  assert.is((await kstatus(obj)).status, 'Current');
});

t.run();
