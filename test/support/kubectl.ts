// The one place the tests learn which kubectl to run. hack/envtest/kubectl.sh
// decides (KUBECTL env var, else `kubectl` on PATH, else a kubectl built from
// the pinned k8s.io/kubernetes module into the envtest cache, the first time
// only) and prints the path; asking it once per process keeps that order in
// one script that CI (.ci/run) and the tests share.
import { fileURLToPath } from 'node:url';
import { runPathScript } from '../../tools/controlplane/binaries.ts';

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
  return runPathScript(SCRIPT, BUILD_TIMEOUT_MS);
}
