// The kubectl of the envtest scripts (hack/envtest/kubectl.sh), for the
// benches' reads of a control plane with its own kubeconfig.
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let kubectl: string | undefined;

/** The kubectl the envtest scripts use (hack/envtest/kubectl.sh), found once: callers poll with it. */
export function kubectlPath(): string {
  kubectl ??= execFileSync('bash', [path.join(ROOT, 'hack/envtest/kubectl.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return kubectl;
}

/** `kubectl get --raw <path>` against the API server of `kubeconfigPath`: the body, as text. */
export function getRaw(kubeconfigPath: string, path: string, timeoutMs = 120_000): string {
  return execFileSync(kubectlPath(), ['--kubeconfig', kubeconfigPath, 'get', '--raw', path], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 << 20,
    timeout: timeoutMs,
  });
}

/** The same, asynchronously, as bytes (binary answers such as kube-apiserver's /debug/pprof profiles). */
export function getRawBytes(kubeconfigPath: string, path: string, timeoutMs = 120_000): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) =>
    execFile(
      kubectlPath(),
      ['--kubeconfig', kubeconfigPath, 'get', '--raw', path],
      { encoding: 'buffer', maxBuffer: 256 << 20, timeout: timeoutMs },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
}
