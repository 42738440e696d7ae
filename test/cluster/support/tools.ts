// What the cluster tests (test/cluster/) share: the cluster the runner
// started (scripts/run-tests.mjs cluster), kubectl and helm against it, the
// OpenStack CLI, and polling.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'uvu';
import { runPathScript } from '../../../tools/controlplane/binaries.ts';
import { kubectlBinary } from '../../support/kubectl.ts';

const exec = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Set by the runner: the admin kubeconfig and the node IP (reachable from pods and from here). */
export function clusterEnv(): { kubeconfig: string; nodeIp: string } {
  const kubeconfig = process.env.MASAKARI_TEST_CLUSTER_KUBECONFIG;
  const nodeIp = process.env.MASAKARI_TEST_CLUSTER_NODE_IP;
  if (!kubeconfig || !nodeIp)
    throw new Error('MASAKARI_TEST_CLUSTER_KUBECONFIG/_NODE_IP unset: run through `scripts/run-tests.mjs cluster`');
  return { kubeconfig, nodeIp };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function runTool(
  bin: string,
  args: string[],
  opts: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  const { kubeconfig } = clusterEnv();
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const child = execFile(bin, args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: kubeconfig, ...opts.env },
    timeout: timeoutMs,
    maxBuffer: 32 << 20,
  });
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  // execFile stops a command past its timeout with SIGTERM: say so, or its output looks like a success
  if (child.signalCode) stderr += `\n(${path.basename(bin)} stopped by ${child.signalCode} after ${timeoutMs} ms)`;
  return { code, stdout, stderr };
}

/** kubectl against the test cluster; resolves whatever the exit code (check .code). */
export async function kubectlRaw(
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return runTool(await kubectlBinary(), args, opts);
}

/** kubectl that must succeed; returns stdout. */
export async function kubectl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> {
  const r = await kubectlRaw(args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${r.code}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

export async function kubectlJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
}

let helmPath: Promise<string> | undefined;

/**
 * helm (hack/helm/build.sh builds it from Go modules once) that must succeed; returns stdout.
 * The default leaves a minute past the tests' `--timeout 5m`, so helm's own report of what was not ready shows.
 */
export async function helm(args: string[], timeoutMs = 360_000): Promise<string> {
  helmPath ??= runPathScript(path.join(ROOT, 'hack', 'helm', 'build.sh'), 30 * 60_000);
  const r = await runTool(await helmPath, args, { timeoutMs });
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (exit ${r.code}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

let venv: Promise<string> | undefined;

/** The real `openstack` CLI (scripts/e2e-venv.sh) with the given OS_* environment; JSON output parsed. */
export async function openstack(osEnv: Record<string, string>, args: string[]): Promise<unknown> {
  venv ??= exec('bash', [path.join(ROOT, 'scripts/e2e-venv.sh')], { maxBuffer: 16 << 20, timeout: 20 * 60_000 }).then(
    (r) => r.stdout.trim().split('\n').pop() as string,
  );
  // A Python CLI: its start-up alone takes tens of seconds on a loaded 2-core machine.
  const r = await runTool(path.join(await venv, 'bin/openstack'), [...args, '-f', 'json'], {
    env: osEnv,
    timeoutMs: 180_000,
  });
  if (r.code !== 0) throw new Error(`openstack ${args.join(' ')} failed (exit ${r.code}): ${r.stderr || r.stdout}`);
  return r.stdout.trim() === '' ? null : JSON.parse(r.stdout);
}

/** Polls fn until it returns something other than undefined; the last error or value is in the timeout message. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 1_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

interface PodList {
  items: {
    metadata: { name: string; labels?: Record<string, string> };
    status?: { phase?: string; conditions?: { type: string; status: string }[] };
  }[];
}

/** Names of the namespace's pods matching selector, once exactly `count` exist and all are Ready. */
export async function waitPodsReady(
  ns: string,
  selector: string,
  count: number,
  timeoutMs = 240_000,
): Promise<string[]> {
  return waitFor(
    `${count} Ready pods ${selector} in ${ns}`,
    async () => {
      const pods = await kubectlJson<PodList>(['get', 'pods', '-n', ns, '-l', selector]);
      const ready = pods.items.filter((p) =>
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      if (pods.items.length === count && ready.length === count) return ready.map((p) => p.metadata.name);
      throw new Error(`${ready.length}/${pods.items.length} ready`);
    },
    timeoutMs,
    2_000,
  );
}

/** A namespace under the restricted Pod Security Standard (enforced, not just warned). */
export async function restrictedNamespace(ns: string): Promise<void> {
  await kubectl(['create', 'namespace', ns]);
  await kubectl([
    'label',
    'namespace',
    ns,
    'pod-security.kubernetes.io/enforce=restricted',
    'pod-security.kubernetes.io/enforce-version=latest',
  ]);
}

/**
 * Creates the operator's OpenStack credentials Secret (OS_* variables, as docs/install.md has users
 * do) for the simulator's Keystone at authUrl.
 */
export async function createSimulatorCredentials(name: string, namespace: string, authUrl: string): Promise<void> {
  await kubectl([
    'create',
    'secret',
    'generic',
    name,
    '-n',
    namespace,
    `--from-literal=OS_AUTH_URL=${authUrl}`,
    '--from-literal=OS_USERNAME=admin',
    '--from-literal=OS_PASSWORD=admin-secret',
    '--from-literal=OS_PROJECT_NAME=admin',
    '--from-literal=OS_USER_DOMAIN_NAME=Default',
    '--from-literal=OS_PROJECT_DOMAIN_NAME=Default',
    '--from-literal=OS_REGION_NAME=RegionOne',
  ]);
}

/** `http://<cluster IP>:<first port>` of a Service (reachable from the node, where the tests run). */
export async function serviceUrl(ns: string, name: string): Promise<string> {
  const svc = await kubectlJson<{ spec: { clusterIP: string; ports: { port: number }[] } }>([
    'get',
    'service',
    name,
    '-n',
    ns,
  ]);
  return `http://${svc.spec.clusterIP}:${svc.spec.ports[0]!.port}`;
}

/**
 * Registers tests that build on each other (one release shared by a file). After a failed
 * prerequisite, or after any failure with `bail`, the rest fail at once naming the cause instead
 * of each waiting out its own timeout.
 */
export function orderedSteps(
  test: Test,
  { bail }: { bail: boolean },
): (name: string, fn: () => Promise<void>, opts?: { prerequisite?: boolean }) => void {
  let broken: string | undefined;
  return (name, fn, { prerequisite = false } = {}) => {
    test(name, async () => {
      if (broken) throw new Error(`not run: the earlier test "${broken}" failed`);
      try {
        await fn();
      } catch (e) {
        if (prerequisite || bail) broken = name;
        throw e;
      }
    });
  };
}
