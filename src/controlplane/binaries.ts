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

export async function ensureBinaries(opts: { timeoutMs?: number } = {}): Promise<string> {
  const script = join(repoRoot(), 'hack', 'envtest', 'build.sh');
  const timeoutMs = opts.timeoutMs ?? BUILD_TIMEOUT_MS;
  const stdout = await new Promise<string>((resolve, reject) => {
    // build progress goes to our stderr; stdout carries only the bin dir
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${script}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${script} failed (${signal ?? `exit ${code}`}); see its output above`));
    });
  });
  const binDir = stdout.trim().split('\n').pop()?.trim() ?? '';
  for (const name of BINARY_NAMES) {
    try {
      accessSync(join(binDir, name), constants.X_OK);
    } catch {
      throw new Error(`${script} reported bin dir "${binDir}" but ${name} is not an executable there`);
    }
  }
  return binDir;
}
