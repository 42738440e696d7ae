// The etcd budget of notification intake: under 20 KB of etcd database growth
// per accepted notification, all bookkeeping included (duplicate claims, id
// sequence, the Notification and its status write), measured on etcd's own
// etcd_mvcc_db_total_size_in_bytes. The old per-host fingerprint book, one
// ConfigMap rewritten whole (up to ~540 KB) per notification, grew etcd by
// ~200 KB per notification and filled its 2 GiB quota after ~5,200.
//
// A private control plane, so no other suite's writes are counted. etcd's
// file grows in steps of bbolt's allocation size (16 MiB), so the run is large
// enough (1,000 notifications) that one step is 16.8 KB per notification: two
// steps, i.e. more than ~16 KB of real growth each, fail the bound.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { loadConfig } from '../../../src/config/load.ts';
import { startControlPlane } from '../../../tools/controlplane/index.ts';
import type { ControlPlane } from '../../../tools/controlplane/index.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { standaloneStore } from '../../../src/testing/store.ts';
import type { CrRepositoryHandle } from '../../../src/store/index.ts';
import { hostInput, segmentInput } from './helpers.ts';

const NOTIFICATIONS = 1000;
const IN_FLIGHT = 8;
const BUDGET_BYTES = 20_000;

interface Ctx {
  cp: ControlPlane;
  kube: ReturnType<typeof createKubeClient>;
  repo: CrRepositoryHandle;
}

const growth = suite<Ctx>('etcd growth per notification', {} as Ctx);

growth.before(async (ctx) => {
  ctx.cp = await startControlPlane({ log: () => undefined });
  const kc = new KubeConfig();
  kc.loadFromFile(ctx.cp.kubeconfigPath);
  ctx.kube = createKubeClient(kc);
  await ctx.kube.create(RESOURCES.namespaces, undefined, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'growth' },
  });
  ctx.repo = standaloneStore({
    kube: ctx.kube,
    namespace: 'growth',
    config: loadConfig({ env: {} }).config,
    log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
  });
  await ctx.repo.start();
});

growth.after(async (ctx) => {
  await ctx.repo?.settle();
  await ctx.repo?.stop();
  await ctx.kube?.close();
  await ctx.cp?.stop();
});

async function etcdMetric(cp: ControlPlane, name: string): Promise<number> {
  const text = await (await fetch(`${cp.etcdUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`etcd /metrics has no ${name}`);
  return Number(line.split(' ')[1]);
}

growth('1,000 distinct VM notifications for one host, 8 in flight: under 20 KB of etcd growth each', async (ctx) => {
  const { cp, repo } = ctx;
  const seg = await repo.createSegment(segmentInput('growth'));
  const host = await repo.createHost(seg.uuid, hostInput('compute-growth'));
  const post = (i: number) =>
    repo.createNotification(
      {
        type: 'VM',
        hostname: 'compute-growth',
        generated_time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().slice(0, 19),
        payload: {
          event: 'LIFECYCLE',
          instance_uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          vir_domain_event: 'STOPPED_FAILED',
        },
        source_host_uuid: host.uuid,
        failover_segment_uuid: seg.uuid,
      },
      180,
    );
  // Warm-up outside the measurement: id blocks, first objects of each kind.
  for (let i = 0; i < 20; i++) await post(NOTIFICATIONS + i);
  await repo.settle();

  const before = await etcdMetric(cp, 'etcd_mvcc_db_total_size_in_bytes');
  const inUseBefore = await etcdMetric(cp, 'etcd_mvcc_db_total_size_in_use_in_bytes');
  let next = 0;
  let accepted = 0;
  const worker = async () => {
    while (next < NOTIFICATIONS) {
      const i = next++;
      await post(i);
      accepted++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  await repo.settle();
  const seconds = (Date.now() - started) / 1000;
  const after = await etcdMetric(cp, 'etcd_mvcc_db_total_size_in_bytes');
  const inUseAfter = await etcdMetric(cp, 'etcd_mvcc_db_total_size_in_use_in_bytes');

  assert.is(accepted, NOTIFICATIONS);
  const perNotification = (after - before) / accepted;
  const inUsePerNotification = (inUseAfter - inUseBefore) / accepted;
  console.log(
    `etcd growth: ${accepted} notifications in ${seconds.toFixed(1)} s; db_total_size +${after - before} B ` +
      `(${perNotification.toFixed(0)} B each), in use +${inUseAfter - inUseBefore} B (${inUsePerNotification.toFixed(0)} B each)`,
  );
  assert.ok(perNotification < BUDGET_BYTES, `${perNotification.toFixed(0)} B per notification`);
  assert.ok(inUsePerNotification < BUDGET_BYTES, `${inUsePerNotification.toFixed(0)} B in use per notification`);
});

growth.run();
