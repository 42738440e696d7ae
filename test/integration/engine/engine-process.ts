// Engine components in their own processes (crash-engine-child.ts), for the
// tests that SIGKILL an engine: a crash leaves no graceful stop, no Lease
// release and no unlock, exactly as a killed pod would.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { EngineEnv } from './support.ts';

const NODE = process.execPath;
const CHILD = new URL('./crash-engine-child.ts', import.meta.url).pathname;
const READY_TIMEOUT_MS = 60_000;

export interface EngineProcess {
  proc: ChildProcess;
  identity: string;
}

/**
 * Starts an engine process against env's control plane and simulator and
 * resolves once it is ready; its stderr goes to logPath. `extraEnv` reaches
 * its configuration (e.g. MASAKARI__OPERATOR__LEASE_DURATION). A process that
 * is not ready in time is killed before the promise rejects.
 */
export function startEngineProcess(
  env: EngineEnv,
  identity: string,
  logPath: string,
  extraEnv: Record<string, string> = {},
): Promise<EngineProcess> {
  const proc = spawn(NODE, ['--import', 'tsx', CHILD], {
    cwd: new URL('../../..', import.meta.url).pathname,
    env: {
      ...process.env,
      ...env.sim.credentials,
      ...extraEnv,
      CRASH_KUBECONFIG: env.ns.kubeconfigPath,
      CRASH_NAMESPACE: env.namespace,
      CRASH_IDENTITY: identity,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logPath, { flags: 'a' });
  proc.stderr?.pipe(log);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`engine ${identity} not ready in ${READY_TIMEOUT_MS / 1000} s (log: ${logPath})`));
    }, READY_TIMEOUT_MS);
    proc.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve({ proc, identity });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine ${identity} exited with ${code} before ready (log: ${logPath})`));
    });
  });
}

/** SIGKILLs the process (if still alive) and waits for it to be gone. */
export async function killEngineProcess(child: EngineProcess): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  const exited = once(child.proc, 'exit');
  child.proc.kill('SIGKILL');
  await exited;
}
