// The real Medik8s NodeHealthCheck operator (github.com/medik8s/node-healthcheck-operator), out of
// cluster against a test control plane. hack/nhc/build.sh builds it once from the source snapshot
// next to the repository (MASAKARI_NHC_SNAPSHOT) into the cache and prints the dir holding the
// binary, its CRDs and the commit; none of its code is in this repository.
//
// Out of cluster NHC wants DEPLOYMENT_NAMESPACE and a serving certificate for its webhook server
// in controller-runtime's default dir ($TMPDIR/k8s-webhook-server/serving-certs). The certificate
// is a throwaway one: no ValidatingWebhookConfiguration points at it, so the API server never calls
// NHC's webhook (its rules - selector required, escalation timeout >= 1 min - are not enforced here;
// the NodeHealthChecks the tests apply satisfy them anyway except where a test says otherwise).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPathScript } from '../../tools/controlplane/binaries.ts';
import { repoRoot } from '../../tools/controlplane/paths.ts';
import { generateControlPlanePki } from '../../tools/controlplane/pki.ts';

/** A first build on 2 cores takes minutes; give up after 30 rather than hang the suite. */
const BUILD_TIMEOUT_MS = 30 * 60_000;

export interface NhcBuild {
  /** The operator binary. */
  binary: string;
  /** Its CRD manifests (the snapshot's config/crd/bases/). */
  crdFiles: string[];
  /** The upstream commit (abbreviated) the snapshot is of. */
  commit: string;
}

let built: Promise<NhcBuild> | undefined;

/** Builds NHC into the cache on first use (hack/nhc/build.sh); later calls return at once. */
export function ensureNhc(): Promise<NhcBuild> {
  built ??= runPathScript(join(repoRoot(), 'hack', 'nhc', 'build.sh'), BUILD_TIMEOUT_MS).then((dir) => ({
    binary: join(dir, 'nhc'),
    crdFiles: readdirSync(join(dir, 'crds'))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => join(dir, 'crds', f)),
    commit: readFileSync(join(dir, 'COMMIT'), 'utf8').trim(),
  }));
  return built;
}

export interface RunningNhc {
  /** Everything NHC logged so far (its zap JSON lines), for assertions and failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts NHC against the cluster of `kubeconfigPath`: no leader election, no metrics or probe
 * listeners; `deploymentNamespace` is where it believes it runs (it creates nothing there that the
 * tests read). Resolves once it logs "starting manager"; rejects if it exits first.
 */
export async function startNhc(opts: {
  kubeconfigPath: string;
  deploymentNamespace: string;
  /** LEASE_NAMESPACE: where NHC keeps the node leases (NHC's default: medik8s-leases). */
  leaseNamespace?: string;
}): Promise<RunningNhc> {
  const { binary } = await ensureNhc();
  const home = mkdtempSync(join(tmpdir(), 'masakari-nhc-'));
  const certDir = join(home, 'k8s-webhook-server', 'serving-certs');
  mkdirSync(certDir, { recursive: true });
  const { serving } = generateControlPlanePki({ validDays: 2 });
  writeFileSync(join(certDir, 'tls.crt'), serving.certPem);
  writeFileSync(join(certDir, 'tls.key'), serving.keyPem, { mode: 0o600 });

  let out = '';
  const child: ChildProcess = spawn(
    binary,
    [
      `-kubeconfig=${opts.kubeconfigPath}`,
      '--leader-elect=false',
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
      '--zap-log-level=info',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        TMPDIR: home,
        DEPLOYMENT_NAMESPACE: opts.deploymentNamespace,
        ...(opts.leaseNamespace ? { LEASE_NAMESPACE: opts.leaseNamespace } : {}),
      },
    },
  );
  const collect = (c: Buffer) => {
    out += c.toString('utf8');
    // keep the tail only: a long run logs every reconcile
    if (out.length > 4_000_000) out = out.slice(-2_000_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // a test process that dies must not leave NHC running
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`NHC did not start within 60 s:\n${out.slice(-4000)}`)), 60_000);
    const check = () => {
      if (out.includes('Starting workers')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`NHC exited (${signal ?? code}) before it started:\n${out.slice(-4000)}`));
    });
  });

  return {
    output: () => out,
    stop: async () => {
      process.off('exit', killOnExit);
      // MASAKARI_TEST_NHC_LOG=<file>: keep what NHC logged, to read its side of a failure
      if (process.env.MASAKARI_TEST_NHC_LOG) writeFileSync(process.env.MASAKARI_TEST_NHC_LOG, out);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}
