// The operator as the image runs it (compiled dist/src/main.js, the deployed
// NODE_OPTIONS of its container in config/manager/manager.yaml, the image's
// allocator settings from the Dockerfile), one process
// per Deployment: `api`, or `engine,remediation`. Benchmarks time its start.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { freePort } from '../../test/e2e/support/net.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** tsc -p tsconfig.build.json: benchmarks measure the compiled code, as in the image. */
export function compile(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

interface DeploymentLike {
  spec?: {
    template?: { spec?: { containers?: Array<{ env?: Array<{ name: string; value?: string }> }> } };
  };
}

/** NODE_OPTIONS of the container in config/manager/manager.yaml whose MASAKARI_COMPONENTS is `components`. */
export function deployedNodeOptions(components: string): string {
  const manifests = loadAll(readFileSync(path.join(ROOT, 'config/manager/manager.yaml'), 'utf8'));
  const env = manifests
    .flatMap((m) => (m as DeploymentLike)?.spec?.template?.spec?.containers ?? [])
    .find((c) => c.env?.some((e) => e.name === 'MASAKARI_COMPONENTS' && e.value === components))?.env;
  const value = env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
  if (value === undefined) throw new Error(`config/manager/manager.yaml: no NODE_OPTIONS for components ${components}`);
  return value;
}

/**
 * The glibc allocator settings the image sets (MALLOC_*_ in the Dockerfile's
 * ENV): they change the resident set the benchmarks report, so the processes
 * measured here run with them as a pod does.
 */
export function imageAllocatorEnv(
  dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'),
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of dockerfile.matchAll(/^\s*(MALLOC_[A-Z_]+_)=([0-9]+)\b/gm)) env[m[1]!] = m[2]!;
  return env;
}

export interface BenchOperator {
  components: string;
  apiUrl: string;
  metricsUrl: string;
  pid: number;
  /** From spawn to the first 200 from /readyz (the process's start, its initial lists, its components). */
  readyMs: number;
  output(): string;
  /** Why the process is gone (exit code or signal, and a V8 out-of-memory error if it printed one), or undefined while it runs. */
  gone(): string | undefined;
  stop(): Promise<void>;
}

/** An exited child described for a results table. */
function goneReason(child: ChildProcess, out: string): string | undefined {
  if (child.exitCode === null && child.signalCode === null) return undefined;
  const how = child.signalCode ? `killed by ${child.signalCode}` : `exited with ${child.exitCode}`;
  return /heap out of memory|Allocation failed/i.test(out) ? `${how} (V8 heap out of memory)` : how;
}

export async function startBenchOperator(o: {
  kubeconfigPath: string;
  namespace: string;
  /** MASAKARI_COMPONENTS, e.g. 'api' or 'engine,remediation'. */
  components: string;
  openstack: Record<string, string>;
  nodeOptions: string;
  readyTimeoutMs: number;
  env?: Record<string, string>;
}): Promise<BenchOperator> {
  const apiPort = await freePort();
  const metricsPort = await freePort();
  let out = '';
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: o.kubeconfigPath,
      MASAKARI_NAMESPACE: o.namespace,
      MASAKARI_COMPONENTS: o.components,
      MASAKARI_AUTH_STRATEGY: 'noauth2',
      MASAKARI_LISTEN: `127.0.0.1:${apiPort}`,
      MASAKARI_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
      MASAKARI_LOG_LEVEL: 'warn',
      NODE_OPTIONS: o.nodeOptions,
      ...imageAllocatorEnv(),
      ...o.openstack,
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-32_768);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(t);
  };
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const deadline = started + o.readyTimeoutMs;
  for (;;) {
    const reason = goneReason(child, out);
    if (reason) throw new Error(`operator (${o.components}) ${reason} before Ready\n${out.slice(-4000)}`);
    const ok = await fetch(`${metricsUrl}/readyz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`operator (${o.components}) not ready after ${o.readyTimeoutMs} ms\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    components: o.components,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    metricsUrl,
    pid: child.pid as number,
    readyMs: performance.now() - started,
    output: () => out,
    gone: () => goneReason(child, out),
    stop,
  };
}
