// Test runner: `node scripts/run-tests.mjs <unit|integration|e2e|chaos|fuzz|cluster|openstack|all> [--filter REGEX]`
// (npm test = all). Runs on the Node 24 from node_modules/.bin (npm puts it
// first in PATH).
//
//   unit         uvu over src/**/*.test.ts, tools/**/*.test.ts, bench/**/*.test.ts and scripts/**/*.test.ts
//   integration  starts ONE local control plane (tools/controlplane), runs uvu over
//                test/integration/**/*.test.ts with MASAKARI_TEST_KUBECONFIG set, stops it
//   e2e          the same over test/e2e/**/*.test.ts (none there: nothing to run)
//   chaos        uvu over test/chaos/**/*.test.ts: 10 seeded fault-injection runs on a control plane
//                the suite starts itself (it freezes and restarts kube-apiserver), then test/chaos/chaos.test.ts
//                again for 10 runs on the production-shaped one ("chaos ha": 3 etcd members, 2 kube-apiservers,
//                a balancer; MASAKARI_CHAOS_SHAPE=ha, quorum lost for at most 20 s: MASAKARI_CHAOS_QUICK=1);
//                MASAKARI_CHAOS_SEED=N runs one seed on each, MASAKARI_CHAOS_RUNS / MASAKARI_CHAOS_BASE_SEED
//                pick the seeds of both, MASAKARI_CHAOS_SHAPE=single|ha runs only that shape; the first pass
//                also runs test/chaos/ha-*.test.ts (an etcd restore, a 60 s quorum loss), each on its own ha session
//   fuzz         uvu over test/fuzz/**/*.test.ts: schemathesis (its venv built on first use) against
//                facades it starts in noauth2 and keystone mode, at least 10,000 requests
//   cluster      builds the image (hack/image/build.sh), starts ONE real single-node
//                cluster with it loaded (tools/controlplane/cluster.ts; needs root), runs
//                uvu over test/cluster/**/*.test.ts with MASAKARI_TEST_CLUSTER_* set, stops it;
//                MASAKARI_TEST_CLUSTER_CHART=DIR installs that chart instead of charts/masakari-operator
//                (test/cluster/README.md: the mutation check); its NHC chain (remediation-nhc.test.ts) starts a
//                private mini OpenStack (MASAKARI_TEST_NHC_NOVA=simulator: the Nova simulator instead)
//   openstack    the same over test/openstack/**/*.test.ts, plus ONE real mini OpenStack
//                (tools/openstack-cloud: Keystone, Placement, Nova with fake computes; its
//                venv built on first use) whose control API is MASAKARI_TEST_OPENSTACK_CONTROL
//   all          lint (eslint .), format (prettier --check .), typecheck (tsc --noEmit),
//                then unit, integration, e2e, cluster, chaos, fuzz, openstack;
//                the OpenStack install (venv, RabbitMQ, DB templates) runs in the background from the start
//
// Without root (or with --skip-root / MASAKARI_TEST_SKIP_ROOT=1, which `make test SKIP_ROOT=1` sets),
// `all` leaves out the suites that need root (scripts/test-prerequisites.mjs: cluster always;
// openstack while Debian's rabbitmq-server, openipmi or ipmitool is not installed) and says so: each has a summary line
// "left out (…)", and a line before the last names them all. Missing lua5.1 (the gitops health
// tests) is installed when root with apt-get, else named in the summary.
//
// Every uvu run (and each Node process it starts) runs with --unhandled-rejections=strict.
//
// --filter REGEX keeps only the test files whose path (relative to the suite's
// dir) matches. Every uvu run's Total/Passed/Skipped is added up; lint, format
// and typecheck count as one check each. The last line is exactly
// "N passed, N failed"; the exit status is 1 when anything failed (130 after SIGINT/SIGTERM).
//
// Timeouts (ms): MASAKARI_TEST_STATIC_TIMEOUT_MS (lint/format/typecheck, default
// 10 min each), MASAKARI_TEST_UNIT_TIMEOUT_MS (15 min),
// MASAKARI_TEST_SUITE_TIMEOUT_MS (integration, e2e: 40 min each), MASAKARI_TEST_CHAOS_TIMEOUT_MS
// (chaos: 30 min), MASAKARI_TEST_FUZZ_TIMEOUT_MS (fuzz: 40 min), MASAKARI_TEST_CLUSTER_TIMEOUT_MS
// (cluster: 30 min for the image and cluster binaries, the same again for the tests),
// MASAKARI_TEST_OPENSTACK_TIMEOUT_MS (openstack: 40 min, after its bring-up),
// MASAKARI_TEST_OPENSTACK_PREPARE_TIMEOUT_MS (its install: 30 min). A run past its
// timeout is killed and counted as failed.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LUA_MISSING, luaAction, probeMachine, suitesLeftOut } from './test-prerequisites.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Seeds of the chaos suite per control-plane shape (single, then ha) unless MASAKARI_CHAOS_RUNS says. */
const CHAOS_RUNS_PER_SHAPE = 10;
const MIN = 60_000;
const timeouts = {
  static: Number(process.env.MASAKARI_TEST_STATIC_TIMEOUT_MS) || 10 * MIN,
  unit: Number(process.env.MASAKARI_TEST_UNIT_TIMEOUT_MS) || 15 * MIN,
  suite: Number(process.env.MASAKARI_TEST_SUITE_TIMEOUT_MS) || 40 * MIN,
  chaos: Number(process.env.MASAKARI_TEST_CHAOS_TIMEOUT_MS) || 30 * MIN,
  fuzz: Number(process.env.MASAKARI_TEST_FUZZ_TIMEOUT_MS) || 40 * MIN,
  cluster: Number(process.env.MASAKARI_TEST_CLUSTER_TIMEOUT_MS) || 30 * MIN,
  openstack: Number(process.env.MASAKARI_TEST_OPENSTACK_TIMEOUT_MS) || 40 * MIN,
  openstackPrepare: Number(process.env.MASAKARI_TEST_OPENSTACK_PREPARE_TIMEOUT_MS) || 30 * MIN,
};

const USAGE =
  'usage: node scripts/run-tests.mjs <unit|integration|e2e|chaos|fuzz|cluster|openstack|all> [--filter REGEX] [--skip-root]';
const SUITES = ['unit', 'integration', 'e2e', 'chaos', 'fuzz', 'cluster', 'openstack', 'all'];

/** @type {{ name: string, passed: number, failed: number, skipped: number, note: string }[]} */
const results = [];
/** Suites left out, with why; and notes on missing prerequisites. Both printed in the summary. */
/** @type {{ suite: string, reason: string }[]} */
let leftOut = [];
/** @type {string[]} */
const prerequisiteNotes = [];
/** The command in progress, and a promise that settles when it has closed. */
/** @type {{ child: import('node:child_process').ChildProcess, closed: Promise<unknown> } | undefined} */
let running;
/** @type {{ stop(): Promise<void> } | undefined} */
let controlPlane;
/** @type {{ stop(): Promise<void> } | undefined} */
let openstackCloud;
/** @type {{ stop(): void } | undefined} */
let openstackPrepare;
let interrupted = false;

/** Node flag making an unhandled promise rejection an uncaught exception (see uvuSuite). */
const STRICT_REJECTIONS = '--unhandled-rejections=strict';

/** How long a test process may live on after printing its report before it is stopped. */
const LINGER_MS = 15_000;

const say = (line) => process.stdout.write(`${line}\n`);
const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex

/** SIGTERM now, SIGKILL 10 s later if it is still there. */
function stopChild(child) {
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
}

/**
 * Runs a command (stdout and stderr passed through), resolving with its exit
 * code and stdout. Past timeoutMs it is stopped (timedOut). With reportDone, a
 * process still alive LINGER_MS after its output matched reportDone (something
 * keeps its event loop alive) is stopped too (lingered); its report stands.
 */
function run(cmd, args, { env = {}, timeoutMs, reportDone }) {
  return new Promise((resolve) => {
    // after Ctrl-C nothing new starts; the summary is on its way
    if (interrupted) return resolve({ code: 1, signal: null, out: '', timedOut: false, lingered: false });
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    running = { child, closed: new Promise((r) => child.on('close', r)) };
    let out = '';
    let timedOut = false;
    let lingered = false;
    let lingerTimer;
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      out += chunk.toString('utf8');
      if (reportDone && !lingerTimer && reportDone.test(stripAnsi(out))) {
        lingerTimer = setTimeout(() => {
          lingered = true;
          say(
            `[run-tests] still running ${LINGER_MS} ms after its report (an open handle keeps it alive); stopping it`,
          );
          stopChild(child);
        }, LINGER_MS);
      }
    });
    const timer = setTimeout(() => {
      timedOut = true;
      say(`\n[run-tests] ${cmd} ${args.join(' ')}: no result after ${timeoutMs} ms; stopping it`);
      stopChild(child);
    }, timeoutMs);
    child.on('error', (e) => {
      out += `\n${e.message}`;
      say(`[run-tests] cannot run ${cmd}: ${e.message}`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(lingerTimer);
      running = undefined;
      resolve({ code: code ?? 1, signal, out, timedOut, lingered });
    });
  });
}

/** Binaries from node_modules, run on this Node (their shebang might find an older one). */
const bin = (pkgPath) => [process.execPath, join(ROOT, 'node_modules', ...pkgPath.split('/'))];

async function staticCheck(name, pkgPath, args) {
  say(`\n=== ${name}`);
  const [node, script] = bin(pkgPath);
  const r = await run(node, [script, ...args], { timeoutMs: timeouts.static });
  const ok = r.code === 0 && !r.timedOut;
  results.push({
    name,
    passed: ok ? 1 : 0,
    failed: ok ? 0 : 1,
    skipped: 0,
    note: ok ? 'ok' : r.timedOut ? 'timed out' : `exit ${r.code}`,
  });
}

/** Test files under dir (relative paths with '/'), as uvu would find them, filtered. */
function testFiles(dir, filter) {
  const found = [];
  const walk = (d) => {
    for (const entry of readdirSync(d)) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue;
      const full = join(d, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith('.test.ts')) found.push(relative(dir, full).split(sep).join('/'));
    }
  };
  if (existsSync(dir)) walk(dir);
  return found.filter((f) => !filter || filter.test(f)).sort();
}

const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function parseUvu(out) {
  const text = stripAnsi(out);
  const last = (re) => {
    const all = [...text.matchAll(re)];
    return all.length ? Number(all[all.length - 1][1]) : undefined;
  };
  return { total: last(/Total:\s+(\d+)/g), passed: last(/Passed:\s+(\d+)/g), skipped: last(/Skipped:\s+(\d+)/g) };
}

async function uvuSuite(name, dir, filter, { env = {}, timeoutMs }) {
  const files = testFiles(join(ROOT, dir), filter);
  if (!files.length) {
    say(`\n=== ${name}: no test files in ${dir}${filter ? ` matching ${filter}` : ''}`);
    results.push({ name, passed: 0, failed: 0, skipped: 0, note: 'no test files' });
    return;
  }
  say(`\n=== ${name}: ${files.length} file(s) in ${dir}`);
  // uvu matches its pattern against paths relative to dir: name the files exactly
  const pattern = `^(${files.map(escapeRegex).join('|')})$`;
  const [node, uvu] = bin('uvu/bin.js');
  const args = ['--import', 'tsx', uvu, dir, pattern, ...(process.stdout.isTTY ? [] : ['--no-color'])];
  // A promise rejected with no handler is a crash in production (src/main.ts exits on it), so every
  // test process, and every Node process a test starts (NODE_OPTIONS is inherited), treats it as one.
  const nodeOptions = [process.env.NODE_OPTIONS, STRICT_REJECTIONS].filter(Boolean).join(' ');
  const r = await run(node, args, {
    env: { ...env, NODE_OPTIONS: nodeOptions },
    timeoutMs,
    reportDone: /Duration:\s+\S+/,
  });
  const { total, passed, skipped } = parseUvu(r.out);
  if (total === undefined || passed === undefined) {
    results.push({
      name,
      passed: 0,
      failed: 1,
      skipped: 0,
      note: r.timedOut ? 'timed out' : `crashed before reporting (exit ${r.code})`,
    });
    return;
  }
  let failed = total - passed - (skipped ?? 0);
  let note = `${files.length} file(s)`;
  if (r.lingered) {
    // uvu had set its exit code before we stopped it; the report is complete
    note += ', did not exit after its report (open handle), stopped';
  } else if (r.code !== 0 && failed === 0) {
    // e.g. an exception after the report, or uvu's "Exiting early"
    failed = 1;
    note += `, exit ${r.code} without a failed test`;
  }
  if (r.timedOut) note += ', timed out';
  results.push({ name, passed, failed, skipped: skipped ?? 0, note });
}

/** Starts the shared control plane (built from Go modules on first use), runs fn, stops it. */
async function withControlPlane(name, fn) {
  if (interrupted) return;
  let cp;
  try {
    const { register } = await import('tsx/esm/api');
    register();
    const { startControlPlane } = await import('../tools/controlplane/index.ts');
    say(`\n=== ${name}: starting the local control plane`);
    cp = await startControlPlane({ log: (line) => say(`[controlplane] ${line}`) });
  } catch (e) {
    say(`[run-tests] ${name}: the control plane did not start: ${e instanceof Error ? e.message : e}`);
    results.push({ name, passed: 0, failed: 1, skipped: 0, note: 'control plane did not start' });
    return;
  }
  controlPlane = cp;
  try {
    await fn(cp);
  } finally {
    // stays set until stopped, so a signal handler awaits the same stop()
    await cp.stop();
    controlPlane = undefined;
  }
}

/**
 * The cluster suite: the image, built from the Dockerfile and saved as a
 * docker-archive, then ONE real cluster (tools/controlplane/cluster.ts) with
 * the image imported, shared by every test/cluster file.
 */
async function clusterSuite(filter) {
  const dir = 'test/cluster';
  if (interrupted) return;
  if (!testFiles(join(ROOT, dir), filter).length) {
    await uvuSuite('cluster', dir, filter, { timeoutMs: timeouts.cluster });
    return;
  }
  if (process.getuid?.() !== 0) {
    say(
      '\n=== cluster: needs root (kubelet, containerd, iptables); run it as root, as CI does (`make test` leaves it out when not root)',
    );
    results.push({ name: 'cluster', passed: 0, failed: 1, skipped: 0, note: 'needs root' });
    return;
  }
  const image = `masakari-operator:${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}`;
  const archive = join(tmpdir(), `masakari-operator-image-${process.pid}.tar`);
  say(`\n=== cluster: building ${image}`);
  const built = await run('bash', [join(ROOT, 'hack/image/build.sh'), image], {
    env: { IMAGE_ARCHIVE: archive },
    timeoutMs: timeouts.cluster,
  });
  if (built.code !== 0) {
    results.push({ name: 'cluster', passed: 0, failed: 1, skipped: 0, note: 'the image did not build' });
    return;
  }
  let cluster;
  try {
    const { register } = await import('tsx/esm/api');
    register();
    const { startCluster } = await import('../tools/controlplane/cluster.ts');
    say('\n=== cluster: starting the single-node cluster');
    cluster = await startCluster({ images: [archive], log: (line) => say(`[cluster] ${line}`) });
  } catch (e) {
    say(`[run-tests] cluster: the cluster did not start: ${e instanceof Error ? e.message : e}`);
    results.push({ name: 'cluster', passed: 0, failed: 1, skipped: 0, note: 'cluster did not start' });
    rmSync(archive, { force: true });
    return;
  }
  controlPlane = cluster;
  try {
    await uvuSuite('cluster', dir, filter, {
      env: {
        MASAKARI_TEST_CLUSTER_KUBECONFIG: cluster.kubeconfigPath,
        MASAKARI_TEST_CLUSTER_NODE_IP: cluster.nodeIp,
      },
      timeoutMs: timeouts.cluster,
    });
  } finally {
    await cluster.stop();
    controlPlane = undefined;
    rmSync(archive, { force: true });
  }
}

/**
 * `all` installs what the mini OpenStack needs (tools/openstack-cloud/prepare.ts: its venv, RabbitMQ,
 * the migrated database templates; minutes on a fresh machine, seconds once cached) in the background
 * from the start, so it overlaps with lint and the other suites. Resolves with whether it worked; the
 * openstack suite awaits it. Its output goes to a log file, shown only when it fails.
 */
function prepareOpenStackInBackground() {
  const logPath = join(tmpdir(), `masakari-openstack-prepare-${process.pid}.log`);
  const logFd = openSync(logPath, 'w');
  const started = Date.now();
  // its own process group: pip and the migrations it starts stop with it
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'tools/openstack-cloud/prepare.ts')], {
    cwd: ROOT,
    stdio: ['ignore', logFd, logFd],
    detached: true,
  });
  closeSync(logFd);
  const stopGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  openstackPrepare = { stop: () => stopGroup('SIGTERM') };
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      say(`[run-tests] openstack: the background install ran past ${timeouts.openstackPrepare} ms; stopping it`);
      stopGroup('SIGKILL');
    }, timeouts.openstackPrepare);
    const done = (ok) => {
      clearTimeout(timer);
      openstackPrepare = undefined;
      const secs = Math.round((Date.now() - started) / 1000);
      const text = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
      rmSync(logPath, { force: true });
      if (!ok) say(`[run-tests] openstack: the background install failed after ${secs} s:\n${text.slice(-4000)}`);
      resolve({ ok, secs, summary: text.trim().split('\n').pop() ?? '' });
    };
    child.on('error', () => done(false));
    child.on('close', (code) => done(code === 0));
  });
}

/** Starts the mini OpenStack and its control API, runs fn with the control URL, stops it. */
async function withOpenStack(name, fn) {
  if (interrupted) return;
  let cloud;
  let control;
  try {
    const { register } = await import('tsx/esm/api');
    register();
    const { startOpenStackCloud } = await import('../tools/openstack-cloud/cloud.ts');
    const { startCloudControl } = await import('../tools/openstack-cloud/control.ts');
    // Ports are picked free and bound moments later by the services: another process on the machine may take
    // one in between ("Address already in use"). That start is retried once, on new ports.
    for (let attempt = 1; ; attempt++) {
      say(`\n=== ${name}: starting the mini OpenStack${attempt > 1 ? ' again, on new ports' : ''}`);
      try {
        cloud = await startOpenStackCloud({ log: (line) => say(`[openstack] ${line}`) });
        control = await startCloudControl(cloud);
        break;
      } catch (e) {
        await cloud?.stop();
        cloud = undefined;
        if (attempt === 1 && /address already in use|connection in use|EADDRINUSE/i.test(String(e?.message ?? e)))
          continue;
        throw e;
      }
    }
  } catch (e) {
    await cloud?.stop();
    say(`[run-tests] ${name}: the mini OpenStack did not start: ${e instanceof Error ? e.message : e}`);
    results.push({ name, passed: 0, failed: 1, skipped: 0, note: 'OpenStack did not start' });
    return;
  }
  openstackCloud = { stop: () => control.close().then(() => cloud.stop()) };
  try {
    await fn(control.url);
  } finally {
    await openstackCloud.stop();
    openstackCloud = undefined;
  }
}

function summary() {
  say('\n=== summary');
  let passed = 0;
  let failed = 0;
  for (const r of results) {
    passed += r.passed;
    failed += r.failed;
    const skipped = r.skipped ? `, ${r.skipped} skipped` : '';
    say(`  ${r.name.padEnd(12)} ${r.passed} passed, ${r.failed} failed${skipped} (${r.note})`);
  }
  for (const { suite, reason } of leftOut) say(`  ${suite.padEnd(12)} left out (${reason})`);
  for (const note of prerequisiteNotes) say(`  prerequisite ${note}`);
  if (interrupted) {
    failed += 1;
    say('  interrupted  (counted as 1 failed)');
  }
  if (leftOut.length) {
    say(
      `left out, needing root: ${leftOut.map((l) => l.suite).join(', ')} (run as root without SKIP_ROOT to include them)`,
    );
  }
  say(`${passed} passed, ${failed} failed`);
  return failed;
}

function onSignal(signal) {
  if (interrupted) return;
  interrupted = true;
  say(`\n[run-tests] ${signal}: stopping`);
  const current = running;
  if (current) stopChild(current.child);
  openstackPrepare?.stop();
  // let the stopped suite record what it reported, then stop the control plane
  const settled = Promise.race([current?.closed, new Promise((r) => setTimeout(r, 12_000))]);
  void settled
    .then(() => openstackCloud?.stop())
    .then(() => controlPlane?.stop())
    .finally(() => {
      summary();
      process.exit(130);
    });
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { filter: { type: 'string' }, 'skip-root': { type: 'boolean' } },
  });
  const mode = positionals[0];
  if (!SUITES.includes(mode) || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  let filter;
  try {
    filter = values.filter ? new RegExp(values.filter) : undefined;
  } catch (e) {
    process.stderr.write(`--filter: ${e.message}\n`);
    process.exit(2);
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const machine = probeMachine();
  const skipRoot = values['skip-root'] === true || process.env.MASAKARI_TEST_SKIP_ROOT === '1';
  leftOut = suitesLeftOut({ mode, root: machine.root, skipRoot, rabbitmq: machine.rabbitmq });
  for (const { suite, reason } of leftOut) say(`[run-tests] ${suite}: ${reason}`);
  const isLeftOut = (suite) => leftOut.some((l) => l.suite === suite);
  if ((mode === 'integration' || mode === 'all') && testFiles(join(ROOT, 'test/integration'), filter).length) {
    const lua = luaAction(machine);
    if (lua === 'install' && !skipRoot) {
      say("[run-tests] lua5.1 missing: apt-get install lua5.1 (the gitops health tests run Argo CD's Lua with it)");
      const r = await run('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq lua5.1'], {
        env: { DEBIAN_FRONTEND: 'noninteractive' },
        timeoutMs: timeouts.static,
      });
      if (r.code !== 0) prerequisiteNotes.push(LUA_MISSING);
    } else if (lua !== 'ok') {
      prerequisiteNotes.push(LUA_MISSING);
    }
  }

  const openstackFiles = !isLeftOut('openstack') && testFiles(join(ROOT, 'test/openstack'), filter).length > 0;
  const openstackReady = mode === 'all' && openstackFiles ? prepareOpenStackInBackground() : undefined;
  if (mode === 'all') {
    await staticCheck('lint', 'eslint/bin/eslint.js', ['.']);
    await staticCheck('format', 'prettier/bin/prettier.cjs', ['--check', '.']);
    await staticCheck('typecheck', 'typescript/bin/tsc', ['-p', 'tsconfig.json', '--noEmit']);
  }
  if (mode === 'unit' || mode === 'all') {
    await uvuSuite('unit', 'src', filter, { timeoutMs: timeouts.unit });
    // the development tools' own tests (tools/: the simulator, the control plane, the mini OpenStack)
    await uvuSuite('tools unit', 'tools', filter, { timeoutMs: timeouts.unit });
    // the benchmarks' pure helpers (percentiles, Prometheus parsing, ...); the benchmarks themselves are `make bench`
    await uvuSuite('bench unit', 'bench', filter, { timeoutMs: timeouts.unit });
    // the test runner's own logic (which suites it leaves out, scripts/test-prerequisites.mjs)
    await uvuSuite('scripts unit', 'scripts', filter, { timeoutMs: timeouts.unit });
  }
  for (const suite of ['integration', 'e2e']) {
    if (mode !== suite && mode !== 'all') continue;
    const dir = `test/${suite}`;
    if (!testFiles(join(ROOT, dir), filter).length) {
      await uvuSuite(suite, dir, filter, { timeoutMs: timeouts.suite }); // records "no test files"
      continue;
    }
    await withControlPlane(suite, (cp) =>
      uvuSuite(suite, dir, filter, { env: { MASAKARI_TEST_KUBECONFIG: cp.kubeconfigPath }, timeoutMs: timeouts.suite }),
    );
  }
  // Needs root; .ci/run builds its binaries and image in the background while the suites above run.
  if ((mode === 'cluster' || mode === 'all') && !isLeftOut('cluster')) {
    // test/cluster/remediation-nhc.test.ts evacuates on the mini OpenStack: its install, running in the background,
    // finishes first, so that the test does not start a second one (its failure is reported with the openstack suite)
    if (openstackReady && (!filter || filter.test('remediation-nhc.test.ts'))) await openstackReady;
    await clusterSuite(filter);
  }
  // Owns its control plane (it freezes and restarts kube-apiserver), so none is started here.
  if (mode === 'chaos' || mode === 'all') {
    const runs = process.env.MASAKARI_CHAOS_RUNS ?? String(CHAOS_RUNS_PER_SHAPE);
    const shape = process.env.MASAKARI_CHAOS_SHAPE;
    if (shape !== 'ha') {
      // ha-*.test.ts start a session of shape ha of their own: left out when only the single shape is asked for
      const singleFilter = shape === 'single' ? new RegExp(`^(?!ha-).*(?:${filter?.source ?? ''})`) : filter;
      await uvuSuite('chaos', 'test/chaos', singleFilter, {
        env: { MASAKARI_CHAOS_RUNS: runs },
        timeoutMs: timeouts.chaos,
      });
    }
    // the scenario again on the production-shaped control plane; the suite's pure tests ran above
    const haFilter = shape === 'ha' ? filter : /^chaos\.test\.ts$/;
    if (shape !== 'single' && (!filter || filter.test('chaos.test.ts'))) {
      await uvuSuite('chaos ha', 'test/chaos', haFilter, {
        env: {
          MASAKARI_CHAOS_SHAPE: 'ha',
          MASAKARI_CHAOS_QUICK: process.env.MASAKARI_CHAOS_QUICK ?? '1',
          MASAKARI_CHAOS_RUNS: runs,
        },
        timeoutMs: timeouts.chaos,
      });
    }
  }
  // Starts its own facades (test/e2e/support/stack.ts) and builds its schemathesis venv on first use.
  if (mode === 'fuzz' || mode === 'all') {
    await uvuSuite('fuzz', 'test/fuzz', filter, { timeoutMs: timeouts.fuzz });
  }
  // Last in `all`: its install has had the whole run to finish in the background.
  if ((mode === 'openstack' || mode === 'all') && openstackFiles) {
    const prepared = openstackReady ? await openstackReady : { ok: true, secs: 0, summary: '' };
    if (openstackReady && prepared.ok) say(`\n=== openstack: installed in the background (${prepared.secs} s)`);
    if (!prepared.ok) {
      results.push({ name: 'openstack', passed: 0, failed: 1, skipped: 0, note: 'the install failed' });
    } else {
      await withControlPlane('openstack', (cp) =>
        withOpenStack('openstack', (controlUrl) =>
          uvuSuite('openstack', 'test/openstack', filter, {
            env: { MASAKARI_TEST_KUBECONFIG: cp.kubeconfigPath, MASAKARI_TEST_OPENSTACK_CONTROL: controlUrl },
            timeoutMs: timeouts.openstack,
          }),
        ),
      );
    }
  }
  // interrupted: the signal handler prints the summary and exits 130
  if (interrupted) return;
  const failed = summary();
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  openstackPrepare?.stop();
  say(`[run-tests] ${e instanceof Error ? (e.stack ?? e.message) : e}`);
  results.push({ name: 'runner', passed: 0, failed: 1, skipped: 0, note: 'runner error' });
  summary();
  process.exit(1);
});
