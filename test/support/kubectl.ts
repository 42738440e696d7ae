// The one place the tests learn which kubectl to run. hack/envtest/kubectl.sh
// decides (KUBECTL env var, else `kubectl` on PATH, else a kubectl built from
// the pinned k8s.io/kubernetes module into the envtest cache, the first time
// only) and prints the path; asking it once per process keeps that order in
// one script that CI (.ci/run) and the tests share.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../hack/envtest/kubectl.sh', import.meta.url));

/** A first build on 2 cores takes minutes; give up well before a CI budget runs out. */
const BUILD_TIMEOUT_MS = 30 * 60_000;

let resolved: Promise<string> | undefined;

/** Path of the kubectl to run; rejects (with the script's reason) when there is none and it cannot be built. */
export function kubectlBinary(): Promise<string> {
  resolved ??= resolveKubectl();
  return resolved;
}

function resolveKubectl(): Promise<string> {
  return new Promise((resolve, reject) => {
    // stdout carries only the path; build progress and the choice go to our stderr
    const child = spawn('bash', [SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, BUILD_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${SCRIPT}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const path = out.trim().split('\n').pop()?.trim() ?? '';
      if (code === 0 && path) resolve(path);
      else if (timedOut) reject(new Error(`${SCRIPT} did not finish within ${BUILD_TIMEOUT_MS} ms`));
      else reject(new Error(`${SCRIPT} found no kubectl (${signal ?? `exit ${code}`}); see its output above`));
    });
  });
}
