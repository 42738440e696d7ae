// bench/storm: a notification storm on one host, as masakari-monitors send
// during a failure: `--count` VM notifications (each a different instance,
// so none is a duplicate) for one host, `--concurrency` in flight, through
// the facade. Measured: the answers (any 5xx is a failure), sustained
// accepted notifications/s, and etcd's own database size
// (etcd_mvcc_db_total_size_in_bytes on its client URL's /metrics) before and
// after, i.e. the bytes one accepted notification costs etcd, all
// bookkeeping included. Then the same load against masakari-api 22.0.0
// (`--reference-count` requests; its rate is what is compared).
//
// CPU: user + system time each process used during the storm (/proc, so a
// busy machine inflates these far less than it slows the run), per accepted
// notification: ours (api), kube-apiserver and etcd; the reference's whole
// process tree. It says which process limits the rate on a quiet machine.
//
// Ours: one process, MASAKARI_COMPONENTS=api (the reference runs without an
// engine too), compiled dist/ with the deployed NODE_OPTIONS, on a fresh local
// control plane whose etcd has the default 2 GiB quota. The run stops early
// after 100 server errors (e.g. etcd out of space: every later write fails).
//
//   node --import tsx bench/storm/run.ts [--count 20000] [--concurrency 8]
//        [--reference-count 1000] [--no-reference] [--no-write] [--profile DIR]
//        [--api-node-options='...']
//
// --api-node-options: appended to the api process's deployed NODE_OPTIONS
// (to try V8 flags before they go into config/manager/manager.yaml).
//
// --profile DIR: the api process runs with --cpu-prof and writes its CPU
// profile (.cpuprofile, open in Chrome DevTools or bench/lib/cpuprofile.ts)
// into DIR when it stops.
//
// --apiserver-profile FILE: a 30 s CPU profile of kube-apiserver (its
// /debug/pprof/profile, read with kubectl) taken 10 s into the storm, written
// to FILE (read with `go tool pprof -top FILE`).
//
// Writes the "Storm" section of docs/benchmarks.md (not with --no-write).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startControlPlane } from '../../tools/controlplane/index.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import { startSimulator } from '../../tools/simulator/server.ts';
import { startReferenceMasakari } from '../../test/e2e/support/reference-masakari.ts';
import { e2eVenv } from '../../test/e2e/support/python-env.ts';
import { apiserverCpuProfile } from '../lib/apiserver-profile.ts';
import { sourceRevision, writeSection } from '../lib/docs.ts';
import { fixedCount, type CountedResult } from '../lib/load.ts';
import { compile, deployedNodeOptions, startBenchOperator } from '../lib/operator.ts';
import { cpuMs, loadAverage, memoryMiB, peakRssMiB } from '../lib/proc.ts';
import { scrape } from '../lib/prometheus.ts';
import { referenceHost } from '../lib/reference.ts';
import { accepted, serverErrors, stormStopReason } from './judge.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '8' },
    'reference-count': { type: 'string', default: '1000' },
    'no-reference': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    profile: { type: 'string' },
    'apiserver-profile': { type: 'string' },
    'api-node-options': { type: 'string', default: '' },
  },
});
const COUNT = Number(values.count);
const CONCURRENCY = Number(values.concurrency);
const REFERENCE_COUNT = Number(values['reference-count']);
const HOST = 'storm-host';

interface EtcdSize {
  total: number;
  inUse: number;
}

/** CPU milliseconds each process used during the storm. */
interface StormCpu {
  api: number;
  apiserver: number;
  etcd: number;
}

interface ReferenceResult {
  run: CountedResult;
  cpuMs: number;
}

interface StormResult {
  run: CountedResult;
  cpu: StormCpu;
  etcdBefore: EtcdSize;
  etcdAfter: EtcdSize;
  quotaBytes: number;
  apiMiB: number;
  apiPeakMiB: number;
  loadBefore: number;
}

async function etcdSize(etcdUrl: string): Promise<EtcdSize> {
  const url = `${etcdUrl}/metrics`;
  return {
    total: await scrape(url, 'etcd_mvcc_db_total_size_in_bytes'),
    inUse: await scrape(url, 'etcd_mvcc_db_total_size_in_use_in_bytes'),
  };
}

function stormLoad(base: string, count: number): Promise<CountedResult> {
  const started = performance.now();
  return fixedCount({
    count,
    concurrency: CONCURRENCY,
    send: async (i) => {
      const r = await fetch(`${base}/v1/notifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          notification: {
            type: 'VM',
            hostname: HOST,
            generated_time: new Date().toISOString().slice(0, 19),
            payload: {
              event: 'LIFECYCLE',
              instance_uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
              vir_domain_event: 'STOPPED_FAILED',
            },
          },
        }),
        signal: AbortSignal.timeout(60_000),
      });
      await r.arrayBuffer();
      return r.status;
    },
    stopWhen: stormStopReason,
    onProgress: (done) => {
      if (done % Math.max(1, Math.ceil(count / 10)) === 0) {
        const s = (performance.now() - started) / 1000;
        console.log(`  ${done}/${count} (${s.toFixed(0)} s, ${(done / s).toFixed(1)}/s)`);
      }
    },
  });
}

/** kube-apiserver's CPU profile for 30 s, starting 10 s from now, into `file`. */
async function profileApiserver(kubeconfig: string, file: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 10_000));
  await apiserverCpuProfile(kubeconfig, 30, file);
  console.log(`kube-apiserver CPU profile: ${file}`);
}

async function measureOurs(): Promise<StormResult> {
  const cp = await startControlPlane({ profiling: values['apiserver-profile'] !== undefined });
  const kube = createKubeClient(loadKubeConfig({ env: { KUBECONFIG: cp.kubeconfigPath } }));
  const sim = await startSimulator({ hosts: [HOST] });
  const namespace = 'storm';
  try {
    await kube.create(RESOURCES.namespaces, undefined, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    const api = await startBenchOperator({
      kubeconfigPath: cp.kubeconfigPath,
      namespace,
      components: 'api',
      openstack: sim.credentials,
      nodeOptions: [
        deployedNodeOptions('api'),
        values['api-node-options'],
        values.profile ? `--cpu-prof --cpu-prof-dir=${values.profile}` : '',
      ]
        .filter(Boolean)
        .join(' '),
      readyTimeoutMs: 120_000,
    });
    try {
      await referenceHost(api.apiUrl, HOST); // the same two REST calls work on ours
      await new Promise((r) => setTimeout(r, 2000));
      const etcdBefore = await etcdSize(cp.etcdUrl);
      const quotaBytes = await scrape(`${cp.etcdUrl}/metrics`, 'etcd_server_quota_backend_bytes');
      const loadBefore = loadAverage();
      const cpuNow = (): StormCpu => ({
        api: cpuMs(api.pid),
        apiserver: cpuMs(cp.pids.apiserver),
        etcd: cpuMs(cp.pids.etcd),
      });
      const cpuBefore = cpuNow();
      console.log(`storm: ${COUNT} VM notifications for one host, ${CONCURRENCY} in flight...`);
      const apiserverProfile = values['apiserver-profile']
        ? profileApiserver(cp.kubeconfigPath, values['apiserver-profile'])
        : undefined;
      const run = await stormLoad(api.apiUrl, COUNT);
      await apiserverProfile;
      const cpuAfter = cpuNow();
      await new Promise((r) => setTimeout(r, 2000));
      const result: StormResult = {
        run,
        cpu: {
          api: cpuAfter.api - cpuBefore.api,
          apiserver: cpuAfter.apiserver - cpuBefore.apiserver,
          etcd: cpuAfter.etcd - cpuBefore.etcd,
        },
        etcdBefore,
        etcdAfter: await etcdSize(cp.etcdUrl),
        quotaBytes,
        apiMiB: await memoryMiB(api.pid),
        apiPeakMiB: await peakRssMiB(api.pid),
        loadBefore,
      };
      console.log(JSON.stringify(result));
      return result;
    } finally {
      await api.stop();
    }
  } finally {
    await kube.close();
    await sim.stop();
    await cp.stop();
  }
}

async function measureReference(venv: string): Promise<ReferenceResult> {
  const sim = await startSimulator({ hosts: [HOST] });
  const c = sim.credentials;
  const ref = await startReferenceMasakari({
    venv,
    authUrl: sim.authUrl,
    username: c.OS_USERNAME as string,
    password: c.OS_PASSWORD as string,
    projectName: c.OS_PROJECT_NAME as string,
  });
  try {
    await referenceHost(ref.url, HOST);
    console.log(`reference storm: ${REFERENCE_COUNT} VM notifications, ${CONCURRENCY} in flight...`);
    const before = cpuMs(ref.pid);
    const run = await stormLoad(ref.url, REFERENCE_COUNT);
    const result = { run, cpuMs: cpuMs(ref.pid) - before };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await ref.stop();
    await sim.stop();
  }
}

const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const statusText = (r: CountedResult) =>
  Object.entries(r.statuses)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

function render(ours: StormResult, reference: ReferenceResult | undefined, when: Date, revision: string): string {
  const ref = reference?.run;
  const ok = accepted(ours.run);
  const perOk = (ms: number) => f(ms / ok);
  const rate = ok / ours.run.seconds;
  const growth = ours.etcdAfter.total - ours.etcdBefore.total;
  const perNotification = growth / ok;
  const refRate = ref ? accepted(ref) / ref.seconds : NaN;
  const yes = (b: boolean) => (b ? 'yes' : '**no**');
  const MiB = 2 ** 20;
  return [
    '## Storm',
    '',
    `Produced by \`bench/storm/run.ts --count ${COUNT} --reference-count ${REFERENCE_COUNT}\` at commit ${revision} on ${when.toISOString().slice(0, 16).replace('T', ' ')} UTC,`,
    `${os.cpus().length} cores (load average before the storm: ${f(ours.loadBefore)}; the machine is shared).`,
    '',
    `- **Load**: VM notifications (\`LIFECYCLE\`/\`STOPPED_FAILED\`, each a different instance, so none is a`,
    `  duplicate) for one host, ${CONCURRENCY} clients in flight, closed loop, through the REST facade.`,
    "- **Ours**: one process, `MASAKARI_COMPONENTS=api`, compiled `dist/`, deployed `NODE_OPTIONS` and the image's",
    `  allocator settings, on a fresh local control plane (etcd quota ${f(ours.quotaBytes / MiB, 0)} MiB, the default).`,
    '  The run stops early after 100 server errors.',
    "- **etcd growth**: `etcd_mvcc_db_total_size_in_bytes` (etcd's own /metrics on its client URL, the size",
    '  its quota is checked against) after the storm less before, divided by the accepted notifications;',
    '  everything written for them counts (Notifications, duplicate-detection bookkeeping, ids). The API server',
    "  compacts etcd's history every 5 minutes and etcd reuses the freed pages, so a slower storm (a busier",
    '  machine) shows less growth than a fast one for the same writes.',
    '- **CPU**: user + system time each process used during the storm (from /proc), per accepted notification;',
    '  a busy machine inflates these far less than it slows the run, so they say which process limits a quiet one.',
    '- **Reference**: masakari-api 22.0.0 (one worker, SQLite, noauth2, no engine), same load,',
    `  ${REFERENCE_COUNT} requests.`,
    '',
    '| | ours | reference |',
    '|---|---:|---:|',
    `| requests sent | ${ours.run.sent}${ours.run.stoppedEarly ? ` (stopped: ${ours.run.stoppedEarly})` : ''} | ${ref ? ref.sent : '—'} |`,
    `| answers | ${statusText(ours.run)} | ${ref ? statusText(ref) : '—'} |`,
    `| 5xx | ${serverErrors(ours.run)} | ${ref ? serverErrors(ref) : '—'} |`,
    `| accepted notifications/s (sustained) | ${f(rate)} | ${ref ? f(refRate) : '—'} |`,
    `| POST p50 / p99 ms | ${f(ours.run.p50ms)} / ${f(ours.run.p99ms)} | ${ref ? `${f(ref.p50ms)} / ${f(ref.p99ms)}` : '—'} |`,
    `| etcd database before → after (MiB) | ${f(ours.etcdBefore.total / MiB)} → ${f(ours.etcdAfter.total / MiB)} (in use ${f(ours.etcdBefore.inUse / MiB)} → ${f(ours.etcdAfter.inUse / MiB)}) | — (SQLite) |`,
    `| etcd growth per accepted notification | ${f(perNotification / 1024)} KB | — |`,
    `| CPU ms per accepted notification: api / kube-apiserver / etcd | ${perOk(ours.cpu.api)} / ${perOk(ours.cpu.apiserver)} / ${perOk(ours.cpu.etcd)} | ${ref && reference ? f(reference.cpuMs / accepted(ref)) : '—'} (masakari-api) |`,
    `| api resident set after / peak (MiB) | ${f(ours.apiMiB, 0)} / ${f(ours.apiPeakMiB, 0)} | — |`,
    '',
    '| target | measured | met |',
    '|---|---:|:---:|',
    `| no 5xx | ${serverErrors(ours.run)} | ${yes(serverErrors(ours.run) === 0 && !ours.run.stoppedEarly)} |`,
    `| etcd growth < 20 KB per accepted notification | ${f(perNotification / 1024)} KB | ${yes(perNotification < 20 * 1024)} |`,
    `| ≥ 100 notifications/s | ${f(rate)} | ${yes(rate >= 100)} |`,
    `| ≥ 10× the reference | ${ref ? `${f(rate / refRate)}×` : '—'} | ${ref ? yes(rate >= 10 * refRate) : '—'} |`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const revision = sourceRevision();
  const venv = values['no-reference'] ? undefined : await e2eVenv();
  console.log('compiling (the facade runs from dist/, as in the image)...');
  compile();
  const ours = await measureOurs();
  const ref = venv ? await measureReference(venv) : undefined;
  const section = render(ours, ref, new Date(), revision);
  console.log(section);
  if (!values['no-write']) writeSection('Storm', section);
}

await main();
process.exit(0);
