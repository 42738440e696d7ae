// The process shell end to end: src/main.ts as a child process against the
// test control plane, with MASAKARI_COMPONENTS=api (noauth2, no OpenStack).
// Checks the ops endpoint, the exit on SIGTERM and the fail-fast on bad input.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { useNamespace, type TestNamespace } from '../../support/cluster.ts';
import { freePort } from '../../../tools/controlplane/ports.ts';
import { eventually } from '../../support/eventually.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const READY_TIMEOUT_MS = 90_000;

interface Operator {
  child: ChildProcess;
  opsUrl: string;
  apiPort: number;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The test runner's environment without anything that would point the operator at a real cloud. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('OS_') && !k.startsWith('MASAKARI_')) env[k] = v;
  }
  return env;
}

async function startOperator(extraEnv: Record<string, string>, args: string[] = []): Promise<Operator> {
  const metricsPort = await freePort();
  const apiPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: {
      ...cleanEnv(),
      MASAKARI_LISTEN: `127.0.0.1:${apiPort}`,
      MASAKARI_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
      MASAKARI_AUTH_STRATEGY: 'noauth2',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, opsUrl: `http://127.0.0.1:${metricsPort}`, apiPort, stdout: () => out, stderr: () => err, exit };
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

async function waitFor(op: Operator, path: string, status: number): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    if (op.child.exitCode !== null) {
      assert.unreachable(`operator exited (${op.child.exitCode}) before ${path} answered ${status}:\n${op.stderr()}`);
    }
    try {
      const res = await get(`${op.opsUrl}${path}`);
      if (res.status === status) return res;
      last = `${res.status} ${res.body}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${path} did not answer ${status} in ${READY_TIMEOUT_MS} ms (last: ${last}); stderr:\n${op.stderr()}`,
  );
}

function logLines(op: Operator): Array<Record<string, unknown>> {
  return op
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const running = suite<{ ns?: TestNamespace; op?: Operator }>('operator with MASAKARI_COMPONENTS=api');

running.before(async (ctx) => {
  ctx.ns = await useNamespace('shell');
  ctx.op = await startOperator({
    KUBECONFIG: ctx.ns.kubeconfigPath,
    MASAKARI_NAMESPACE: ctx.ns.namespace,
    MASAKARI_COMPONENTS: 'api',
    MASAKARI__OPERATOR__SHUTDOWN_TIMEOUT: '10',
    POD_NAME: 'shell-test-0',
  });
});

running.after(async (ctx) => {
  if (ctx.op && ctx.op.child.exitCode === null) {
    ctx.op.child.kill('SIGKILL');
    await ctx.op.exit;
  }
  await ctx.ns?.cleanup();
});

running('healthz answers 200 while the process runs', async ({ op }) => {
  const res = await waitFor(op!, '/healthz', 200);
  assert.is(res.body, 'ok\n');
});

running(
  'readyz turns 200 once the api component is ready, listing it and the API server taking writes',
  async ({ op }) => {
    const res = await waitFor(op!, '/readyz', 200);
    assert.equal(JSON.parse(res.body), {
      status: 'ready',
      phase: 'running',
      components: { api: true, 'kube-writes': true },
      not_ready: [],
    });
  },
);

running('the Masakari API of the started component answers GET / (versions) on MASAKARI_LISTEN', async ({ op }) => {
  const res = await get(`http://127.0.0.1:${op!.apiPort}/`);
  assert.is(res.status, 200);
});

running(
  'metrics expose process metrics, the build info, the component readiness and the Kubernetes API calls',
  async ({ op }) => {
    const res = await get(`${op!.opsUrl}/metrics`);
    assert.is(res.status, 200);
    assert.match(res.body, 'process_resident_memory_bytes');
    assert.match(res.body, 'masakari_operator_build_info{');
    assert.match(res.body, 'masakari_operator_component_ready{component="api"} 1');
    // The caches' first lists went to the API server through the one client, and were timed.
    assert.match(
      res.body,
      /masakari_kube_request_duration_seconds_count\{method="GET",resource="masakari\.openkeel\.io\/notifications",code="200"\} [1-9]/,
    );
  },
);

running('logs are JSON lines carrying the identity', async ({ op }) => {
  const lines = logLines(op!);
  const started = lines.find((l) => l.msg === 'masakari-operator running');
  assert.ok(started, 'a "running" line is logged');
  assert.is(started!.identity, 'shell-test-0');
  assert.ok(
    lines.some((l) => l.msg?.toString().startsWith('no OpenStack credentials')),
    'the missing cloud is logged',
  );
});

running(
  "SIGHUP (Masakari's reload signal) leaves the process running and says the config is read at start",
  async ({ op }) => {
    op!.child.kill('SIGHUP');
    await eventually(
      'the SIGHUP explanation on stderr',
      () => op!.stderr(),
      (err) => err.includes('SIGHUP ignored: the configuration is read only at start'),
    );
    assert.is(op!.child.exitCode, null);
    assert.is((await get(`${op!.opsUrl}/healthz`)).status, 200);
  },
);

running('SIGTERM stops the process promptly with exit code 0', async ({ op }) => {
  const begun = Date.now();
  op!.child.kill('SIGTERM');
  const { code, signal } = await op!.exit;
  assert.is(signal, null);
  assert.is(code, 0, `exit code 0 expected; stderr:\n${op!.stderr()}`);
  assert.ok(Date.now() - begun < 12_000, `stopped within the 10 s shutdown deadline (took ${Date.now() - begun} ms)`);
  const lines = logLines(op!);
  assert.ok(lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'));
  assert.ok(lines.some((l) => l.msg === 'masakari-operator stopped'));
});

running.run();

const failing = suite('operator that must not start');

failing('a bad option exits 1 naming the option on stderr, without a stack trace', async () => {
  const op = await startOperator({ MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS: 'zero' });
  const { code } = await op.exit;
  assert.is(code, 1);
  assert.is(
    op.stderr(),
    'masakari-operator: config: [DEFAULT] host_failure_recovery_threads must be an integer >= 1, got "zero" (set by MASAKARI__DEFAULT__HOST_FAILURE_RECOVERY_THREADS)\n',
  );
});

failing('an unknown option in the YAML file named by MASAKARI_CONFIG exits 1 naming it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shell-config-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, 'host_failure:\n  evacuate_all_instance: true\n');
  try {
    const op = await startOperator({ MASAKARI_CONFIG: file });
    assert.is((await op.exit).code, 1);
    assert.match(
      op.stderr(),
      'config: [host_failure] evacuate_all_instance is not a known option (did you mean evacuate_all_instances?)',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

failing('incomplete OpenStack credentials exit 1 naming the missing variable', async () => {
  const op = await startOperator({ OS_AUTH_URL: 'http://127.0.0.1:1/v3', OS_USERNAME: 'masakari' });
  assert.is((await op.exit).code, 1);
  assert.match(op.stderr(), 'openstack credentials: OS_PASSWORD is required for password authentication');
});

failing('an unknown command exits 2 with the usage', async () => {
  const op = await startOperator({}, ['frobnicate']);
  assert.is((await op.exit).code, 2);
  assert.match(op.stderr(), 'unknown command "frobnicate"');
  assert.match(op.stderr(), 'usage: masakari-operator');
});

failing.run();

// The masakari.conf files devstack, kolla-ansible and openstack-helm generate
// (src/config/testdata/README.md), given unchanged as --config-file. The
// variables only move the listeners to free local ports and point at the test
// control plane; auth_strategy stays the files' keystone.
const siteConf = suite<{ ns?: TestNamespace }>('operator started with a site masakari.conf');

siteConf.before(async (ctx) => {
  ctx.ns = await useNamespace('shell-conf');
});

siteConf.after(async (ctx) => {
  await ctx.ns?.cleanup();
});

async function startOnConf(ns: TestNamespace, args: string[], auth = 'keystone'): Promise<Operator> {
  return startOperator(
    {
      KUBECONFIG: ns.kubeconfigPath,
      MASAKARI_NAMESPACE: ns.namespace,
      MASAKARI_COMPONENTS: 'api',
      MASAKARI_AUTH_STRATEGY: auth,
      MASAKARI__OPERATOR__SHUTDOWN_TIMEOUT: '10',
    },
    ['run', ...args],
  );
}

async function stop(op: Operator): Promise<void> {
  if (op.child.exitCode === null) op.child.kill('SIGTERM');
  await op.exit;
}

for (const [fixture, debug] of [
  ['devstack', true],
  ['kolla-ansible', true],
  ['openstack-helm', false],
] as const) {
  siteConf(`the ${fixture} masakari.conf starts the api unchanged`, async ({ ns }) => {
    const file = join(ROOT, 'src/config/testdata', `${fixture}.masakari.conf`);
    const op = await startOnConf(ns!, ['--config-file', file]);
    try {
      await waitFor(op, '/readyz', 200);
      const lines = logLines(op);
      const starting = lines.find((l) => l.msg === 'masakari-operator starting');
      assert.equal(starting?.config_files, [file]);
      assert.is(starting?.log_level, debug ? 'debug' : 'info', 'debug = True lowers the log level');
      assert.ok(
        lines.some((l) =>
          l.msg
            ?.toString()
            .startsWith('config: masakari.conf options with no effect in this operator, ignored: [DEFAULT] '),
        ),
        'the options without effect are named in one warning',
      );
      assert.ok(
        lines.some((l) => l.msg === 'openstack credentials found'),
        'the Nova user of the file is used',
      );
    } finally {
      await stop(op);
    }
  });
}

siteConf(
  "devstack's masakari-api command line (--config-file=FILE --debug, no command) starts at debug level",
  async ({ ns }) => {
    // devstack/plugin.sh runs "masakari-api --config-file=$MASAKARI_CONF --debug"; openstack-helm's file has debug off.
    const file = join(ROOT, 'src/config/testdata', 'openstack-helm.masakari.conf');
    const op = await startOperator(
      {
        KUBECONFIG: ns!.kubeconfigPath,
        MASAKARI_NAMESPACE: ns!.namespace,
        MASAKARI_COMPONENTS: 'api',
        MASAKARI__OPERATOR__SHUTDOWN_TIMEOUT: '10',
      },
      [`--config-file=${file}`, '--debug'],
    );
    try {
      await waitFor(op, '/readyz', 200);
      const starting = logLines(op).find((l) => l.msg === 'masakari-operator starting');
      assert.equal(starting?.config_files, [file]);
      assert.is(starting?.log_level, 'debug');
    } finally {
      await stop(op);
    }
  },
);

siteConf(
  'a misspelt option in a masakari.conf is named with the nearest known one, and the process starts',
  async ({ ns }) => {
    const dir = mkdtempSync(join(tmpdir(), 'shell-conf-'));
    const file = join(dir, 'masakari.conf');
    writeFileSync(file, '[DEFAULT]\nosapi_max_limit = 100\n\n[host_failure]\nevacuate_all_instance = false\n');
    const op = await startOnConf(ns!, [`--config-file=${file}`], 'noauth2');
    try {
      await waitFor(op, '/readyz', 200);
      assert.ok(
        logLines(op).some(
          (l) =>
            l.msg ===
            `config: [host_failure] evacuate_all_instance: unknown option; did you mean evacuate_all_instances? (${file}:5); ignored, as oslo.config ignores it`,
        ),
        `the nearest-name warning is logged; stdout:\n${op.stdout()}`,
      );
    } finally {
      await stop(op);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

siteConf('a masakari.conf syntax error exits 1 naming the file and line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shell-conf-'));
  const file = join(dir, 'masakari.conf');
  writeFileSync(file, '[DEFAULT]\ndebug\n');
  try {
    const op = await startOperator({}, ['--config-file', file]);
    assert.is((await op.exit).code, 1);
    assert.is(
      op.stderr(),
      `masakari-operator: config: ${file}:2: expected "name = value", got "debug" (not a valid masakari.conf)\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

siteConf.run();
