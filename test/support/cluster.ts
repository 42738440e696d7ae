// Integration-test fixture: a fresh namespace on the shared control plane.
//
// Under `npm test` / scripts/run-tests.mjs one control plane serves the whole
// run and MASAKARI_TEST_KUBECONFIG names its kubeconfig. A developer running
// one file directly (node --import tsx node_modules/uvu/bin.js test/integration/x y.test.ts)
// has no such variable: the first useNamespace() then starts a private control
// plane that stops when the process exits.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../../tools/controlplane/index.ts';
import type { ControlPlane } from '../../tools/controlplane/index.ts';
import { kubectlBinary } from './kubectl.ts';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface TestNamespace {
  kubeconfigPath: string;
  /** @kubernetes/client-node KubeConfig for the shared control plane (admin, TLS verified). */
  kc: KubeConfig;
  namespace: string;
  /**
   * Runs kubectl with --kubeconfig and --namespace set (an explicit -n in args
   * wins). stdin, when given, is piped in (for `apply -f -`). Never throws on
   * a non-zero exit; a run longer than 60 s is killed and reported as code -1.
   */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /** Deletes the namespace (best effort: without kube-controller-manager it stays Terminating, which isolates nothing). */
  cleanup(): Promise<void>;
}

const KUBECTL_TIMEOUT_MS = 60_000;

let privatePlane: Promise<ControlPlane> | undefined;

/** The shared kubeconfig, or a private control plane's for a file run on its own. */
async function kubeconfigPath(): Promise<string> {
  const shared = process.env.MASAKARI_TEST_KUBECONFIG;
  if (shared) return shared;
  if (!privatePlane) {
    privatePlane = startControlPlane();
    const started = privatePlane;
    let stopping = false;
    // beforeExit fires once the tests have drained the event loop; a stop
    // started there keeps the loop alive until the processes are gone. (The
    // control plane's own exit hook and watchdog cover abrupt exits.)
    process.on('beforeExit', () => {
      if (stopping) return;
      stopping = true;
      void started.then((cp) => cp.stop()).catch(() => undefined);
    });
  }
  return (await privatePlane).kubeconfigPath;
}

/**
 * Runs the kubectl test/support/kubectl.ts resolves (built on first use when
 * the machine has none). Never throws: a kubectl that cannot be found or built
 * is reported as code -1 with the reason in stderr, like a killed run.
 */
export async function runKubectl(kubeconfig: string, args: string[], stdin?: string): Promise<KubectlResult> {
  let binary: string;
  try {
    binary = await kubectlBinary();
  } catch (e) {
    return { code: -1, stdout: '', stderr: e instanceof Error ? e.message : String(e) };
  }
  return new Promise((resolve) => {
    const child = execFile(
      binary,
      [`--kubeconfig=${kubeconfig}`, ...args],
      { timeout: KUBECTL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; killed?: boolean }) | null;
        const code = !e ? 0 : e.killed ? -1 : typeof e.code === 'number' ? e.code : -1;
        resolve({ code, stdout, stderr: e && code === -1 ? `${stderr}${e.message}` : stderr });
      },
    );
    child.stdin?.end(stdin ?? '');
  });
}

/** A fresh namespace `<prefix>-<random>` on the shared control plane. */
export async function useNamespace(prefix: string): Promise<TestNamespace> {
  const path = await kubeconfigPath();
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const core = kc.makeApiClient(CoreV1Api);
  // namespace names are DNS labels: at most 63 characters
  const base =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50) || 'test';
  const namespace = `${base}-${randomBytes(4).toString('hex')}`;
  await core.createNamespace({
    body: { metadata: { name: namespace, labels: { 'masakari.openkeel.io/test': base } } },
  });
  return {
    kubeconfigPath: path,
    kc,
    namespace,
    kubectl: (args, stdin) => runKubectl(path, [`--namespace=${namespace}`, ...args], stdin),
    cleanup: async () => {
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    },
  };
}
