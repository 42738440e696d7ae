// Locates (and on first use builds) the kube-apiserver and etcd binaries.
// hack/envtest/build.sh builds them from Go modules into a cache outside git
// (MASAKARI_ASSETS, default ~/.cache/masakari-operator/envtest) and prints the
// bin dir; once cached it returns at once.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.ts';

export const BINARY_NAMES = ['etcd', 'kube-apiserver'] as const;

/** A first build on 2 cores takes minutes; give up after an hour rather than hang CI. */
const BUILD_TIMEOUT_MS = 60 * 60_000;

/**
 * Runs one of the hack/ scripts that print a path as their last stdout line
 * (their progress goes to our stderr) and resolves with that line; bounded by
 * timeoutMs, after which the script is killed.
 */
export function runPathScript(script: string, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${script}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const path = out.trim().split('\n').pop()?.trim() ?? '';
      if (code === 0 && path) resolve(path);
      else if (timedOut) reject(new Error(`${script} did not finish within ${timeoutMs} ms`));
      else reject(new Error(`${script} failed (${signal ?? `exit ${code}`}); see its output above`));
    });
  });
}

export async function ensureBinaries(opts: { timeoutMs?: number } = {}): Promise<string> {
  const script = join(repoRoot(), 'hack', 'envtest', 'build.sh');
  const binDir = await runPathScript(script, opts.timeoutMs ?? BUILD_TIMEOUT_MS);
  for (const name of BINARY_NAMES) {
    try {
      accessSync(join(binDir, name), constants.X_OK);
    } catch {
      throw new Error(`${script} reported bin dir "${binDir}" but ${name} is not an executable there`);
    }
  }
  return binDir;
}
