// bench/scale: the operator with many objects already stored. Per size N
// (notifications; hosts = N / 10, in N / 1000 segments, at least 1), on a
// fresh local control plane:
//
//   1. seed: the operator makes one template of each kind, then N / 10 hosts
//      and N notifications (all `finished`) are copied from them, by default
//      straight into etcd with the bytes the API server stored for the
//      templates (`--seed-via etcd`; bench/scale/seed.ts says what that
//      bypasses and why it does not change what is measured), or through the
//      API server (`--seed-via apiserver`, `--width` creates in flight;
//      about 50/s, over an hour at 100k); then kubectl reads them back (one
//      object, counts over paged lists, a label selector, field selectors on
//      the selectable fields) and the run stops if anything is off;
//   2. cold start: the api process (MASAKARI_COMPONENTS=api), then the
//      engine process (engine,remediation), each as the image runs it
//      (dist/, the deployed NODE_OPTIONS, the image's allocator env), timed from spawn to /readyz 200:
//      the initial lists of every cache are part of it;
//   3. GET /v1/notifications?limit=100, one client, `--seconds` after a
//      warm-up: p50/p99;
//   4. intake: POST /v1/notifications (VM notifications to seeded hosts,
//      each a different instance, so none is a duplicate) at `--rate`/s,
//      open loop, for `--intake-count` requests: p50/p99 and statuses. The
//      default 2/s is well under either server's capacity (the reference
//      takes about 10/s on a quiet machine), so it measures the work of one
//      request, not a queue. 300 requests by default, so that the p99 is the
//      4th slowest (with 60 it was the slowest one); the five slowest are
//      printed with their place in the sending order. Before them,
//      `--intake-warmup` requests (default 40, 20 s) of the same load, whose
//      p50/p99 are reported on their own: a server's first intakes run
//      code the JIT has not optimized yet (the list load has its warm-up too).
//      The client is undici's, as the list load's (fetch cost about 1.5 ms
//      of each answer here), and the Nova simulator the engine calls runs as
//      its own process, so the engine's Nova calls during the load are not
//      served on the event loop that times the answers;
//   5. resident set of each process: after Ready (idle), after the load,
//      and the peak (VmHWM), also as it stood at idle (so a run says
//      whether its peak came from the cold start or from the loads).
//
// The reference, per size: masakari-api 22.0.0 (SQLite, one worker) with the
// same N notifications inserted into its database, measured with the same
// list and intake loads.
//
//   node --import tsx bench/scale/run.ts [--sizes 1k,10k,100k] [--seconds 15] [--rate 2]
//        [--intake-count 300] [--intake-warmup 40] [--seed-via etcd|apiserver] [--width 16] [--no-reference] [--no-write]
//        [--inspect] [--heap-snapshot DIR] [--api-node-options='...'] [--api-env K=V,...]
//        [--apiserver-feature-gates G=false,...] [--trace-intake] [--apiserver-profile DIR]
//
// --api-node-options: appended to the api process's deployed NODE_OPTIONS
// (to try V8 flags before they go into config/manager/manager.yaml);
// --api-env: more environment for the api process (allocator settings).
// --apiserver-feature-gates: kube-apiserver's --feature-gates, e.g.
// DetectCacheInconsistency=false to measure the intake without its
// watch-cache consistency checks (docs/benchmarks.md, Scale).
//
// --trace-intake: the api process loads bench/lib/intake-trace.mjs, which
// times each intake inside the server (before its first Kubernetes API
// request, each request, after its last answer); the measured POSTs' p50/p99
// are printed and written below the table.
//
// --apiserver-profile DIR: kube-apiserver serves /debug/pprof, and over the
// measured intake load the bench writes its CPU profile
// (DIR/apiserver-cpu-<size>.pprof) and its allocation profile before and
// after (DIR/apiserver-allocs-{before,after}-<size>.pprof); what was allocated
// meanwhile: `go tool pprof -top -sample_index=alloc_space -diff_base BEFORE AFTER`.
// Profiling costs kube-apiserver some CPU: not for the reported figures.
//
// --inspect: both processes run with --inspect; after the loads (so nothing
// above is disturbed) the bench attaches and reads each one's V8 heap, before
// and after a forced full collection: live objects against what the heap
// holds reserved. --heap-snapshot DIR (implies --inspect): then writes the
// api process's heap snapshot to DIR/api-<size>.heapsnapshot; read it with
// `node --import tsx bench/lib/heap-summary.ts FILE`.
//
// Writes the "Scale" section of docs/benchmarks.md (not with --no-write).
import { mkdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startControlPlane } from '../../tools/controlplane/index.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { startSimulatorProcess } from '../../tools/simulator/process.ts';
import { startReferenceMasakari } from '../../test/e2e/support/reference-masakari.ts';
import { e2eVenv } from '../../test/e2e/support/python-env.ts';
import { apiserverAllocs, apiserverCpuProfile } from '../lib/apiserver-profile.ts';
import { sourceRevision, writeSection } from '../lib/docs.ts';
import { closedLoop, fixedRate, percentile, type CountedResult, type LoadResult } from '../lib/load.ts';
import { compile, deployedNodeOptions, startBenchOperator, type BenchOperator } from '../lib/operator.ts';
import { loadAverage, memoryMiB, peakRssMiB } from '../lib/proc.ts';
import { heapSnapshot, sampleMemory } from '../lib/inspector.ts';
import { freePort } from '../../test/e2e/support/net.ts';
import { insertReferenceNotifications, referenceHost } from '../lib/reference.ts';
import { histogramDelta, histogramTotals, sampleSums, sampleValue, scrape } from '../lib/prometheus.ts';
import { makeTemplates, seedFromTemplates, TEMPLATE_HOST, type SeededHost, type SeedVia } from './seed.ts';
import { verifySeeded, waitForWatchCache } from './verify.ts';
import { getRaw } from '../lib/kubectl.ts';
import { etcdRevision } from '../lib/etcd.ts';
import { parseSize, shape, sizeLabel } from './sizes.ts';

const READY_TIMEOUT_MS = 10 * 60_000;
const NO_LOAD: LoadResult = { requests: 0, errors: 0, seconds: 0, rps: NaN, p50ms: NaN, p99ms: NaN };
const NO_COUNT: CountedResult = { sent: 0, seconds: 0, p50ms: NaN, p99ms: NaN, maxMs: NaN, statuses: {} };
const notMeasured = () => ({ readyMs: NaN, memory: { idle: NaN, loaded: NaN, peak: NaN } });
const LIST_PATH = '/v1/notifications?limit=100';

interface ProcessMemory {
  idle: number;
  loaded: number;
  peak: number;
  /** The peak (VmHWM) as it stood at idle: set by the cold start, before any load. */
  peakAtIdle?: number;
  /** With --inspect, after the loads: the V8 heap as it was, then after a forced full GC (MiB). */
  heap?: { total: number; used: number; liveUsed: number; liveTotal: number; rssAfterGc: number };
  /** With --inspect, at idle (no collection forced): the resident set, the V8 heap reserved and used, external (MiB). */
  heapIdle?: { rss: number; total: number; used: number; external: number };
}

/** An intake load's result, with its unmeasured warm-up (absent when the load did not run). */
type IntakeResult = CountedResult & { warmup?: CountedResult };

interface ScaleResult {
  size: number;
  /** Bulk writes, then the wait until the API server's watch cache had them all. */
  seedSeconds: { hosts: number; notifications: number; watchCache: number };
  etcdMiB: number;
  loadBefore: number;
  api: { readyMs: number; memory: ProcessMemory };
  engine: { readyMs: number; memory: ProcessMemory };
  list: LoadResult;
  intake: IntakeResult;
  /** The api's Kubernetes API attempts during the intake load, from masakari_kube_request_duration_seconds. */
  intakeKubeCalls?: Array<{ call: string; perNotification: number; meanMs: number }>;
  /** The engine's Kubernetes API attempts during the intake load, per POST. */
  intakeEngineKubeCalls?: Array<{ call: string; perNotification: number; meanMs: number }>;
  /** Garbage collection during the intake load (and the second after it): kube-apiserver's Go GC, the api's and engine's V8 (major). */
  intakeGc?: { apiserver: GoGc; api?: V8Gc; engine?: V8Gc };
  /** --trace-intake: inside the api, p50 / p99 ms of each part of the measured intakes. */
  intakeTrace?: string;
  /** How long the api took to answer GET /metrics (its state metrics included), before the intake load (ms). */
  apiScrapeMs?: number;
  /** What went wrong (a process that did not start or died), for the table's footnotes. */
  notes: string[];
  reference?: { list: LoadResult; intake: IntakeResult; memoryMiB: number; rows: number };
}

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1k,10k,100k' },
    seconds: { type: 'string', default: '15' },
    rate: { type: 'string', default: '2' },
    'intake-count': { type: 'string', default: '300' },
    'intake-warmup': { type: 'string', default: '40' },
    'seed-via': { type: 'string', default: 'etcd' },
    width: { type: 'string', default: '' },
    'no-reference': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    inspect: { type: 'boolean', default: false },
    'api-node-options': { type: 'string', default: '' },
    'api-env': { type: 'string', default: '' },
    'heap-snapshot': { type: 'string' },
    'apiserver-feature-gates': { type: 'string', default: '' },
    'trace-intake': { type: 'boolean', default: false },
    'apiserver-profile': { type: 'string' },
  },
});
const HEAP_SNAPSHOT_DIR = values['heap-snapshot'];
/** --apiserver-profile: where kube-apiserver's profiles of the intake load go. */
const APISERVER_PROFILE_DIR = values['apiserver-profile'];
/** kube-apiserver's --feature-gates (e.g. DetectCacheInconsistency=false, to see the intake without its cache checks). */
const APISERVER_FEATURE_GATES = String(values['apiserver-feature-gates']);
const INSPECT = values.inspect || HEAP_SNAPSHOT_DIR !== undefined;
/** --trace-intake: where the api process's intake trace goes (bench/lib/intake-trace.mjs). */
const INTAKE_TRACE_FILE = values['trace-intake']
  ? path.join(os.tmpdir(), `scale-intake-trace-${process.pid}.jsonl`)
  : undefined;
const INTAKE_TRACE_MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../lib/intake-trace.mjs');
const SIZES = String(values.sizes).split(',').map(parseSize);
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const INTAKE_COUNT = Number(values['intake-count']);
const INTAKE_WARMUP = Number(values['intake-warmup']);
const SEED_VIA = String(values['seed-via']) as SeedVia;
if (SEED_VIA !== 'etcd' && SEED_VIA !== 'apiserver') throw new Error(`--seed-via: etcd or apiserver, not ${SEED_VIA}`);
// In flight: creates through the API server, or etcd transactions of up to 128 objects each.
const WIDTH = Number(values.width || (SEED_VIA === 'etcd' ? 2 : 16));
/** --api-env K=V,K=V: more environment for the api process (allocator experiments, e.g. MALLOC_ARENA_MAX=2). */
const API_ENV = Object.fromEntries(
  String(values['api-env'])
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const at = kv.indexOf('=');
      if (at < 1) throw new Error(`--api-env: K=V pairs separated by commas, not ${JSON.stringify(kv)}`);
      return [kv.slice(0, at), kv.slice(at + 1)];
    }),
);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Between the intake's metrics snapshot and its first measured POST. */
const SNAPSHOT_SETTLE_MS = 2_000;

/** The deployed NODE_OPTIONS, then --api-node-options (api only), then --inspect when asked for. */
function benchNodeOptions(components: string, inspectPort: number | undefined): string {
  return [
    deployedNodeOptions(components),
    components === 'api' ? values['api-node-options'] : '',
    components === 'api' && INTAKE_TRACE_FILE ? `--import=${INTAKE_TRACE_MODULE}` : '',
    inspectPort ? `--inspect=127.0.0.1:${inspectPort}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

interface GoGc {
  cycles: number;
  cpuSeconds: number;
  heapInuseMiB: number;
  /**
   * kube-apiserver's watch-cache consistency checks so far, per resource
   * (apiserver_storage_consistency_checks_total; feature gate
   * DetectCacheInconsistency, on by default since Kubernetes 1.34). Each one
   * lists and decodes every object of the resource from etcd, every 5 to
   * 7.5 minutes: with 100,000 Notifications, about 40 s of garbage
   * collection on two cores, during which every request to it is slower.
   */
  consistencyChecks: Record<string, number>;
  /** Requests served so far by verb and resource ("LIST hahosts"), from every client (apiserver_request_total). */
  requests: Record<string, number>;
}

/** The resources whose consistency checks are reported: the ones the bench fills. */
const CHECKED_RESOURCES = ['notifications', 'hahosts', 'configmaps'];

interface V8Gc {
  major: number;
  majorMs: number;
}

/** kube-apiserver's GC cycles and CPU seconds so far, and its heap in use now (its /metrics, through kubectl). */
function apiserverGc(kubeconfigPath: string): GoGc {
  const text = getRaw(kubeconfigPath, '/metrics', 60_000);
  return {
    cycles: sampleValue(text, 'go_gc_duration_seconds_count') ?? NaN,
    cpuSeconds: sampleValue(text, 'process_cpu_seconds_total') ?? NaN,
    heapInuseMiB: (sampleValue(text, 'go_memstats_heap_inuse_bytes') ?? NaN) / 2 ** 20,
    consistencyChecks: Object.fromEntries(
      CHECKED_RESOURCES.map((resource) => [
        resource,
        ['success', 'failure', 'error'].reduce(
          (sum, status) =>
            sum + (sampleValue(text, 'apiserver_storage_consistency_checks_total', { resource, status }) ?? 0),
          0,
        ),
      ]),
    ),
    requests: Object.fromEntries(sampleSums(text, 'apiserver_request_total', ['verb', 'resource'])),
  };
}

type Totals = Map<string, { count: number; sum: number }>;

/**
 * One scrape of a process's /metrics: its Kubernetes API calls
 * (masakari_kube_request_duration_seconds) and its major V8 collections
 * (prom-client's nodejs_gc_duration_seconds), so far.
 */
type ProcessMetrics = { calls: Totals; gc?: V8Gc };

async function processMetrics(metricsUrl: string | undefined): Promise<ProcessMetrics> {
  if (metricsUrl === undefined) return { calls: new Map() };
  const text = await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.text());
  const major = histogramTotals(text, 'nodejs_gc_duration_seconds').get('kind=major');
  return {
    calls: histogramTotals(text, 'masakari_kube_request_duration_seconds'),
    ...(major ? { gc: { major: major.count, majorMs: major.sum * 1000 } } : {}),
  };
}

/** What kube-apiserver did between two readings: cycles, CPU and checks as differences, the heap as it is at `b`. */
const goGcDelta = (a: GoGc, b: GoGc): GoGc => ({
  cycles: b.cycles - a.cycles,
  cpuSeconds: b.cpuSeconds - a.cpuSeconds,
  heapInuseMiB: b.heapInuseMiB,
  consistencyChecks: Object.fromEntries(
    CHECKED_RESOURCES.map((r) => [r, (b.consistencyChecks[r] ?? 0) - (a.consistencyChecks[r] ?? 0)]),
  ),
  requests: Object.fromEntries(
    Object.entries(b.requests)
      .map(([k, n]) => [k, n - (a.requests[k] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  ),
});

/** "LIST hahosts 3, WATCH notifications 1" from requests by verb and resource; "none" when there were none. */
function listsAndWatches(requests: Record<string, number>): string {
  const lines = Object.entries(requests)
    .filter(([k]) => /^(LIST|WATCH) /.test(k))
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`);
  return lines.length ? lines.join(', ') : 'none';
}

/** `p`'s value, after handing `report` the milliseconds from now until it settled. */
async function timed<T>(report: (ms: number) => void, p: Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await p;
  } finally {
    report(performance.now() - t0);
  }
}

const v8Delta = (a: V8Gc | undefined, b: V8Gc | undefined): V8Gc | undefined =>
  a && b ? { major: b.major - a.major, majorMs: b.majorMs - a.majorMs } : undefined;

/** A VM notification no earlier one duplicates (its own instance uuid). */
function vmNotification(hostname: string, i: number) {
  return {
    notification: {
      type: 'VM',
      hostname,
      generated_time: new Date().toISOString().slice(0, 19),
      payload: {
        event: 'LIFECYCLE',
        instance_uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        vir_domain_event: 'STOPPED_FAILED',
      },
    },
  };
}

/**
 * One POST on the intake's own connection pool: undici's request, as the
 * list load's closedLoop, not fetch, whose web streams cost this client about
 * 1.5 ms per request on these two shared cores (measured against the api's
 * own server-side timing), time the bench would add to every answer.
 */
async function postNotification(pool: Pool, body: unknown): Promise<number> {
  const r = await pool.request({
    method: 'POST',
    path: '/v1/notifications',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  await r.body.arrayBuffer();
  return r.statusCode;
}

/**
 * INTAKE_WARMUP unmeasured POSTs of the same load first (at least one): the
 * load generator's new connection, and the server's first intakes, which run
 * code V8 has not optimized yet, as the list load has its 2 s warm-up. Their
 * latencies are reported on their own. Then `beforeMeasured` (the metrics
 * snapshot, so the per-POST counts are of the measured POSTs alone), a
 * pause of SNAPSHOT_SETTLE_MS, and INTAKE_COUNT at RATE/s, measured.
 */
async function intakeLoad(
  base: string,
  hostname: (i: number) => string,
  salt: number,
  beforeMeasured: () => Promise<void> = async () => {},
): Promise<IntakeResult> {
  // Open loop: a slow answer must not hold back the next request, so a few connections.
  const pool = new Pool(new URL(base).origin, { connections: 4, pipelining: 1 });
  try {
    const warmup = await fixedRate({
      ratePerSecond: RATE,
      count: Math.max(1, INTAKE_WARMUP),
      send: (i) => postNotification(pool, vmNotification(hostname(INTAKE_COUNT + i), salt + INTAKE_COUNT + i)),
    });
    console.log(`  warm-up: ${warmupLine(warmup)}`);
    await beforeMeasured();
    // The snapshot's own work (kubectl, kube-apiserver rendering its /metrics) settles before the first
    // measured POST: in one run that POST met it and was the slowest of 300 (40.2 ms against a p99 of 18.8).
    await sleep(SNAPSHOT_SETTLE_MS);
    const measured = await fixedRate({
      ratePerSecond: RATE,
      count: INTAKE_COUNT,
      send: (i) => postNotification(pool, vmNotification(hostname(i), salt + i)),
    });
    return { ...measured, warmup };
  } finally {
    await pool.close();
  }
}

/** Which request the nearest-rank p99 of `n` is, counted from the slowest ("4th slowest" of 300). */
const p99Rank = (n: number) => {
  const k = n - Math.ceil(0.99 * n) + 1;
  return k === 1 ? 'slowest' : `${k}${k === 2 ? 'nd' : k === 3 ? 'rd' : 'th'} slowest`;
};

const warmupLine = (w: CountedResult) =>
  `${w.sent} at ${RATE}/s, p50 ${w.p50ms.toFixed(1)} ms, p99 ${w.p99ms.toFixed(1)} ms, slowest ${w.maxMs.toFixed(1)} ms`;
const warmup = (r: IntakeResult) => (r.warmup ? warmupLine(r.warmup) : '—');

/** "#i ms, ..." for the slowest requests of an open-loop run (i in sending order). */
const slowestLine = (r: CountedResult) => (r.slowest ?? []).map((x) => `#${x.i} ${x.ms.toFixed(1)} ms`).join(', ');

const listLoad = (base: string) =>
  closedLoop({ url: base, path: LIST_PATH, concurrency: 1, durationMs: SECONDS * 1000, warmupMs: 2000 });

/**
 * Summarises the last `count` intakes of the api's trace (the measured ones;
 * the warm-up's come first) as "answers p50 / p99, before the first API
 * request …, <call> …, after the last answer …" (bench/lib/intake-trace.mjs),
 * and removes the file for the next size's api.
 */
async function intakeTraceLine(file: string, count: number): Promise<string> {
  type Traced = { total: number; firstCall?: number; afterLastCall?: number; calls: { call: string; ms: number }[] };
  const traced = (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .slice(-count)
    .map((l) => JSON.parse(l) as Traced);
  await rm(file, { force: true }); // the next size's api starts a new one
  const p = (xs: (number | undefined)[]) => {
    const sorted = xs.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
    return `${f(percentile(sorted, 50))} / ${f(percentile(sorted, 99))}`;
  };
  const byCall = new Map<string, number[]>();
  for (const t of traced) {
    for (const c of t.calls) {
      const ms = byCall.get(c.call);
      if (ms) ms.push(c.ms);
      else byCall.set(c.call, [c.ms]);
    }
  }
  const calls = [...byCall]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([call, ms]) => `${call} ${p(ms)} (${f(ms.length / Math.max(1, traced.length), 2)} per POST)`);
  return [
    `${traced.length} answers ${p(traced.map((t) => t.total))}`,
    `before the first API request ${p(traced.map((t) => t.firstCall))}`,
    ...calls,
    `after the last answer ${p(traced.map((t) => t.afterLastCall))}`,
  ].join(', ');
}

async function measureOurs(size: number): Promise<ScaleResult> {
  const { notifications, hosts, segments } = shape(size);
  console.log(`== ${sizeLabel(size)}: ${segments} segments, ${hosts} hosts, ${notifications} notifications`);
  if (APISERVER_PROFILE_DIR) await mkdir(APISERVER_PROFILE_DIR, { recursive: true });
  const cp = await startControlPlane({
    apiserverFeatureGates: APISERVER_FEATURE_GATES || undefined,
    profiling: APISERVER_PROFILE_DIR !== undefined,
  });
  const kube = createKubeClient(loadKubeConfig({ env: { KUBECONFIG: cp.kubeconfigPath } }));
  const namespace = 'scale';
  const sim = await startSimulatorProcess(['--hosts', `${TEMPLATE_HOST},compute-2`]);
  const started: BenchOperator[] = [];
  try {
    await kube.create(RESOURCES.namespaces, undefined, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    const common = { kubeconfigPath: cp.kubeconfigPath, namespace, openstack: sim.credentials };
    console.log('templates (through the operator)...');
    const templater = await startBenchOperator({
      ...common,
      components: 'api,engine',
      nodeOptions: '',
      readyTimeoutMs: 120_000,
    });
    try {
      await makeTemplates(templater, segments);
    } finally {
      await templater.stop();
    }
    console.log(`seeding via ${SEED_VIA} (${WIDTH} in flight)...`);
    const seeded = await seedFromTemplates(kube, namespace, {
      segments,
      hosts,
      notifications,
      width: WIDTH,
      via: SEED_VIA,
      etcdUrl: cp.etcdUrl,
    });
    const check = { kubeconfigPath: cp.kubeconfigPath, namespace, seeded, notifications };
    const cacheSeconds = await waitForWatchCache({ ...check, revision: await etcdRevision(cp.etcdUrl) });
    console.log(`  the API server's watch cache caught up in ${cacheSeconds.toFixed(0)} s`);
    console.log('reading the seeded objects back with kubectl...');
    await verifySeeded(check);
    const etcdMiB = (await scrape(`${cp.etcdUrl}/metrics`, 'etcd_mvcc_db_total_size_in_bytes')) / 2 ** 20;

    const result: ScaleResult = {
      size,
      seedSeconds: { hosts: seeded.hostSeconds, notifications: seeded.notificationSeconds, watchCache: cacheSeconds },
      etcdMiB,
      loadBefore: loadAverage(),
      api: notMeasured(),
      engine: notMeasured(),
      list: NO_LOAD,
      intake: NO_COUNT,
      notes: [],
    };
    const inspectPorts = new Map<BenchOperator, number>();
    const start = async (components: string): Promise<BenchOperator | undefined> => {
      console.log(`cold start: ${components}...`);
      try {
        const inspectPort = INSPECT ? await freePort() : undefined;
        const p = await startBenchOperator({
          ...common,
          components,
          nodeOptions: benchNodeOptions(components, inspectPort),
          readyTimeoutMs: READY_TIMEOUT_MS,
          env: components === 'api' ? { ...API_ENV, ...(INTAKE_TRACE_FILE ? { INTAKE_TRACE_FILE } : {}) } : undefined,
        });
        if (inspectPort) inspectPorts.set(p, inspectPort);
        started.push(p);
        console.log(`  ready in ${(p.readyMs / 1000).toFixed(1)} s`);
        return p;
      } catch (e) {
        const first = (e as Error).message.split('\n')[0] ?? '';
        console.log((e as Error).message);
        result.notes.push(`${components}: ${first.replace(/^operator \([^)]*\) /, '')}`);
        return undefined;
      }
    };
    const api = await start('api');
    const engine = await start('engine,remediation');
    await sleep(5000);
    const idle = { api: await memoryMiB(api?.pid), engine: await memoryMiB(engine?.pid) };
    const peakAtIdle = { api: await peakRssMiB(api?.pid), engine: await peakRssMiB(engine?.pid) };
    const heapIdle = new Map<BenchOperator, ProcessMemory['heapIdle']>();
    for (const [p, port] of inspectPorts) {
      const m = await sampleMemory(port, { gc: false });
      heapIdle.set(p, { rss: m.rssMiB, total: m.heapTotalMiB, used: m.heapUsedMiB, external: m.externalMiB });
    }
    if (api) {
      console.log(`GET ${LIST_PATH} for ${SECONDS} s...`);
      result.list = await listLoad(api.apiUrl);
      console.log(`intake: ${INTAKE_COUNT} at ${RATE}/s...`);
      const pick = (i: number) => (seeded.hosts[(i * 7919) % seeded.hosts.length] as SeededHost).name;
      let before: { api: ProcessMetrics; engine: ProcessMetrics; apiserver: GoGc } | undefined;
      const profile = APISERVER_PROFILE_DIR
        ? (name: string) => path.join(APISERVER_PROFILE_DIR, `apiserver-${name}-${sizeLabel(size)}.pprof`)
        : undefined;
      let cpuProfile: Promise<void> | undefined;
      result.intake = await intakeLoad(api.apiUrl, pick, 0, async () => {
        before = {
          api: await timed((ms) => (result.apiScrapeMs = ms), processMetrics(api.metricsUrl)),
          engine: await processMetrics(engine?.metricsUrl),
          apiserver: apiserverGc(cp.kubeconfigPath),
        };
        if (profile) {
          await apiserverAllocs(cp.kubeconfigPath, profile('allocs-before'));
          const seconds = Math.ceil(INTAKE_COUNT / RATE);
          cpuProfile = apiserverCpuProfile(cp.kubeconfigPath, seconds, profile('cpu'));
        }
      });
      if (profile) {
        await apiserverAllocs(cp.kubeconfigPath, profile('allocs-after'));
        await cpuProfile;
        console.log(`  kube-apiserver profiles: ${profile('*')}`);
      }
      if (!before) throw new Error('the intake load took no metrics snapshot');
      const { api: apiBefore, engine: engineBefore, apiserver: apiserverBefore } = before;
      console.log(`  slowest: ${slowestLine(result.intake)}`);
      if (INTAKE_TRACE_FILE) {
        result.intakeTrace = await intakeTraceLine(INTAKE_TRACE_FILE, result.intake.sent);
        console.log(`  inside the api: ${result.intakeTrace}`);
      }
      await sleep(1000); // the background status writes of the last POSTs
      const apiAfter = await processMetrics(api.metricsUrl);
      const engineAfter = await processMetrics(engine?.metricsUrl);
      const apiserverAfter = apiserverGc(cp.kubeconfigPath);
      const perPost = (before: Totals, after: Totals) =>
        [...histogramDelta(before, after)]
          .map(([key, d]) => ({
            call: key.replace(/method=([^,]*),resource=([^,]*),code=(.*)/, '$1 $2 $3'),
            perNotification: d.count / Math.max(1, result.intake.sent),
            meanMs: (d.sum / d.count) * 1000,
          }))
          .sort((a, b) => b.perNotification * b.meanMs - a.perNotification * a.meanMs);
      result.intakeKubeCalls = perPost(apiBefore.calls, apiAfter.calls);
      // What the engine asked of the API server meanwhile: its work on the same cores is part of the intake's tail.
      result.intakeEngineKubeCalls = perPost(engineBefore.calls, engineAfter.calls);
      result.intakeGc = { apiserver: goGcDelta(apiserverBefore, apiserverAfter) };
      const apiGc = v8Delta(apiBefore.gc, apiAfter.gc);
      const engineGc = v8Delta(engineBefore.gc, engineAfter.gc);
      if (apiGc) result.intakeGc.api = apiGc;
      if (engineGc) result.intakeGc.engine = engineGc;
      if (result.list.errors) result.notes.push(`list: ${result.list.errors} failed requests`);
      await sleep(3000);
    }
    for (const [key, p] of [
      ['api', api],
      ['engine', engine],
    ] as const) {
      if (!p) continue;
      result[key] = {
        readyMs: p.readyMs,
        memory: {
          idle: idle[key],
          loaded: await memoryMiB(p.pid),
          peak: await peakRssMiB(p.pid),
          peakAtIdle: peakAtIdle[key],
          ...(heapIdle.get(p) ? { heapIdle: heapIdle.get(p) } : {}),
        },
      };
      const port = inspectPorts.get(p);
      if (port) {
        const before = await sampleMemory(port, { gc: false });
        const live = await sampleMemory(port, { gc: true });
        result[key].memory.heap = {
          total: before.heapTotalMiB,
          used: before.heapUsedMiB,
          liveUsed: live.heapUsedMiB,
          liveTotal: live.heapTotalMiB,
          rssAfterGc: live.rssMiB,
        };
        console.log(`  ${key} heap: ${JSON.stringify(result[key].memory.heap)}`);
        if (key === 'api' && HEAP_SNAPSHOT_DIR) {
          const file = path.join(HEAP_SNAPSHOT_DIR, `api-${sizeLabel(size)}.heapsnapshot`);
          await heapSnapshot(port, file);
          console.log(`  api heap snapshot: ${file}`);
        }
      }
      const gone = p.gone();
      if (gone) result.notes.push(`${p.components}: ${gone} during the run`);
    }
    console.log(JSON.stringify(result));
    return result;
  } finally {
    for (const p of started.reverse()) await p.stop();
    await kube.close();
    await sim.stop();
    await cp.stop();
  }
}

async function measureReference(size: number, venv: string): Promise<ScaleResult['reference']> {
  const hostname = 'scale-ref-host';
  const sim = await startSimulatorProcess(['--hosts', hostname]);
  const c = sim.credentials;
  const ref = await startReferenceMasakari({
    venv,
    authUrl: c.OS_AUTH_URL as string,
    username: c.OS_USERNAME as string,
    password: c.OS_PASSWORD as string,
    projectName: c.OS_PROJECT_NAME as string,
  });
  try {
    const { segmentUuid, hostUuid } = await referenceHost(ref.url, hostname);
    const rows = await insertReferenceNotifications({
      venv,
      configFile: ref.configFile,
      count: size,
      segmentUuid,
      hostUuid,
    });
    console.log(`reference (${rows} notifications): GET ${LIST_PATH} for ${SECONDS} s...`);
    const list = await listLoad(ref.url);
    console.log(`reference intake: ${INTAKE_COUNT} at ${RATE}/s...`);
    const intake = await intakeLoad(ref.url, () => hostname, 1_000_000);
    const result = { list, intake, memoryMiB: await memoryMiB(ref.pid), rows };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await ref.stop();
    await sim.stop();
  }
}

const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const s = (ms: number) => f(ms / 1000);
const statuses = (r: CountedResult) =>
  Object.entries(r.statuses)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

/** With --inspect: where each process's resident set goes (V8 heap, live objects, the rest). */
function heapLines(results: ScaleResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    for (const key of ['api', 'engine'] as const) {
      const i = r[key].memory.heapIdle;
      if (i) {
        lines.push(
          `- ${sizeLabel(r.size)} ${key}, idle (\`--inspect\`): resident set ${f(i.rss, 0)} MiB, V8 heap ${f(i.total, 0)} MiB reserved, ` +
            `${f(i.used, 0)} used, external ${f(i.external, 0)} MiB (so ${f(i.rss - i.total, 0)} MiB outside the V8 heap).`,
        );
      }
      const h = r[key].memory.heap;
      if (!h) continue;
      lines.push(
        `- ${sizeLabel(r.size)} ${key}, after the loads (\`--inspect\`): V8 heap ${f(h.total, 0)} MiB reserved, ${f(h.used, 0)} used; ` +
          `after a forced full collection ${f(h.liveUsed, 0)} MiB live in ${f(h.liveTotal, 0)} reserved, resident set ${f(h.rssAfterGc, 0)} MiB ` +
          `(so ${f(h.rssAfterGc - h.liveTotal, 0)} MiB outside the V8 heap: Node's own code and data, buffers, the allocator).`,
      );
    }
  }
  return lines.length ? ['', ...lines] : [];
}

function render(results: ScaleResult[], when: Date, revision: string): string {
  const rows = results.flatMap((r) => {
    const ref = r.reference;
    return [
      `| ${sizeLabel(r.size)} | ours | ${f(r.api.memory.idle, 0)} / ${f(r.api.memory.loaded, 0)} / ${f(r.api.memory.peak, 0)} | ${f(r.engine.memory.idle, 0)} / ${f(r.engine.memory.loaded, 0)} / ${f(r.engine.memory.peak, 0)} | ${f(r.list.p50ms)} | ${f(r.list.p99ms)} | ${f(r.intake.p50ms)} | ${f(r.intake.p99ms)} | ${statuses(r.intake)} | ${s(r.api.readyMs)} | ${s(r.engine.readyMs)} |`,
      ref
        ? `| ${sizeLabel(r.size)} | reference | ${f(ref.memoryMiB, 0)} | — | ${f(ref.list.p50ms)} | ${f(ref.list.p99ms)} | ${f(ref.intake.p50ms)} | ${f(ref.intake.p99ms)} | ${statuses(ref.intake)} | — | — |`
        : `| ${sizeLabel(r.size)} | reference | not run | | | | | | | | |`,
    ];
  });
  const big = results.find((r) => r.size === 100_000);
  const ok = (yes: boolean) => (yes ? 'yes' : '**no**');
  const targets = big
    ? [
        '| target (100k notifications, 10k hosts) | measured | met |',
        '|---|---:|:---:|',
        `| api resident set < 300 MiB (peak) | ${f(big.api.memory.peak, 0)} MiB | ${ok(big.api.memory.peak < 300)} |`,
        `| engine resident set < 200 MiB (peak) | ${f(big.engine.memory.peak, 0)} MiB | ${ok(big.engine.memory.peak < 200)} |`,
        `| \`GET /v1/notifications?limit=100\` p99 < 50 ms | ${f(big.list.p99ms)} ms | ${ok(big.list.p99ms < 50)} |`,
        `| intake p99 < 20 ms | ${f(big.intake.p99ms)} ms | ${ok(big.intake.p99ms < 20)} |`,
        `| cold start to Ready < 60 s (api; engine) | ${s(big.api.readyMs)} s; ${s(big.engine.readyMs)} s | ${ok(big.api.readyMs < 60_000 && big.engine.readyMs < 60_000)} |`,
        ...(big.reference
          ? [
              `| list p99 against the reference (${f(big.reference.list.p99ms)} ms) | ${f(big.list.p99ms / big.reference.list.p99ms, 2)}× | — |`,
            ]
          : []),
      ]
    : ['The targets are set for 100k notifications on 10k hosts; that size was not part of this run.'];
  return [
    '## Scale',
    '',
    `Produced by \`bench/scale/run.ts --sizes ${results.map((r) => sizeLabel(r.size)).join(',')}\` at commit ${revision} on ${when.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} cores`,
    `(load average before each cold start: ${results.map((r) => `${sizeLabel(r.size)} ${f(r.loadBefore, 1)}`).join(', ')}; the machine is shared).`,
    '',
    '- **Stored objects** per size N: N notifications (all `finished`) on N/10 hosts in N/1000 segments (at least one).',
    '  Each is a copy of a template the operator itself made (so labels, finalizers, owners and status are',
    '  what the store writes), ' +
      (SEED_VIA === 'etcd'
        ? 'written straight into etcd: the bytes the API server stored for the template, with names, uuids, ids,'
        : 'created through the API server, `--width` in flight (`--seed-via apiserver`).'),
    ...(SEED_VIA === 'etcd'
      ? [
          '  uid, creation time and generated time swapped, 128 objects to a transaction (`--seed-via etcd`, the',
          "  default). That skips only the API server's write path (admission, validation, defaulting) for objects",
          '  whose every byte that path produced for the template; the API server sees the puts through its watch',
          '  on etcd, and every list and watch of the operator is served by it as for any object. kubectl reads',
          '  them back before anything is measured (one host in full by label, counts by field selector).',
        ]
      : []),
    '  See `bench/scale/seed.ts`.',
    '- **Processes**: as the two Deployments of config/manager run them: `MASAKARI_COMPONENTS=api` and',
    "  `engine,remediation`, compiled `dist/`, with the deployed `NODE_OPTIONS` and the image's glibc allocator",
    '  settings (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`), noauth2, on a fresh local control plane',
    '  (etcd + kube-apiserver on the same machine).',
    '- **Memory** (MiB): resident set after Ready and 5 s idle / after the list and intake loads / peak (VmHWM).',
    `- **List**: \`GET ${LIST_PATH}\`, one client, ${SECONDS} s after a 2 s warm-up.`,
    `- **Intake**: \`POST /v1/notifications\`, ${INTAKE_COUNT} VM notifications (each a new instance, to`,
    `  seeded hosts; the reference: to its one host) at a fixed ${RATE}/s (open loop), so the p99 is the`,
    `  ${p99Rank(INTAKE_COUNT)} request. ${INTAKE_WARMUP} unmeasured requests of the same load go first (a new`,
    "  connection, and the server's first intakes, which run code V8 has not optimized yet), as the list load",
    '  has its warm-up; their latencies are given below the table. The metrics snapshot for the per-POST',
    "  counts comes next, then a 2 s pause, then the measured load. The client is undici's, as the list",
    "  load's, and the Nova simulator the engine calls runs as its own process, off the client's event loop.",
    '- **Cold start**: spawn to the first 200 from `/readyz`, api first, then the engine; the initial list of',
    '  each cache is part of it.',
    '- **Reference**: masakari-api 22.0.0 (one worker, SQLite, noauth2) with the same N notifications inserted',
    '  into its database (its list query reads SQLite; it has no cache and no start-up list).',
    '',
    '| size | server | api MiB (idle / loaded / peak) | engine MiB (idle / loaded / peak) | list p50 ms | list p99 ms | intake p50 ms | intake p99 ms | intake statuses | api Ready s | engine Ready s |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|',
    ...rows,
    '',
    `Seeding (${SEED_VIA === 'etcd' ? 'straight into etcd' : 'through the API server'}): ` +
      results
        .map(
          (r) =>
            `${sizeLabel(r.size)}: hosts ${f(r.seedSeconds.hosts, 0)} s, notifications ${f(r.seedSeconds.notifications, 0)} s, API server's watch cache caught up ${f(r.seedSeconds.watchCache, 0)} s later, etcd database ${f(r.etcdMiB, 0)} MiB`,
        )
        .join('; ') +
      '.',
    ...results.flatMap((r) => r.notes.map((n) => `- ${sizeLabel(r.size)}: ${n}`)),
    ...heapLines(results),
    ...results
      .filter((r) => r.intakeKubeCalls?.length)
      .map(
        (r) =>
          `- ${sizeLabel(r.size)} api, Kubernetes API calls during the intake load (\`masakari_kube_request_duration_seconds\`; ` +
          "per POST, mean latency; the engine's calls are not in it): " +
          r.intakeKubeCalls!.map((c) => `${c.call} ${f(c.perNotification, 2)} × ${f(c.meanMs)} ms`).join('; ') +
          '.',
      ),
    ...results
      .filter((r) => r.intakeGc)
      .map((r) => {
        const g = r.intakeGc!;
        const v8 = (name: string, x: V8Gc | undefined) =>
          x ? `; ${name}: ${x.major} major V8 collections, ${f(x.majorMs, 0)} ms in all` : '';
        return (
          `- ${sizeLabel(r.size)} garbage collection during the intake load and the second after it: kube-apiserver ${g.apiserver.cycles} Go GC ` +
          `cycles, ${f(g.apiserver.cpuSeconds)} s of CPU in all, ${f(g.apiserver.heapInuseMiB, 0)} MiB heap in use ` +
          `at the end${v8('api', g.api)}${v8('engine', g.engine)}. kube-apiserver's watch-cache consistency checks ` +
          `(each a list of every object of the resource from etcd) in the same time: ` +
          CHECKED_RESOURCES.map((x) => `${x} ${g.apiserver.consistencyChecks[x] ?? 0}`).join(', ') +
          (APISERVER_FEATURE_GATES ? ` (kube-apiserver --feature-gates=${APISERVER_FEATURE_GATES})` : '') +
          `; the lists and watches it served meanwhile, every client's: ${listsAndWatches(g.apiserver.requests)}.`
        );
      }),
    ...results
      .filter((r) => r.intakeEngineKubeCalls?.length)
      .map(
        (r) =>
          `- ${sizeLabel(r.size)} engine, its Kubernetes API calls during the same load (per POST, mean latency): ` +
          r.intakeEngineKubeCalls!.map((c) => `${c.call} ${f(c.perNotification, 2)} × ${f(c.meanMs)} ms`).join('; ') +
          '.',
      ),
    ...results
      .filter((r) => r.api.memory.peakAtIdle !== undefined)
      .map(
        (r) =>
          `- ${sizeLabel(r.size)} resident peak (VmHWM) as it stood at idle, i.e. set by the cold start, before any load: ` +
          `api ${f(r.api.memory.peakAtIdle!, 0)} MiB (${f(r.api.memory.peak, 0)} at the end), ` +
          `engine ${f(r.engine.memory.peakAtIdle ?? NaN, 0)} MiB (${f(r.engine.memory.peak, 0)} at the end).`,
      ),
    ...results
      .filter((r) => r.apiScrapeMs !== undefined)
      .map(
        (r) =>
          `- ${sizeLabel(r.size)} api, one scrape of its /metrics (state metrics included): ${f(r.apiScrapeMs!)} ms.`,
      ),
    ...results
      .filter((r) => r.intakeTrace)
      .map((r) => `- ${sizeLabel(r.size)} intake inside the api (\`--trace-intake\`; p50 / p99 ms): ${r.intakeTrace}.`),
    ...results
      .filter((r) => r.intake.slowest?.length)
      .map(
        (r) =>
          `- ${sizeLabel(r.size)} intake, the five slowest requests (#: place in the sending order, ${RATE}/s): ` +
          `ours ${slowestLine(r.intake)}` +
          (r.reference?.intake.slowest?.length ? `; reference ${slowestLine(r.reference.intake)}` : '') +
          `; the unmeasured warm-up: ours ${warmup(r.intake)}` +
          (r.reference ? `; reference ${warmup(r.reference.intake)}` : '') +
          '.',
      ),
    '',
    ...targets,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const revision = sourceRevision();
  const venv = values['no-reference'] ? undefined : await e2eVenv();
  console.log('compiling (the operator runs from dist/, as in the image)...');
  compile();
  const results: ScaleResult[] = [];
  for (const size of SIZES) {
    const r = await measureOurs(size);
    if (venv) r.reference = await measureReference(size, venv);
    results.push(r);
    // After each size, so a long run that is stopped still leaves the sizes it finished.
    const section = render(results, new Date(), revision);
    console.log(section);
    if (!values['no-write']) writeSection('Scale', section);
  }
}

await main();
process.exit(0);
