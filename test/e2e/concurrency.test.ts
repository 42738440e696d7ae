// Acceptance: atomicity under concurrency through the real HTTP facade, with
// TWO facade processes serving the same namespace (as two replicas would):
//   - 100 concurrent identical notifications → exactly one 202, 99 409;
//   - 50 concurrent creates of one segment name, split between the REST API
//     (both facades) and kubectl-style CR creates → exactly one segment.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { useNamespace, type TestNamespace } from '../support/cluster.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/server.ts';
import { startOperator, type OperatorProcess } from './support/stack.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { API_VERSION } from '../../src/model/constants.ts';
import type { FailoverSegment } from '../../src/model/types.ts';

interface Ctx {
  ns?: TestNamespace;
  sim?: Simulator;
  facades?: OperatorProcess[];
}
const concurrency = suite<Ctx>('two facades, one namespace');

let started: Promise<void> | undefined;
async function ensure(ctx: Ctx): Promise<void> {
  started ??= (async () => {
    ctx.ns = await useNamespace('conc');
    ctx.sim = await startSimulator({ hosts: ['compute-a'] });
    ctx.facades = await Promise.all(
      [0, 1].map(() =>
        startOperator({
          kubeconfigPath: ctx.ns!.kubeconfigPath,
          namespace: ctx.ns!.namespace,
          components: 'api',
          auth: 'noauth2',
          openstack: ctx.sim!.credentials,
        }),
      ),
    );
  })();
  await started;
}

concurrency.after(async (ctx) => {
  await Promise.all((ctx.facades ?? []).map((f) => f.stop()));
  await ctx.sim?.stop();
  await ctx.ns?.cleanup();
});

interface Reply {
  segment: { uuid: string };
  conflictingRequest?: unknown;
}

async function post(url: string, body: unknown): Promise<{ status: number; json: Reply }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  return { status: r.status, json: (text ? JSON.parse(text) : {}) as Reply };
}

concurrency('100 concurrent identical notifications across two facades: one 202, 99 409', async (ctx) => {
  await ensure(ctx);
  const [a, b] = ctx.facades as [OperatorProcess, OperatorProcess];
  const seg = await post(`${a.apiUrl}/v1/segments`, {
    segment: { name: 'conc-notif', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(seg.status, 201);
  const host = await post(`${a.apiUrl}/v1/segments/${seg.json.segment.uuid}/hosts`, {
    host: { name: 'compute-a', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  assert.is(host.status, 201);
  // the second facade must know the host before it can accept notifications for it
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${b.apiUrl}/v1/segments/${seg.json.segment.uuid}/hosts`);
    if (((await r.json()) as { hosts: unknown[] }).hosts.length === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const body = {
    notification: {
      type: 'COMPUTE_HOST',
      hostname: 'compute-a',
      generated_time: '2026-11-29T12:00:00',
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
    },
  };
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) => post(`${(i % 2 ? a : b).apiUrl}/v1/notifications`, body)),
  );
  const statuses = results.map((r) => r.status);
  assert.is(statuses.filter((s) => s === 202).length, 1, JSON.stringify(statuses));
  assert.is(statuses.filter((s) => s === 409).length, 99, JSON.stringify(statuses));
  const dup = results.find((r) => r.status === 409);
  assert.equal(dup?.json, {
    conflictingRequest: {
      code: 409,
      message: 'Notification received from host compute-a of type COMPUTE_HOST is duplicate.',
    },
  });
  // A loser of the race is never listed, on either facade, not even while its delete is on its way
  // (src/store/admission/visibility.ts); the winner is listed by both as soon as they know its claim.
  const listed = async (f: OperatorProcess) =>
    ((await (await fetch(`${f.apiUrl}/v1/notifications`)).json()) as { notifications: unknown[] }).notifications.length;
  const seen: number[] = [];
  for (let i = 0; i < 25; i++) {
    seen.push(...(await Promise.all([listed(a), listed(b)])));
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(
    seen.every((n) => n <= 1),
    `listed counts: ${JSON.stringify(seen)}`,
  );
  assert.equal(seen.slice(-2), [1, 1], `listed counts: ${JSON.stringify(seen)}`);
});

concurrency('50 concurrent creates of one segment name, REST on both facades and kubectl: one segment', async (ctx) => {
  await ensure(ctx);
  const [a, b] = ctx.facades as [OperatorProcess, OperatorProcess];
  const kc = new KubeConfig();
  kc.loadFromFile(ctx.ns!.kubeconfigPath);
  const kube = createKubeClient(kc);
  const name = 'the one segment';
  const rest = Array.from({ length: 25 }, (_, i) =>
    post(`${(i % 2 ? a : b).apiUrl}/v1/segments`, {
      segment: { name, recovery_method: 'auto', service_type: 'COMPUTE' },
    }).then((r) => r.status),
  );
  const kubectl = Array.from({ length: 25 }, (_, i) =>
    kube
      .create<FailoverSegment>(RESOURCES.segments, ctx.ns!.namespace, {
        apiVersion: API_VERSION,
        kind: 'FailoverSegment',
        metadata: { name: `gitops-${i}` },
        spec: { name, recoveryMethod: 'auto', serviceType: 'COMPUTE' },
      })
      .then(() => 'created'),
  );
  const restStatuses = await Promise.all(rest);
  await Promise.all(kubectl);
  assert.ok(
    restStatuses.every((s) => s === 201 || s === 409),
    JSON.stringify(restStatuses),
  );
  // Let the reconcilers admit or flag every kubectl-created object.
  let visible: Array<{ name: string }> = [];
  let settled = false;
  for (let i = 0; i < 150 && !settled; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const all = await kube.list<FailoverSegment>(RESOURCES.segments, ctx.ns!.namespace);
    const gitops = all.items.filter((s) => s.metadata.name?.startsWith('gitops-'));
    settled = gitops.every((s) => s.status?.conditions?.some((c) => c.type === 'Ready'));
    visible = ((await (await fetch(`${b.apiUrl}/v1/segments`)).json()) as { segments: Array<{ name: string }> })
      .segments;
  }
  assert.ok(settled, 'every kubectl-created segment got a Ready condition');
  const winners = visible.filter((s) => s.name === name);
  assert.is(winners.length, 1, `exactly one "${name}" is listed`);
  const rest201 = restStatuses.filter((s) => s === 201).length;
  const all = await kube.list<FailoverSegment>(RESOURCES.segments, ctx.ns!.namespace);
  const gitopsReady = all.items.filter(
    (s) =>
      s.metadata.name?.startsWith('gitops-') &&
      s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;
  assert.is(rest201 + gitopsReady, 1, `REST 201s: ${rest201}, admitted kubectl objects: ${gitopsReady}`);
  const losers = all.items.filter(
    (s) =>
      s.metadata.name?.startsWith('gitops-') &&
      s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'),
  );
  assert.ok(
    losers.every((s) => s.status?.conditions?.some((c) => c.reason === 'NameConflict')),
    'the losing kubectl objects are flagged NameConflict',
  );
  await kube.close();
});

concurrency.run();
