// The REST facade over the real custom-resource store on a real API server:
// the component as main.ts starts it (noauth2, Nova faked), driven over HTTP.
// Pins what only the real store can show: ids and names across requests,
// atomic duplicate detection under concurrent POSTs, the in-use rule and the
// segment cascade.
import { callApi } from '../../support/api-call.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { createComponent } from '../../../src/api/component.ts';
import type { ApiComponent } from '../../../src/api/component.ts';
import { FakeNova } from '../../../src/testing/fake-nova.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { LABELS } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import { runPurgeCommand } from '../../../src/cli/purge/command.ts';
import { eventually } from '../../support/eventually.ts';
import { startComponent } from '../../../src/testing/component.ts';

/** Nova as far as the facade uses it: the nova-compute services. */
const fakeNova = new FakeNova();
for (const host of ['compute-1', 'compute-2']) fakeNova.addHost(host);

interface Ctx {
  ns: TestNamespace;
  api: ApiComponent;
}

const call = callApi;

const facade = suite<Ctx>('facade over the CR store', {} as Ctx);

facade.before(async (ctx) => {
  ctx.ns = await useNamespace('api-facade');
  const config = loadConfig({ env: {} }).config;
  config.DEFAULT.auth_strategy = 'noauth2';
  ctx.api = await startComponent(
    {
      config,
      namespace: ctx.ns.namespace,
      kube: createKubeClient(ctx.ns.kc),
      nova: fakeNova,
      log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
      metrics: new Registry(),
      identity: 'api-facade-test',
      signal: new AbortController().signal,
    },
    (app) => createComponent(app, { listen: { host: '127.0.0.1', port: 0 } }),
  );
});

facade.after(async (ctx) => {
  await ctx.api?.stop();
  await ctx.ns?.cleanup();
});

const notification = (hostname: string, time: string) => ({
  notification: {
    type: 'COMPUTE_HOST',
    hostname,
    generated_time: time,
    payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
  },
});

facade('segment, host and notification round trip with Masakari shapes', async ({ api }) => {
  const seg = await call(api, 'POST', '/v1/segments', {
    segment: { name: 'seg-it', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(seg.status, 201);
  assert.match(seg.json.segment.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000$/);
  const sid = seg.json.segment.uuid;
  assert.is((await call(api, 'GET', `/v1/segments/${sid}`)).json.segment.id, seg.json.segment.id);

  const ghost = await call(api, 'POST', `/v1/segments/${sid}/hosts`, {
    host: { name: 'ghost', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  assert.is(ghost.status, 400);
  const host = await call(api, 'POST', `/v1/segments/${sid}/hosts`, {
    host: { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  assert.is(host.status, 201);
  assert.is(host.json.host.failover_segment.uuid, sid);

  const n = await call(api, 'POST', '/v1/notifications', notification('compute-1', '2026-01-01T00:00:00'));
  assert.is(n.status, 202);
  assert.is(n.json.notification.status, 'new');
  const shown = await call(api, 'GET', `/v1/notifications/${n.json.notification.notification_uuid}`);
  assert.is(shown.status, 200);
  assert.is(shown.json.notification.generated_time, '2026-01-01T00:00:00.000000');

  const dup = await call(api, 'POST', '/v1/notifications', notification('compute-1', '2026-01-01T00:01:00'));
  assert.is(dup.status, 409);
  assert.is(
    dup.json.conflictingRequest.message,
    'Notification received from host compute-1 of type COMPUTE_HOST is duplicate.',
  );
});

facade('concurrent identical notifications: exactly one is accepted', async ({ api }) => {
  const seg = await call(api, 'POST', '/v1/segments', {
    segment: { name: 'seg-race', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  await call(api, 'POST', `/v1/segments/${seg.json.segment.uuid}/hosts`, {
    host: { name: 'compute-2', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  const results = await Promise.all(
    Array.from({ length: 6 }, () =>
      call(api, 'POST', '/v1/notifications', notification('compute-2', '2026-02-01T00:00:00')),
    ),
  );
  const statuses = results.map((r) => r.status).sort();
  assert.equal(statuses, [202, 409, 409, 409, 409, 409]);
});

facade(
  'a notification removed by masakari-operator purge answers 404; a running one of the same age stays',
  async ({ api, ns }) => {
    // compute-1 is registered by the first test of this suite.
    const kube = createKubeClient(ns.kc);
    const longAgo = new Date(Date.now() - 40 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const made: Record<string, string> = {};
    for (const [label, phase, time] of [
      ['done', 'finished', '2026-03-01T00:00:00'],
      ['busy', 'running', '2026-03-02T00:00:00'],
    ] as const) {
      const n = await call(api, 'POST', '/v1/notifications', notification('compute-1', time));
      assert.is(n.status, 202);
      const uuid: string = n.json.notification.notification_uuid;
      made[label] = uuid;
      const obj = await eventuallyFound(kube, ns.namespace, uuid);
      await kube.mergePatch(
        RESOURCES.notifications,
        ns.namespace,
        obj,
        { status: { phase, updatedAt: longAgo } },
        { status: true },
      );
    }
    let out = '';
    const dry = await runPurgeCommand(['--age-in-days', '30', '--dry-run', '--namespace', ns.namespace], {
      env: {},
      kube,
      stdout: (t) => (out += t),
    });
    assert.is(dry, 0);
    assert.match(
      out,
      /^Would delete 1 notification that ended more than 30 days ago \(finished: 1, failed: 0, ignored: 0;/,
    );
    assert.is((await call(api, 'GET', `/v1/notifications/${made.done}`)).status, 200, 'a dry run deletes nothing');
    assert.is(
      await runPurgeCommand(['--age-in-days', '30', '--namespace', ns.namespace], {
        env: {},
        kube,
        stdout: () => undefined,
      }),
      0,
    );
    await eventually(
      'the purged notification answers 404',
      async () => (await call(api, 'GET', `/v1/notifications/${made.done}`)).status,
      (status) => status === 404,
    );
    assert.is((await call(api, 'GET', `/v1/notifications/${made.busy}`)).status, 200, 'a running notification is kept');
    await kube.close();
  },
);

/** metadata.name of the Notification with this Masakari uuid, once its status write has landed. */
async function eventuallyFound(
  kube: ReturnType<typeof createKubeClient>,
  namespace: string,
  uuid: string,
): Promise<string> {
  const found = await eventually(
    `notification ${uuid}`,
    async () =>
      (
        await kube.list<Notification>(RESOURCES.notifications, namespace, { labelSelector: `${LABELS.uuid}=${uuid}` })
      ).items.find((n) => n.status?.uuid === uuid),
    (n) => n !== undefined,
  );
  return found!.metadata.name ?? '';
}

facade('concurrent creates of one segment name: exactly one wins', async ({ api }) => {
  const results = await Promise.all(
    Array.from({ length: 4 }, () =>
      call(api, 'POST', '/v1/segments', { segment: { name: 'seg-same', recovery_method: 'auto', service_type: 'X' } }),
    ),
  );
  assert.equal(results.map((r) => r.status).sort(), [201, 409, 409, 409]);
});

facade('a segment whose host has a new notification refuses update and delete', async ({ api }) => {
  const list = await call(api, 'GET', '/v1/segments?sort_key=name&sort_dir=asc');
  const seg = list.json.segments.find((s: { name: string }) => s.name === 'seg-it');
  const inUse = await call(api, 'PUT', `/v1/segments/${seg.uuid}`, { segment: { description: 'x' } });
  assert.is(inUse.status, 409);
  assert.is(
    inUse.json.conflictingRequest.message,
    `Failover segment ${seg.uuid} can't be updated as it is in-use to process notifications.`,
  );
  const del = await call(api, 'DELETE', `/v1/segments/${seg.uuid}`);
  assert.is(del.status, 409);
  assert.is(
    del.json.conflictingRequest.message,
    `Failover segment (${seg.uuid}) can't be deleted as it is in-use to process notifications.`,
  );
});

facade.run();
