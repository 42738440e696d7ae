// Acceptance for `make run`, as a new user meets it: run `make run` (deps,
// build, envtest binaries, then scripts/run-local.ts) with no KUBECONFIG and no
// OpenStack credentials, read the addresses and credentials it prints, drive
// the README's walk-through with the real openstack CLI — segment, hosts, a
// failed compute, a notification, the recovery and the VM moves — check the
// custom resources through the printed kubeconfig, then press Ctrl-C and check
// that nothing is left listening.
// A platform engineer's shell exports KUBECONFIG (and OS_*): `make run` must
// not join that cluster unless told with MASAKARI_RUN_KUBECONFIG, and even
// then not one where an operator holds its Leases.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../../src/k8s/resources.ts';
import type { Notification } from '../../src/model/types.ts';
import { freePort } from './support/net.ts';
import { e2eVenv } from './support/python-env.ts';
import { kubectlBinary } from '../support/kubectl.ts';
import { useNamespace } from '../support/cluster.ts';
import { randomBytes } from 'node:crypto';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const READY_TIMEOUT_MS = 300_000;
const STOP_TIMEOUT_MS = 90_000;

interface Printed {
  apiUrl: string;
  metricsUrl: string;
  kubeconfig: string;
  simulatorUrl: string;
  credentials: Record<string, string>;
}

/** Starts the script and resolves with what its ready banner printed. */
function startMakeRun(
  env: NodeJS.ProcessEnv,
  makeArgs: string[] = [],
): { child: ChildProcess; output: () => string; ready: Promise<Printed> } {
  // Its own process group, like a terminal's foreground job, so Ctrl-C can be sent to the group.
  const child = spawn('make', ['--no-print-directory', 'run', ...makeArgs], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const ready = new Promise<Printed>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`make run was not ready in time:\n${out}`)), READY_TIMEOUT_MS);
    const check = () => {
      if (!out.includes('Press Ctrl-C to stop.')) return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      const line = (label: string) => new RegExp(`^\\[make run\\]\\s+${label}\\s+(.*)$`, 'm').exec(out)?.[1] ?? '';
      const exports = line('credentials').replace(/^export /, '');
      resolve({
        apiUrl: line('Masakari API').split(/\s+/)[0] ?? '',
        metricsUrl: (line('health/metrics').split(/\s+/)[0] ?? '').replace(/\/healthz$/, ''),
        kubeconfig: line('kubeconfig'),
        simulatorUrl: line('simulator').split(/\s+/)[0] ?? '',
        credentials: Object.fromEntries(exports.split(/\s+/).map((kv) => kv.split('=', 2) as [string, string])),
      });
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`make run exited (${code}) before it was ready:\n${out}`));
    });
  });
  return { child, output: () => out, ready };
}

/** True when nothing listens at url any more (a TLS or HTTP error means something still does). */
async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return false;
  } catch (e) {
    return (e as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
  }
}

test('make run: the README walk-through with the openstack CLI, then Ctrl-C leaves nothing running', async () => {
  const venv = await e2eVenv();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Free ports, so a developer's own `make run` on 15868 does not collide with the test.
    MASAKARI_LISTEN: `127.0.0.1:${await freePort()}`,
    MASAKARI_METRICS_LISTEN: `127.0.0.1:${await freePort()}`,
    MASAKARI_LOG_LEVEL: 'warn',
  };
  const started = startMakeRun(env);
  let exited = false;
  started.child.once('exit', () => (exited = true));
  try {
    const printed = await started.ready;
    assert.match(printed.apiUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.ok(printed.credentials.OS_AUTH_URL, started.output());
    assert.is((await fetch(`${printed.metricsUrl}/healthz`)).status, 200);

    const openstack = async (args: string[]): Promise<Record<string, unknown>> => {
      try {
        const r = await run(path.join(venv, 'bin/openstack'), [...args, '-f', 'json'], {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, ...printed.credentials },
          timeout: 60_000,
        });
        return JSON.parse(r.stdout) as Record<string, unknown>;
      } catch (e) {
        const err = e as { stderr?: string; message: string };
        throw new Error(`openstack ${args.join(' ')} failed: ${err.stderr || err.message}`);
      }
    };

    const seg = await openstack(['segment', 'create', 'demo', 'auto', 'COMPUTE']);
    for (const h of ['compute-0', 'compute-1', 'compute-2']) {
      await openstack(['segment', 'host', 'create', h, 'COMPUTE', 'SSH', seg.uuid as string]);
    }
    assert.is((await fetch(`${printed.simulatorUrl}/_sim/hosts/compute-0/fail`, { method: 'POST' })).status, 200);
    const n = await openstack([
      'notification',
      'create',
      'COMPUTE_HOST',
      'compute-0',
      new Date().toISOString().slice(0, 19),
      '{"event": "STOPPED", "host_status": "NORMAL"}',
    ]);
    const nid = n.notification_uuid as string;
    let shown: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) {
      shown = await openstack(['notification', 'show', nid]);
      if (['finished', 'error', 'failed', 'ignored'].includes(shown.status as string)) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    assert.is(shown.status, 'finished', `${JSON.stringify(shown)}\n${started.output()}`);
    const vmoves = await fetch(`${printed.apiUrl}/notifications/${nid}/vmoves`, {
      headers: { 'OpenStack-API-Version': 'instance-ha 1.3' },
    }).then((r) => r.json() as Promise<{ vmoves: Array<{ source_host: string; dest_host: string; status: string }> }>);
    // compute-0 ran three servers; evacuate_all_instances (default true) moves them all, HA-enabled first.
    assert.is(vmoves.vmoves.length, 3, JSON.stringify(vmoves));
    assert.ok(
      vmoves.vmoves.every(
        (v) => v.source_host === 'compute-0' && v.dest_host !== 'compute-0' && v.status === 'succeeded',
      ),
      JSON.stringify(vmoves),
    );

    // The command the ready banner suggests works as printed.
    const kubectl = await run(
      await kubectlBinary(),
      ['--kubeconfig', printed.kubeconfig, '-n', 'masakari', 'get', 'failoversegments,hahosts,notifications'],
      { timeout: 60_000 },
    );
    assert.match(kubectl.stdout, /demo/);
    assert.match(kubectl.stdout, /compute-0/);

    // The same state, as kubectl sees it through the printed kubeconfig.
    const kubeconfig = loadKubeConfig({ env: { KUBECONFIG: printed.kubeconfig } });
    const apiServer = kubeconfig.getCurrentCluster()?.server ?? '';
    assert.match(apiServer, /^https:\/\/127\.0\.0\.1:/);
    const kube = createKubeClient(kubeconfig);
    try {
      const list = await kube.list<Notification>(RESOURCES.notifications, 'masakari');
      assert.equal(
        list.items.map((o) => o.status?.phase),
        ['finished'],
      );
    } finally {
      await kube.close();
    }

    // Ctrl-C: everything stops in order. make itself then ends by the signal, as it does in a terminal.
    const ended = new Promise<string>((resolve) =>
      started.child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
    );
    process.kill(-started.child.pid!, 'SIGINT'); // what Ctrl-C in the terminal does
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_TIMEOUT_MS).unref());
    assert.ok(['SIGINT', 'exit 0'].includes(await Promise.race([ended, timeout])), started.output());
    for (const line of ['operator stopped (exit code 0)', 'simulator stopped', 'control plane stopped']) {
      assert.ok(started.output().includes(`[make run] ${line}`), `missing "${line}":\n${started.output()}`);
    }
    assert.not.match(started.output(), /could not release the lease/);
    assert.ok(await refused(`${printed.apiUrl}/`), 'the API still answers after Ctrl-C');
    assert.ok(await refused(`${printed.metricsUrl}/healthz`), 'health still answers after Ctrl-C');
    assert.ok(await refused(`${printed.simulatorUrl}/identity/v3`), 'the simulator still answers after Ctrl-C');
    assert.ok(await refused(`${apiServer}/healthz`), 'kube-apiserver still answers after Ctrl-C');
  } finally {
    if (!exited) process.kill(-started.child.pid!, 'SIGKILL');
  }
});

/** Whether the namespace exists in the cluster of kubeconfig. */
async function namespaceExists(kubeconfig: string, name: string): Promise<boolean> {
  const kube = createKubeClient(loadKubeConfig({ env: { KUBECONFIG: kubeconfig } }));
  try {
    await kube.get(RESOURCES.namespaces, undefined, name);
    return true;
  } catch {
    return false;
  } finally {
    await kube.close();
  }
}

async function stopMakeRun(started: ReturnType<typeof startMakeRun>): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const ended = new Promise<void>((resolve) => started.child.once('exit', () => resolve()));
  process.kill(-started.child.pid!, 'SIGINT');
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_TIMEOUT_MS).unref());
  if ((await Promise.race([ended, timeout])) === 'timeout') process.kill(-started.child.pid!, 'SIGKILL');
}

test('make run: an exported KUBECONFIG of another cluster is ignored, nothing is created there', async () => {
  const other = process.env.MASAKARI_TEST_KUBECONFIG ?? (await useNamespace('make-run-other')).kubeconfigPath;
  const namespace = `make-run-${randomBytes(4).toString('hex')}`;
  const started = startMakeRun({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: other,
    MASAKARI_NAMESPACE: namespace,
    MASAKARI_LISTEN: `127.0.0.1:${await freePort()}`,
    MASAKARI_METRICS_LISTEN: `127.0.0.1:${await freePort()}`,
    MASAKARI_LOG_LEVEL: 'warn',
  });
  try {
    const printed = await started.ready;
    assert.match(started.output(), /ignoring KUBECONFIG=.*MASAKARI_RUN_KUBECONFIG/);
    assert.is.not(printed.kubeconfig, other);
    assert.ok(await namespaceExists(printed.kubeconfig, namespace), 'its own control plane has the namespace');
    assert.not.ok(await namespaceExists(other, namespace), `make run created ${namespace} in the KUBECONFIG cluster`);
  } finally {
    await stopMakeRun(started);
  }
});

test('make run: MASAKARI_RUN_KUBECONFIG naming a cluster whose operator Lease is held is refused, nothing started', async () => {
  const ns = await useNamespace('make-run-installed');
  const now = new Date().toISOString().replace(/Z$/, '000Z'); // MicroTime
  const lease = await ns.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'masakari-engine', namespace: ns.namespace },
      spec: { holderIdentity: 'masakari-operator-engine-7d9f-abcde', leaseDurationSeconds: 15, renewTime: now },
    }),
  );
  assert.is(lease.code, 0, lease.stderr);
  const namespace = `make-run-${randomBytes(4).toString('hex')}`;
  const listen = `127.0.0.1:${await freePort()}`;
  const started = startMakeRun(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MASAKARI_NAMESPACE: namespace,
      MASAKARI_LISTEN: listen,
      MASAKARI_METRICS_LISTEN: `127.0.0.1:${await freePort()}`,
      MASAKARI_LOG_LEVEL: 'warn',
    },
    [`MASAKARI_RUN_KUBECONFIG=${ns.kubeconfigPath}`],
  );
  // it exits before its ready banner: that rejection is the expected outcome
  started.ready.catch(() => undefined);
  try {
    // a make run that does not refuse would start and keep running: bounded, so that fails instead of hanging
    const code = await new Promise<number | null | 'running'>((resolve) => {
      const timer = setTimeout(() => resolve('running'), READY_TIMEOUT_MS);
      started.child.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    assert.ok(code !== 0 && code !== 'running', `make run did not refuse (${code}):\n${started.output()}`);
    assert.match(
      started.output(),
      new RegExp(
        `refusing to use the cluster in MASAKARI_RUN_KUBECONFIG: a masakari-operator is running there \\(${ns.namespace}/masakari-engine held by masakari-operator-engine-7d9f-abcde\\)`,
      ),
    );
    assert.not.match(started.output(), /starting a local control plane|simulator/);
    assert.not.ok(await namespaceExists(ns.kubeconfigPath, namespace), `make run created ${namespace} there`);
    assert.ok(await refused(`http://${listen}/`), 'an operator was started');
  } finally {
    await stopMakeRun(started);
    await ns.cleanup();
  }
});

test.run();
