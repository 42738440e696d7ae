// The Keystone + Nova simulator as its own process (cli.ts), driven only
// through its control API (/_sim/...), as a developer would. The chaos suite
// kills and restarts it; bench/scale keeps it off the load generator's event
// loop, where the engine's Nova calls would otherwise delay the answers the
// bench is timing.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const nodeBin = path.join(root, 'node_modules/.bin/node');

export interface SimServer {
  id: string;
  name: string;
  host: string;
  vmState: string;
  taskState: string | null;
  locked: boolean;
  lockedBy: 'admin' | 'owner' | null;
  metadata: Record<string, string>;
}
export interface SimHost {
  host: string;
  status: 'enabled' | 'disabled';
  state: 'up' | 'down';
}
export interface SimState {
  hosts: SimHost[];
  servers: SimServer[];
}

export interface SimulatorProcess {
  url: string;
  /** OS_* variables for the operator (the simulator's admin). */
  credentials: Record<string, string>;
  child: ChildProcess;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  stderr(): string;
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export async function startSimulatorProcess(args: string[]): Promise<SimulatorProcess> {
  const child = spawn(nodeBin, ['--import', 'tsx', path.join(root, 'tools/simulator/cli.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-16_384)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${err}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^# Nova: (http:\/\/\S+)\/compute\/v2\.1/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', () => reject(new Error(`simulator exited at start: ${err}`)));
  });
  const credentials = Object.fromEntries(
    [...out.matchAll(/^export (OS_[A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
  const sim: SimulatorProcess = {
    url,
    credentials,
    child,
    stderr: () => err,
    async call<T>(method: string, p: string, body?: unknown): Promise<T> {
      const r = await fetch(`${url}/_sim${p}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await r.text();
      if (r.status >= 400) throw new Error(`simulator ${method} ${p}: ${r.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async stop() {
      if (sim.exit) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
  child.once('exit', (code, signal) => (sim.exit = { code, signal }));
  return sim;
}
