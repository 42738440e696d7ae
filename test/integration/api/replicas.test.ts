// Read-your-writes across API replicas (hypothesis 6 of the fault review):
// two api components, each with its own caches, on one API server. Replica
// B's watch on segments is held back by seconds, as on a busy API server, so
// only the fall-back read (src/store/fresh-reads.ts) can answer it right.
import { callApi } from '../../support/api-call.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import type { KubeClient, ResourceRef, WatchEvent, WatchOptions } from '../../../src/k8s/client.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { createComponent } from '../../../src/api/component.ts';
import type { ApiComponent } from '../../../src/api/component.ts';
import { FakeNova } from '../../../src/testing/fake-nova.ts';
import { startComponent } from '../../../src/testing/component.ts';

const WATCH_LAG_MS = 4_000;

const fakeNova = new FakeNova();
for (const host of ['compute-1', 'compute-2']) fakeNova.addHost(host);

/** A client whose watch events for `plurals` arrive lagMs late (in order). */
function lagging(kube: KubeClient, plurals: string[], lagMs: number): KubeClient {
  const watch: KubeClient['watch'] = <T>(
    ref: ResourceRef,
    namespace: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ) =>
    kube.watch<T>(
      ref,
      namespace,
      opts,
      plurals.includes(ref.plural) ? (e) => void setTimeout(() => onEvent(e), lagMs) : onEvent,
      signal,
    );
  return Object.assign(Object.create(kube) as KubeClient, { watch });
}

interface Ctx {
  ns: TestNamespace;
  a: ApiComponent;
  b: ApiComponent;
}

const replicas = suite<Ctx>('two api replicas', {} as Ctx);

async function replica(ns: TestNamespace, identity: string, kube: KubeClient): Promise<ApiComponent> {
  const config = loadConfig({ env: {} }).config;
  config.DEFAULT.auth_strategy = 'noauth2';
  return startComponent(
    {
      config,
      namespace: ns.namespace,
      kube,
      nova: fakeNova,
      log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
      metrics: new Registry(),
      identity,
      signal: new AbortController().signal,
    },
    (app) => createComponent(app, { listen: { host: '127.0.0.1', port: 0 }, webhook: false }),
  );
}

replicas.before(async (ctx) => {
  ctx.ns = await useNamespace('api-replicas');
  ctx.a = await replica(ctx.ns, 'api-a', createKubeClient(ctx.ns.kc));
  ctx.b = await replica(
    ctx.ns,
    'api-b',
    lagging(createKubeClient(ctx.ns.kc), ['failoversegments', 'hahosts'], WATCH_LAG_MS),
  );
});

replicas.after(async (ctx) => {
  await ctx.a?.stop();
  await ctx.b?.stop();
  await ctx.ns?.cleanup();
});

replicas('a segment created through one replica is usable through the other at once (no 404)', async ({ a, b }) => {
  const seg = await callApi(a, 'POST', '/v1/segments', {
    segment: { name: 'seg-ryw', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(seg.status, 201);
  const sid = seg.json.segment.uuid;
  const started = Date.now();
  const host = await callApi(b, 'POST', `/v1/segments/${sid}/hosts`, {
    host: { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  assert.is(host.status, 201, JSON.stringify(host.json));
  assert.ok(Date.now() - started < WATCH_LAG_MS, 'answered before replica B saw the watch event');
  const shown = await callApi(b, 'GET', `/v1/segments/${sid}`);
  assert.is(shown.status, 200);
  assert.is(shown.json.segment.name, 'seg-ryw');
  // A segment that exists nowhere is still a 404, after one look at the API server.
  const ghost = await callApi(b, 'GET', '/v1/segments/8f4e7d3a-6b1c-4c59-9d8e-2a7b5c1e0f93');
  assert.is(ghost.status, 404);
});

replicas(
  'a host added through one replica can be named in a notification through the other at once',
  async ({ a, b }) => {
    // masakari-monitors sends its first notification right after the operator added the host.
    const seg = await callApi(a, 'POST', '/v1/segments', {
      segment: { name: 'seg-ryw-names', recovery_method: 'auto', service_type: 'COMPUTE' },
    });
    assert.is(seg.status, 201);
    const host = await callApi(a, 'POST', `/v1/segments/${seg.json.segment.uuid}/hosts`, {
      host: { name: 'compute-2', type: 'COMPUTE', control_attributes: 'SSH' },
    });
    assert.is(host.status, 201, JSON.stringify(host.json));
    const notify = (hostname: string) =>
      callApi(b, 'POST', '/v1/notifications', {
        notification: {
          type: 'PROCESS',
          hostname,
          generated_time: new Date().toISOString().slice(0, 19),
          payload: { event: 'STOPPED', process_name: 'nova-compute' },
        },
      });
    const started = Date.now();
    const n = await notify('compute-2');
    assert.is(n.status, 202, JSON.stringify(n.json));
    assert.ok(Date.now() - started < WATCH_LAG_MS, 'answered before replica B saw the watch events');
    // A host that exists nowhere is still Masakari's 400 for an unknown host name.
    const ghost = await notify('compute-nowhere');
    assert.is(ghost.status, 400, JSON.stringify(ghost.json));
  },
);

replicas(
  "an id that cannot be a label value is a 404 after a miss, never the API server's 400 as a 500",
  async ({ b }) => {
    // Found by schemathesis: any Unicode in a path id became a label selector
    // the API server refused (400), answered 500.
    for (const id of ['\u{f4504}\u{81410}\u000f4 %', 'a'.repeat(64), '-x-', 'x y']) {
      const path = encodeURIComponent(id);
      for (const [method, url] of [
        ['GET', `/v1/segments/${path}`],
        ['DELETE', `/v1/segments/${path}`],
        ['DELETE', `/v1/segments/${path}/hosts/${path}`],
        ['GET', `/v1/notifications/${path}`],
        ['GET', `/v1/notifications/${path}/vmoves`],
      ] as const) {
        const r = await callApi(b, method, url);
        assert.is(r.status, 404, `${method} ${url}: ${r.status} ${JSON.stringify(r.json)}`);
      }
    }
  },
);

replicas.run();
