// An end-to-end stack on loopback: the shared test control plane (a fresh
// namespace), the Keystone/Nova simulator, and the operator as a real child
// process (`src/main.ts`), configured the way an operator would configure it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useNamespace, type TestNamespace } from '../../support/cluster.ts';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../tools/simulator/server.ts';
import { freePort, waitForHttp } from './net.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const nodeBin = path.join(root, 'node_modules/.bin/node');

export interface OperatorProcess {
  apiUrl: string;
  metricsUrl: string;
  child: ChildProcess;
  /** Last 64 KiB of the process's output, for failure messages. */
  output(): string;
  /** SIGTERM and wait (SIGKILL after 15 s). */
  stop(): Promise<void>;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
}

export interface OperatorOptions {
  kubeconfigPath: string;
  namespace: string;
  components: string;
  auth: 'noauth2' | 'keystone';
  /** OS_* variables (simulator admin) — omit for no OpenStack. */
  openstack?: Record<string, string>;
  /** Extra env, e.g. MASAKARI__DEFAULT__verify_interval=0.1 */
  env?: Record<string, string>;
  apiPort?: number;
  /** Run the compiled dist/src/main.js (as the image does) instead of the TypeScript sources through tsx. */
  compiled?: boolean;
}

export async function startOperator(o: OperatorOptions): Promise<OperatorProcess> {
  const apiPort = o.apiPort ?? (await freePort());
  const metricsPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: o.kubeconfigPath,
    MASAKARI_NAMESPACE: o.namespace,
    MASAKARI_COMPONENTS: o.components,
    MASAKARI_AUTH_STRATEGY: o.auth,
    MASAKARI_LISTEN: `127.0.0.1:${apiPort}`,
    MASAKARI_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
    ...(o.openstack ?? {}),
    ...(o.env ?? {}),
  };
  const entry = o.compiled
    ? [path.join(root, 'dist/src/main.js')]
    : ['--import', 'tsx', path.join(root, 'src/main.ts')];
  const child = spawn(nodeBin, entry, {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proc: OperatorProcess = {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await waitForReady(`${proc.metricsUrl}/readyz`, 90_000, () => child.exitCode !== null);
  } catch (e) {
    await proc.kill();
    throw new Error(`operator did not become ready: ${(e as Error).message}\n--- output ---\n${out}`);
  }
  return proc;
}

async function waitForReady(url: string, timeoutMs: number, dead: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (dead()) throw new Error('process exited');
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      last = `${r.status} ${await r.text()}`;
      if (r.status === 200) return;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms (${last})`);
}

export interface Stack {
  ns: TestNamespace;
  sim: Simulator;
  operator: OperatorProcess;
  stop(): Promise<void>;
}

export async function startStack(o: {
  prefix: string;
  components: string;
  auth: 'noauth2' | 'keystone';
  sim?: SimulatorOptions;
  env?: Record<string, string>;
  compiled?: boolean;
  /** The instance-ha endpoint of the catalog, given the facade's port (TLS, a proxy); default http://127.0.0.1:<port>/v1. */
  masakariUrl?: (apiPort: number) => string;
}): Promise<Stack> {
  const ns = await useNamespace(o.prefix);
  const apiPort = await freePort();
  const masakariUrl = o.masakariUrl?.(apiPort) ?? `http://127.0.0.1:${apiPort}/v1`;
  const sim = await startSimulator({ masakariUrl, ...(o.sim ?? {}) });
  try {
    const operator = await startOperator({
      kubeconfigPath: ns.kubeconfigPath,
      namespace: ns.namespace,
      components: o.components,
      auth: o.auth,
      openstack: sim.credentials,
      env: o.env,
      apiPort,
      compiled: o.compiled,
    });
    return {
      ns,
      sim,
      operator,
      async stop() {
        await operator.stop();
        await sim.stop();
        await ns.cleanup();
      },
    };
  } catch (e) {
    await sim.stop();
    await ns.cleanup();
    throw e;
  }
}

export { waitForHttp };
