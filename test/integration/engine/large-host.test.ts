// A host with 1,000 VMs: the recovery finishes, the Notification stays under
// its byte budget at every write (its history goes to journal pages), and
// the REST facade still answers everything Masakari would: every vmove
// through GET /v1/notifications/{id}/vmoves (paged) and GET .../vmoves/{id},
// every progress line through GET /v1/notifications/{id} at 1.1. Real API
// server, engine and API components in this process, Nova simulator over
// HTTP with instant evacuations.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createComponent as createApiComponent } from '../../../src/api/component.ts';
import type { ApiComponent } from '../../../src/api/component.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { Doc } from '../../support/api-call.ts';
import { LABELS } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import { STATUS_BUDGET } from '../../../src/engine/status/budget.ts';
import { standaloneStore } from '../../../src/testing/store.ts';
import type { CrRepositoryHandle } from '../../../src/store/index.ts';
import type { ConfigMap } from '../../../src/store/configmap.ts';
import { ROLES } from '../../../src/store/configmap.ts';
import { engineEnv, eventually, fastConfig, HOST_DOWN, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';
import { startComponent } from '../../../src/testing/component.ts';

const VMS = 1_000;
/** etcd refuses requests over 1.5 MiB; the engine must stay far below. */
const OBJECT_LIMIT = 1024 * 1024;

const large = suite('a 1,000-VM host recovery');
let env: EngineEnv;
let api: ApiComponent;
let repo: CrRepositoryHandle;
const watching = new AbortController();
const largest = { notification: 0, page: 0, pages: 0 };

large.before(async () => {
  env = await engineEnv('engine-large', ['src-big', 'dst-big-1', 'dst-big-2']);
  const config = fastConfig((c) => {
    // More evacuations in flight keep the test short; the journal sees the same number of writes.
    c.DEFAULT.host_failure_recovery_threads = 32;
    c.DEFAULT.auth_strategy = 'noauth2';
  });
  // The stored Notification, sampled all along (every few hundred ms), and every journal page as written.
  void (async () => {
    while (!watching.signal.aborted) {
      const list = await env.kube.list<Notification>(RESOURCES.notifications, env.namespace).catch(() => undefined);
      for (const n of list?.items ?? []) {
        largest.notification = Math.max(largest.notification, Buffer.byteLength(JSON.stringify(n)));
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  void env.kube
    .watch<ConfigMap>(
      RESOURCES.configMaps,
      env.namespace,
      { labelSelector: `${LABELS.role}=${ROLES.journalPage}` },
      (e) => {
        if (e.type !== 'ADDED' && e.type !== 'MODIFIED') return;
        largest.page = Math.max(largest.page, Buffer.byteLength(JSON.stringify(e.object)));
        largest.pages++;
      },
      watching.signal,
    )
    .catch(() => undefined);
  // Admitted the way the store does it, before the API component's own store reconcilers start.
  const seg = await env.segment('seg-big');
  for (const h of ['src-big', 'dst-big-1', 'dst-big-2']) await env.host(h, seg);
  await env.startEngine('engine-large-1', { config });
  const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });
  repo = standaloneStore({
    kube: env.kube,
    namespace: env.namespace,
    config,
    log,
    metrics: new Registry(),
  });
  api = await startComponent(
    {
      config,
      namespace: env.namespace,
      kube: env.kube,
      log,
      metrics: new Registry(),
      identity: 'engine-large-api',
      signal: new AbortController().signal,
    },
    (app) => createApiComponent(app, { listen: { host: '127.0.0.1', port: 0 }, repository: repo, webhook: false }),
  );
});

large.after(async () => {
  watching.abort();
  await api?.stop();
  await env?.close();
});

async function get(path: string, version = '1.3'): Promise<{ status: number; json: Doc }> {
  const res = await fetch(`http://127.0.0.1:${api.address().port}${path}`, {
    headers: { 'OpenStack-API-Version': `instance-ha ${version}`, 'X-Auth-Token': 'admin:admin' },
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, json: await res.json() };
}

large('finishes with every vmove and progress line served, and no write over the object limit', async () => {
  const s = env.sim.state;
  for (let i = 0; i < VMS; i++) s.addServer({ name: `vm-${i}`, host: 'src-big', metadata: { HA_Enabled: 'True' } });
  s.failHost('src-big');
  const name = await env.notify('COMPUTE_HOST', 'src-big', HOST_DOWN);
  const n = await waitPhase(env, name, 'finished', 600_000);
  const uuid = n.status?.uuid ?? '';

  assert.ok(
    [...s.servers.values()].every((v) => v.host !== 'src-big'),
    'every server left the failed host',
  );
  assert.ok(largest.notification > 0 && largest.page > 0, JSON.stringify(largest));
  // The budget is checked on the object about to be written; the API server's managedFields (one entry per
  // status field, so per effect record) come on top, hence the margin.
  assert.ok(
    largest.notification <= 2 * STATUS_BUDGET.maxObjectBytes,
    `the Notification stayed within its byte budget: largest ${largest.notification} bytes`,
  );
  assert.ok(largest.page < OBJECT_LIMIT, `largest journal page ${largest.page} bytes`);

  // The facade serves what Masakari would, once its caches hold the last writes.
  const moves = await eventually(
    'every vmove listed',
    async () => {
      const all: Doc[] = [];
      let marker = '';
      for (;;) {
        const page = await get(`/v1/notifications/${uuid}/vmoves?limit=100${marker ? `&marker=${marker}` : ''}`);
        assert.is(page.status, 200, JSON.stringify(page.json));
        all.push(...page.json.vmoves);
        if (page.json.vmoves.length < 100) return all;
        marker = String(page.json.vmoves.at(-1).id); // Masakari's marker is the vmove id
      }
    },
    // the notification and its pages reach the facade on two watches: wait until both are current
    (all) => all.length === VMS && all.every((m) => m.status === 'succeeded'),
    60_000,
  );
  assert.is(new Set(moves.map((m) => m.instance_uuid)).size, VMS);
  const elsewhere = moves.filter((m) => !m.dest_host?.startsWith('dst-big'));
  assert.equal(elsewhere, [], 'every move landed on a healthy host');
  const failedOnly = await get(`/v1/notifications/${uuid}/vmoves?status=failed`);
  assert.equal(failedOnly.json.vmoves, []);
  const oldest = moves.reduce((a, b) => (a.id < b.id ? a : b));
  const one = await get(`/v1/notifications/${uuid}/vmoves/${oldest.uuid}`);
  assert.is(one.status, 200);
  assert.is(one.json.vmove.instance_uuid, oldest.instance_uuid);

  const shown = await get(`/v1/notifications/${uuid}`, '1.1');
  const evacuate = shown.json.notification.recovery_workflow_details.find(
    (t: Doc) => t.name === 'EvacuateInstancesTask',
  );
  const started = evacuate.progress_details.filter((d: Doc) => d.message.startsWith('Evacuation of instance started'));
  assert.is(started.length, VMS);
  assert.is(evacuate.progress_details.at(-1).message, 'Evacuation process completed!');

  // Deleting the Notification takes its journal pages with it (the store's sweep, no garbage collector here).
  const pages = () =>
    env.kube.list<ConfigMap>(RESOURCES.configMaps, env.namespace, {
      labelSelector: `${LABELS.role}=${ROLES.journalPage},${LABELS.notificationUuid}=${uuid}`,
    });
  assert.ok((await pages()).items.length > 1);
  await env.kube.delete(RESOURCES.notifications, env.namespace, name);
  await eventually(
    'the deletion reached the cache',
    async () => repo.getNotification(uuid),
    (x) => x === undefined,
    10_000,
  );
  await repo.sweepOrphans({ pageGraceMs: 0 });
  assert.is((await pages()).items.length, 0);
  assert.is((await get(`/v1/notifications/${uuid}/vmoves`)).status, 404);
});

large.run();
