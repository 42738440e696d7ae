// End-to-end variant of the recovery benchmark: the whole operator (REST
// facade + engine, started from source as `make run` does) on a local
// control plane, Nova played by the simulator. Measured from the POST of the
// COMPUTE_HOST notification to the moment GET /v1/notifications/{id} reports
// `finished`; that adds the facade, the CR write, the engine's watch pick-up,
// the journal's API-server writes and the final status to the workflow time.
// It also reads etcd's /metrics before and after each recovery: how much the
// recovery grew etcd's database and how many bytes the API server sent it,
// less the rate of an idle window just before (leases), and the API
// server's count of writes by resource; a size can run with the failed host
// fenced through a fake Redfish BMC (bmc.ts) to show what fencing adds
// (write-volume.ts writes the section).

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from '../../tools/controlplane/index.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { CONDITIONS, LABELS } from '../../src/model/constants.ts';
import type { Notification } from '../../src/model/types.ts';
import { pageSelector } from '../../src/store/journal-pages.ts';
import { startSimulator } from '../../tools/simulator/server.ts';
import type { FakeRedfish } from '../../tools/simulator/redfish-bmc.ts';
import { getRawBytes } from '../lib/kubectl.ts';
import { sampleSums } from '../lib/prometheus.ts';
import { fenceWithRedfish } from './bmc.ts';
import { writesByResource } from './write-volume.ts';
import type { E2eResult, EtcdGrowth, FencingVariant } from './write-volume.ts';

export type { E2eResult, EtcdGrowth } from './write-volume.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FAILED = 'compute-1';
const READY_TIMEOUT_MS = 120_000;
/** The idle window before each recovery whose etcd writes give the background rate. */
const IDLE_MS = 10_000;

async function etcdMetrics(etcdUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${etcdUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const want = [
    'etcd_mvcc_db_total_size_in_bytes',
    'etcd_network_client_grpc_received_bytes_total',
    'etcd_mvcc_put_total',
  ];
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [name, value] = line.split(' ');
    if (name && value && want.includes(name)) out[name] = Number(value);
  }
  return out;
}

/** kube-apiserver's apiserver_request_total so far, by "VERB resource". */
async function apiserverRequests(kubeconfigPath: string): Promise<Map<string, number>> {
  const text = (await getRawBytes(kubeconfigPath, '/metrics', 60_000)).toString('utf8');
  return sampleSums(text, 'apiserver_request_total', ['verb', 'resource']);
}

function growth(before: Record<string, number>, after: Record<string, number>): EtcdGrowth {
  const d = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
  return {
    dbGrowthBytes: d('etcd_mvcc_db_total_size_in_bytes'),
    receivedBytes: d('etcd_network_client_grpc_received_bytes_total'),
    puts: d('etcd_mvcc_put_total'),
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

interface ApiReply {
  status: number;
  body: Record<string, Record<string, unknown> | undefined> | undefined;
}

async function api(base: string, method: string, path: string, body?: unknown): Promise<ApiReply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-auth-token': 'admin:admin' },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as ApiReply['body']) : undefined };
}

async function waitReady(url: string, operator: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (operator.exitCode !== null) throw new Error(`operator exited with ${operator.exitCode}`);
    const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return;
    await sleep(300);
  }
  throw new Error('operator not ready in time');
}

function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => p.kill('SIGKILL'), 20_000);
    p.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    p.kill('SIGTERM');
  });
}

/** One end-to-end run per size, each on a fresh operator, simulator and namespace of one control plane. */
export async function benchmarkRecoveryE2e(
  sizes: Array<{ instances: number; latencyMs: number; fencing?: FencingVariant; round?: number }>,
  onResult: (r: E2eResult) => void = () => undefined,
): Promise<E2eResult[]> {
  const controlPlane = await startControlPlane();
  const results: E2eResult[] = [];
  try {
    for (const [i, { instances, latencyMs, fencing, round }] of sizes.entries()) {
      const r = await runOne(
        controlPlane.kubeconfigPath,
        controlPlane.etcdUrl,
        `bench-recovery-${i}`,
        instances,
        latencyMs,
        fencing ?? { driver: 'none', failures: 0 },
        round ?? 1,
      );
      onResult(r);
      results.push(r);
    }
  } finally {
    await controlPlane.stop();
  }
  return results;
}

async function runOne(
  kubeconfigPath: string,
  etcdUrl: string,
  namespace: string,
  instances: number,
  latencyMs: number,
  fencing: FencingVariant,
  round: number,
): Promise<E2eResult> {
  const kube = createKubeClient(loadKubeConfig({ env: { KUBECONFIG: kubeconfigPath } }));
  await kube.create(RESOURCES.namespaces, undefined, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  let bmc: FakeRedfish | undefined;
  const sim = await startSimulator({ hosts: [FAILED, 'compute-2', 'compute-3'], latencyMs: { evacuate: latencyMs } });
  for (let i = 0; i < instances; i++) {
    sim.state.addServer({ host: FAILED, name: `vm-${i}`, metadata: i % 2 === 0 ? { HA_Enabled: 'True' } : {} });
  }
  const listen = `127.0.0.1:${await freePort()}`;
  const metrics = `127.0.0.1:${await freePort()}`;
  const operator = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...sim.credentials,
      KUBECONFIG: kubeconfigPath,
      MASAKARI_NAMESPACE: namespace,
      MASAKARI_LISTEN: listen,
      MASAKARI_METRICS_LISTEN: metrics,
      MASAKARI_AUTH_STRATEGY: 'noauth2',
      MASAKARI_COMPONENTS: 'api,engine',
      MASAKARI_LOG_LEVEL: process.env.MASAKARI_LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitReady(`http://${metrics}`, operator);
    const base = `http://${listen}/v1`;
    const seg = await api(base, 'POST', '/segments', {
      segment: { name: `bench-${namespace}`, recovery_method: 'auto', service_type: 'COMPUTE' },
    });
    if (seg.status < 200 || seg.status > 299)
      throw new Error(`segment create: ${seg.status} ${JSON.stringify(seg.body)}`);
    const segUuid = String(seg.body?.segment?.uuid);
    const host = await api(base, 'POST', `/segments/${segUuid}/hosts`, {
      host: { name: FAILED, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    if (host.status < 200 || host.status > 299)
      throw new Error(`host create: ${host.status} ${JSON.stringify(host.body)}`);
    sim.state.failHost(FAILED);
    if (fencing.driver === 'redfish') {
      // The engine's HaHost watch and the notification's are separate streams; the idle window below lets the
      // patch arrive before the POST.
      bmc = await fenceWithRedfish({ kube, namespace, host: FAILED, nova: sim.state, variant: fencing });
    }

    // The idle window: what the control plane and the operator write while no recovery runs.
    const idleFrom = await etcdMetrics(etcdUrl);
    const idleStarted = performance.now();
    await sleep(IDLE_MS);
    const etcdBefore = await etcdMetrics(etcdUrl);
    const requestsBefore = await apiserverRequests(kubeconfigPath);
    const idle = growth(idleFrom, etcdBefore);
    const background = {
      seconds: (performance.now() - idleStarted) / 1000,
      receivedBytes: idle.receivedBytes,
      puts: idle.puts,
    };
    const started = performance.now();
    const posted = await api(base, 'POST', '/notifications', {
      notification: {
        type: 'COMPUTE_HOST',
        hostname: FAILED,
        generated_time: new Date().toISOString().slice(0, 19),
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
    });
    if (posted.status !== 202) throw new Error(`notification create: ${posted.status} ${JSON.stringify(posted.body)}`);
    const id = String(posted.body?.notification?.notification_uuid);
    const deadline = Date.now() + 30 * 60_000;
    for (;;) {
      const got = await api(base, 'GET', `/notifications/${id}`);
      const status = got.body?.notification?.status;
      if (status === 'finished') break;
      if (status === 'error' || status === 'failed' || status === 'ignored') {
        throw new Error(`notification ended ${status}`);
      }
      if (Date.now() > deadline) throw new Error('notification not finished in 30 minutes');
      await sleep(50);
    }
    const measuredMs = performance.now() - started;
    const evacuateCalls = Object.values(sim.state.actionCounts.evacuate ?? {}).reduce((a, b) => a + b, 0);
    const etcd = growth(etcdBefore, await etcdMetrics(etcdUrl));
    const writes = writesByResource(requestsBefore, await apiserverRequests(kubeconfigPath));
    const load1 = loadavg()[0] ?? 0;
    const notification = (await kube.list<Notification>(RESOURCES.notifications, namespace)).items.find(
      (x) => x.metadata.labels?.[LABELS.uuid] === id,
    );
    if (!notification) throw new Error(`notification ${id} not found through the API server`);
    if (bmc) checkFenced(notification, bmc, fencing);
    const pages = (
      await kube.list<{ data?: Record<string, string> }>(RESOURCES.configMaps, namespace, {
        labelSelector: pageSelector(id),
      })
    ).items;
    const events = (await kube.list<{ reason?: string }>(RESOURCES.events, namespace)).items;
    const eventReasons: Record<string, number> = {};
    for (const e of events) eventReasons[e.reason ?? ''] = (eventReasons[e.reason ?? ''] ?? 0) + 1;
    return {
      instances,
      latencyMs,
      fencing,
      round,
      measuredMs,
      evacuateCalls,
      etcd,
      background,
      writes,
      notificationBytes: Buffer.byteLength(JSON.stringify(notification)),
      journalPages: pages.length,
      journalPageBytes: pages.reduce((sum, p) => sum + Buffer.byteLength(JSON.stringify(p)), 0),
      events: events.length,
      eventReasons,
      bmcRequests: bmc?.log.length ?? 0,
      load1,
    };
  } finally {
    await kube.close();
    await bmc?.stop();
    await stopProcess(operator);
    sim.state.clearTimers();
    await sim.stop();
  }
}

/** A fenced run that did not fence measured nothing: the proof must be on the finished notification. */
function checkFenced(n: Notification, bmc: FakeRedfish, fencing: FencingVariant): void {
  const verified = n.status?.conditions?.find((c) => c.type === CONDITIONS.fencingVerified);
  if (n.status?.fencing?.powerState !== 'Off' || verified?.status !== 'True') {
    throw new Error(`the fenced run finished without the fencing proof: ${JSON.stringify(n.status?.fencing)}`);
  }
  const failed = bmc.log.filter((r) => r.resetType !== undefined && r.status === 500).length;
  if (failed !== fencing.failures) throw new Error(`the BMC failed ${failed} power-offs, ${fencing.failures} wanted`);
}
