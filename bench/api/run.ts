// bench/api: our facade (one process, MASAKARI_COMPONENTS=api) against the
// reference masakari-api 22.0.0 (one eventlet worker, SQLite) on the same
// machine, in one run, both pointed at the same Nova simulator.
//
//   node --import tsx bench/api/run.ts [--seconds 10] [--concurrency 8] [--no-write]
//        [--no-reference] [--heap-snapshots DIR] [--node-options '...'] [--env K=V]...
//
// Measures GET /v1/segments with 100 segments, GET /v1/segments/{id}/hosts
// with 100 hosts (requests/s, p50, p99), POST /v1/notifications latency
// (ours with 1000 hosts in the namespace), and memory: resident set idle and
// after the load, and our live heap after a forced GC (read through the
// facade's inspector, so the product needs no debug endpoint). Writes the
// "API" section of docs/benchmarks.md.
//
// --no-reference      ours only (memory investigations; implies --no-write)
// --heap-snapshots D  write D/idle.heapsnapshot and D/loaded.heapsnapshot
// --node-options S    V8/Node flags for the facade instead of the deployed ones
// --env K=V           extra environment for the facade (repeatable)
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { loadAll } from 'js-yaml';
import { startStack } from '../../test/e2e/support/stack.ts';
import { startReferenceMasakari } from '../../test/e2e/support/reference-masakari.ts';
import { e2eVenv } from '../../test/e2e/support/python-env.ts';
import { freePort } from '../../test/e2e/support/net.ts';
import { closedLoop, sequential, type LoadResult } from '../lib/load.ts';
import { cpuMs, memoryMiB } from '../lib/proc.ts';
import { heapSnapshot, installGcCounter, readGcCounter, sampleMemory, type MemorySample } from '../lib/inspector.ts';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const optString = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const SECONDS = opt('seconds', 10);
const CONCURRENCY = opt('concurrency', 8);
const REFERENCE = !args.includes('--no-reference');
const WRITE = REFERENCE && !args.includes('--no-write');
const SNAPSHOTS = optString('heap-snapshots');
const NODE_OPTIONS_OVERRIDE = optString('node-options');
/** --env K=V (repeatable): extra environment for the facade, e.g. to try a malloc setting. */
const EXTRA_ENV = Object.fromEntries(
  args.flatMap((a, i) => (a === '--env' && args[i + 1]?.includes('=') ? [args[i + 1]!.split(/=(.*)/s, 2)] : [])),
) as Record<string, string>;
const HOSTS = Array.from({ length: 1000 }, (_, i) => `bench-${String(i).padStart(4, '0')}`);

interface Created {
  segment: { uuid: string };
}

async function post(base: string, path: string, body: unknown): Promise<{ status: number; json: Created }> {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  return { status: r.status, json: (text ? JSON.parse(text) : null) as Created };
}

async function inParallel<T>(items: T[], width: number, f: (t: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await f(items[i] as T, i);
      }
    }),
  );
}

/** 100 segments; the first one gets `hostsInFirst` hosts, the rest of `hostCount` go round the others. */
async function seed(base: string, hostCount: number): Promise<string> {
  const segs: string[] = [];
  await inParallel(
    Array.from({ length: 100 }, (_, i) => i),
    4,
    async (i) => {
      const r = await post(base, '/v1/segments', {
        segment: { name: `bench-seg-${String(i).padStart(3, '0')}`, recovery_method: 'auto', service_type: 'COMPUTE' },
      });
      if (r.status !== 201) throw new Error(`segment create: ${r.status} ${JSON.stringify(r.json)}`);
      segs[i] = r.json.segment.uuid;
    },
  );
  await inParallel(HOSTS.slice(0, hostCount), 4, async (name, i) => {
    const seg = i < 100 ? segs[0] : segs[1 + (i % 99)];
    const r = await post(base, `/v1/segments/${seg}/hosts`, {
      host: { name, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    if (r.status !== 201) throw new Error(`host create ${name}: ${r.status} ${JSON.stringify(r.json)}`);
  });
  return segs[0] as string;
}

async function intake(base: string, n: number) {
  return sequential(n, async (i) => {
    const r = await post(base, '/v1/notifications', {
      notification: {
        type: 'COMPUTE_HOST',
        hostname: HOSTS[i % HOSTS.length],
        generated_time: new Date().toISOString().replace('Z', ''),
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
    });
    return r.status;
  });
}

type IntakeResult = Awaited<ReturnType<typeof intake>>;

const fmt = (x: number, d = 1) => x.toFixed(d);

/**
 * A closed-loop result with the server's CPU time per request and, for ours,
 * the share of the run spent in GC pauses (both robust to a busy shared machine,
 * unlike requests/s).
 */
type Measured = LoadResult & { cpuUsPerRequest: number; gcPercent: number };
interface Row {
  what: string;
  ours: Measured;
  ref: Measured | undefined;
}

interface MemoryRow {
  what: string;
  ours: number;
  ref: number;
}

/**
 * The facade's V8 flags: those config/manager/manager.yaml gives the api
 * container (the chart computes the same for the default 512Mi limit), unless
 * --node-options overrides them.
 */
async function facadeNodeOptions(): Promise<string> {
  if (NODE_OPTIONS_OVERRIDE !== undefined) return NODE_OPTIONS_OVERRIDE;
  const manifests = loadAll(await readFile(new URL('../../config/manager/manager.yaml', import.meta.url), 'utf8'));
  const env = manifests
    .flatMap((m) => (m as DeploymentLike)?.spec?.template?.spec?.containers ?? [])
    .find((c) => c.env?.some((e) => e.name === 'MASAKARI_COMPONENTS' && e.value === 'api'))?.env;
  const value = env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
  if (value === undefined) throw new Error('config/manager/manager.yaml: no NODE_OPTIONS for the api container');
  return value;
}

interface DeploymentLike {
  spec?: { template?: { spec?: { containers?: Array<{ env?: Array<{ name: string; value?: string }> }> } } };
}

async function main() {
  const venv = REFERENCE ? await e2eVenv() : undefined;
  console.log('compiling (the facade runs from dist/, as in the image)...');
  execFileSync(
    process.execPath,
    [new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname, '-p', 'tsconfig.build.json'],
    {
      cwd: new URL('../..', import.meta.url).pathname,
      stdio: 'inherit',
    },
  );
  const inspectPort = await freePort();
  const nodeOptions = await facadeNodeOptions();
  console.log(`starting control plane, simulator and facade (NODE_OPTIONS: ${nodeOptions || 'none'})...`);
  const stack = await startStack({
    prefix: 'bench',
    components: 'api',
    auth: 'noauth2',
    sim: { hosts: HOSTS },
    compiled: true,
    env: { ...EXTRA_ENV, NODE_OPTIONS: `${nodeOptions} --inspect=127.0.0.1:${inspectPort}`.trim() },
  });
  const c = stack.sim.credentials;
  const ref = venv
    ? await startReferenceMasakari({
        venv,
        authUrl: stack.sim.authUrl,
        username: c.OS_USERNAME as string,
        password: c.OS_PASSWORD as string,
        projectName: c.OS_PROJECT_NAME as string,
      })
    : undefined;
  try {
    // Idle: started and synced, caches empty, nothing served yet.
    const oursIdleRss = await memoryMiB(stack.operator.child.pid);
    const refIdleRss = await memoryMiB(ref?.pid);
    if (SNAPSHOTS) await snapshot(inspectPort, `${SNAPSHOTS}/idle.heapsnapshot`);
    const oursIdle = await sampleMemory(inspectPort, { gc: true });
    await installGcCounter(inspectPort);

    console.log('seeding ours: 100 segments, 1000 hosts...');
    const oursSeg = await seed(stack.operator.apiUrl, 1000);
    console.log('seeding reference: 100 segments, 100 hosts...');
    const refSeg = ref ? await seed(ref.url, 100) : '';

    const load = async (url: string, path: string, pid: number | undefined, gcPort?: number): Promise<Measured> => {
      let cpuAtStart = NaN;
      let cpuAtEnd = NaN;
      const gcBefore = gcPort ? await readGcCounter(gcPort) : undefined;
      const startedAt = performance.now();
      const r = await closedLoop({
        url,
        path,
        concurrency: CONCURRENCY,
        durationMs: SECONDS * 1000,
        warmupMs: 1000,
        onMeasure: (phase) => (phase === 'start' ? (cpuAtStart = cpuMs(pid)) : (cpuAtEnd = cpuMs(pid))),
      });
      const wallMs = performance.now() - startedAt;
      const gcAfter = gcPort ? await readGcCounter(gcPort) : undefined;
      return {
        ...r,
        cpuUsPerRequest: ((cpuAtEnd - cpuAtStart) * 1000) / r.requests,
        gcPercent: gcBefore && gcAfter ? ((gcAfter.pauseMs - gcBefore.pauseMs) / wallMs) * 100 : NaN,
      };
    };
    const rows: Row[] = [];
    for (const [what, oursPath, refPath] of [
      ['GET /v1/segments (100 segments)', '/v1/segments', '/v1/segments'],
      ['GET /v1/segments/{id}/hosts (100 hosts)', `/v1/segments/${oursSeg}/hosts`, `/v1/segments/${refSeg}/hosts`],
    ] as const) {
      console.log(`measuring ${what}...`);
      const ours = await load(stack.operator.apiUrl, oursPath, stack.operator.child.pid, inspectPort);
      const r = ref ? await load(ref.url, refPath, ref.pid) : undefined;
      rows.push({ what, ours, ref: r });
    }
    console.log('measuring POST /v1/notifications...');
    const gcBeforeIntake = await readGcCounter(inspectPort);
    const oursIntake = await intake(stack.operator.apiUrl, 500);
    const gcAfterIntake = await readGcCounter(inspectPort);
    console.log(
      `ours during intake: ${gcAfterIntake.count - gcBeforeIntake.count} GCs, ` +
        `${fmt(gcAfterIntake.pauseMs - gcBeforeIntake.pauseMs)} ms paused in all ` +
        `(scavenges: ${gcAfterIntake.scavenges - gcBeforeIntake.scavenges}, ` +
        `${fmt(gcAfterIntake.scavengePauseMs - gcBeforeIntake.scavengePauseMs)} ms)`,
    );
    const refIntake = ref ? await intake(ref.url, 100) : undefined;
    // Resident sets first: the forced GC below would shrink ours.
    const oursRss = await memoryMiB(stack.operator.child.pid);
    const refRss = await memoryMiB(ref?.pid);
    const oursLoaded = await sampleMemory(inspectPort, { gc: false });
    if (SNAPSHOTS) await snapshot(inspectPort, `${SNAPSHOTS}/loaded.heapsnapshot`);
    const oursLive = await sampleMemory(inspectPort, { gc: true });
    console.log(
      'memory',
      JSON.stringify({ oursIdle, oursLoaded, oursLive }, (_k, v: unknown) =>
        typeof v === 'number' ? Math.round(v * 10) / 10 : v,
      ),
    );

    const memory: MemoryRow[] = [
      { what: 'resident set, idle (started, caches empty)', ours: oursIdleRss, ref: refIdleRss },
      { what: 'resident set after the run', ours: oursRss, ref: refRss },
      {
        what: "ours: live heap after a forced GC, after the run (vs the reference's resident set)",
        ours: oursLive.heapUsedMiB,
        ref: refRss,
      },
    ];
    const section = render(
      rows,
      oursIntake,
      refIntake,
      memory,
      { idle: oursIdle, loaded: oursLoaded, live: oursLive },
      nodeOptions,
    );
    console.log(section);
    if (WRITE) await writeSection(section);
  } finally {
    await ref?.stop();
    await stack.stop();
  }
}

async function snapshot(port: number, file: string): Promise<void> {
  await heapSnapshot(port, file);
  console.log(`heap snapshot: ${file}`);
}

const ratio = (ours: number, ref: number | undefined) => (ref ? `**${fmt(ours / ref)}×**` : '—');
const mib = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : fmt(x, 0));

function render(
  rows: Row[],
  oursIntake: IntakeResult,
  refIntake: IntakeResult | undefined,
  memory: MemoryRow[],
  samples: { idle: MemorySample; loaded: MemorySample; live: MemorySample },
  nodeOptions: string,
): string {
  const { idle, loaded, live } = samples;
  const newSpace = (m: MemorySample) => m.spaces.new_space?.sizeMiB ?? NaN;
  return [
    '## API',
    '',
    `Produced by \`bench/api/run.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} cores,`,
    `closed loop with ${CONCURRENCY} concurrent clients for ${SECONDS} s per row after a 1 s warm-up, both servers on loopback`,
    'on the same machine at the same time as the local kube-apiserver and etcd. Ours: one facade process',
    '(`MASAKARI_COMPONENTS=api`, noauth2, compiled `dist/`) reading from its informer cache, started with the',
    `deployed \`NODE_OPTIONS\` (\`${nodeOptions || 'none'}\`, config/manager and the chart's default for a 512Mi limit).`,
    'Reference: masakari-api 22.0.0 from PyPI',
    '(one eventlet worker, noauth2, SQLite).',
    '',
    '| request | ours req/s | ours p50 ms | ours p99 ms | ours CPU µs/req | ours time in GC | reference req/s | reference p50 ms | reference p99 ms | reference CPU µs/req | throughput ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${fmt(r.ours.rps, 0)} | ${fmt(r.ours.p50ms)} | ${fmt(r.ours.p99ms)} | ${fmt(r.ours.cpuUsPerRequest, 0)} | ${fmt(r.ours.gcPercent)} % | ${r.ref ? fmt(r.ref.rps, 0) : '—'} | ${r.ref ? fmt(r.ref.p50ms) : '—'} | ${r.ref ? fmt(r.ref.p99ms) : '—'} | ${r.ref ? fmt(r.ref.cpuUsPerRequest, 0) : '—'} | ${ratio(r.ours.rps, r.ref?.rps)} |`,
    ),
    '',
    'Notification intake (`POST /v1/notifications`, sequential, each to a different host, all accepted with 202):',
    '',
    '| server | hosts in the namespace | requests | p50 ms | p99 ms | statuses |',
    '|---|---:|---:|---:|---:|---|',
    `| ours | 1000 | 500 | ${fmt(oursIntake.p50ms)} | ${fmt(oursIntake.p99ms)} | ${JSON.stringify(oursIntake.statuses)} |`,
    refIntake
      ? `| reference (notification_delay_max = 0) | 100 | 100 | ${fmt(refIntake.p50ms)} | ${fmt(refIntake.p99ms)} | ${JSON.stringify(refIntake.statuses)} |`
      : '| reference | — | — | — | — | not run |',
    '',
    'Memory (MiB). Ours holds 100 segments, 1000 hosts and 500 notifications in its caches after the run; the',
    "reference's database is a separate SQLite file (ours lives in etcd). The resident set is what a container",
    "memory limit counts; the reference's includes the private pages of the worker process masakari-api forks and",
    'serves from (pages it shares with its parent count once).',
    '',
    '| memory | ours MiB | reference MiB | ours / reference |',
    '|---|---:|---:|---:|',
    ...memory.map((m) => `| ${m.what} | ${mib(m.ours)} | ${mib(m.ref)} | ${ratio(m.ours, m.ref)} |`),
    '',
    'Where ours goes (MiB; V8 heap = reserved by V8 for JavaScript objects, of which live = reachable after a',
    'forced GC; new space = the young generation, sized by `--max-semi-space-size`; external = buffers and',
    'other memory held outside the V8 heap):',
    '',
    '| facade | resident set | V8 heap | V8 heap used | new space | external (array buffers) |',
    '|---|---:|---:|---:|---:|---:|',
    `| idle, after a forced GC | ${mib(idle.rssMiB)} | ${mib(idle.heapTotalMiB)} | ${mib(idle.heapUsedMiB)} | ${mib(newSpace(idle))} | ${mib(idle.externalMiB)} (${mib(idle.arrayBuffersMiB)}) |`,
    `| after the run | ${mib(loaded.rssMiB)} | ${mib(loaded.heapTotalMiB)} | ${mib(loaded.heapUsedMiB)} | ${mib(newSpace(loaded))} | ${mib(loaded.externalMiB)} (${mib(loaded.arrayBuffersMiB)}) |`,
    `| after the run, after a forced GC | ${mib(live.rssMiB)} | ${mib(live.heapTotalMiB)} | ${mib(live.heapUsedMiB)} | ${mib(newSpace(live))} | ${mib(live.externalMiB)} (${mib(live.arrayBuffersMiB)}) |`,
    '',
    'Idle, about half of the resident set is the `node` binary itself (file-backed pages: V8, ICU, the built-in',
    "snapshot, ~54 MiB), the rest Node's own allocations and a ~20 MiB V8 heap of loaded code (express, undici, ajv,",
    'pino, prom-client; @kubernetes/client-node is imported only for exec plugins and auth providers, never in a',
    'pod). The caches are small: 100 segments, 1000 hosts and 500 notifications add under 10 MiB of live heap (one',
    'copy of each object, without managedFields; no mapped or rendered copies). Under load the rest is garbage',
    'waiting for a collection: V8 sizes its young generation from the memory it sees and on a large machine grows',
    'it to 64 MiB per semi-space (new space 128 MiB, plus the response buffers its dead objects still hold), which',
    "put the facade at ~310 MiB after this run (`--node-options ''` reproduces it). The deployed",
    '`--max-semi-space-size=8` caps the new space at 16 MiB for a few per cent more time in GC pauses (column',
    '"ours time in GC": share of the run, warm-up included); `--max-old-space-size` follows the container\'s memory',
    'limit (the chart: limit less 128 MiB, at least half), so a heap that outgrows it fails with a V8',
    'out-of-memory error instead of an OOM kill.',
    '',
    'Targets: list throughput at least 10× the reference; intake p99 under 20 ms with 1000 hosts. The reference',
    'normally also sleeps a random 0–5 s per notification (`notification_delay_max`) when no coordination backend',
    'is configured; it is set to 0 here so that only the processing is compared.',
    '',
  ].join('\n');
}

/** Replaces (or appends) the "## API" section of docs/benchmarks.md. */
async function writeSection(section: string): Promise<void> {
  const file = new URL('../../docs/benchmarks.md', import.meta.url);
  let doc = '# Benchmarks\n';
  try {
    doc = await readFile(file, 'utf8');
  } catch {
    /* first run */
  }
  const start = doc.indexOf('\n## API\n');
  if (start >= 0) {
    const rest = doc.indexOf('\n## ', start + 1);
    doc = doc.slice(0, start + 1) + section + (rest >= 0 ? doc.slice(rest + 1) : '');
  } else {
    doc = doc.trimEnd() + '\n\n' + section;
  }
  await writeFile(file, doc);
}

await main();
process.exit(0);
