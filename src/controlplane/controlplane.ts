// A throwaway Kubernetes control plane (etcd + kube-apiserver, no controllers)
// on loopback, for tests and `make run`. Start-up: reap orphans, temp dir,
// PKI, watchdog, etcd, kube-apiserver, default namespace, CRDs, kubeconfig.
// stop() undoes it all; the watchdog and the exit hook make sure the
// processes die with the owner even when stop() is never called.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from './binaries.ts';
import { installCrds, installPolicies } from './crds.ts';
import { httpRequest, waitUntil } from './http.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { defaultCrdDir, defaultPolicyDir } from './paths.ts';
import { generateControlPlanePki } from './pki.ts';
import { freePort } from './ports.ts';
import { logTail, signalGroup, spawnInGroup, terminate } from './processes.ts';
import type { ManagedProcess } from './processes.ts';
import { reapOrphans, recordWithWatchdog, removeRecord, writeRecord } from './registry.ts';

export interface ControlPlaneOptions {
  /** Dir with etcd and kube-apiserver; default: ensureBinaries(). */
  binDir?: string;
  /** CRDs to install; default <repo>/crds; null installs none. */
  crdDir?: string | null;
  /** ValidatingAdmissionPolicies to install after the CRDs; default <repo>/config/policy when CRDs are installed; null installs none. */
  policyDir?: string | null;
  /** Per component; default MASAKARI_CONTROLPLANE_START_TIMEOUT_MS or 90 s (2 slow cores). */
  startTimeoutMs?: number;
  /** SIGTERM grace per process before SIGKILL; default 10 s. */
  stopTimeoutMs?: number;
  /** Keep the temp dir (logs, etcd data) after stop(); also MASAKARI_CONTROLPLANE_KEEP=1. */
  keepDir?: boolean;
  /** Serve kube-apiserver's /debug/pprof (bench/storm --apiserver-profile); default off, as in production. */
  profiling?: boolean;
  /** kube-apiserver's --feature-gates, e.g. 'DetectCacheInconsistency=false' (bench/scale --apiserver-feature-gates); default none. */
  apiserverFeatureGates?: string;
  log?: (line: string) => void;
}

export interface ControlPlane {
  /** kubeconfig (YAML) with server, CA data and the admin token; removed by stop() with the temp dir. */
  kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** Bearer token of user "admin" in group system:masters. */
  token: string;
  /** base64 of the CA's PEM, as kubeconfig's certificate-authority-data and client-node's caData. */
  caData: string;
  /** The CA's PEM. */
  caPem: string;
  etcdUrl: string;
  /** Temp dir: pki/, etcd/, *.log, kubeconfig. */
  dir: string;
  id: string;
  /** The current processes (apiserver changes with restartApiServer). */
  pids: { etcd: number; apiserver: number; watchdog: number };
  stop(): Promise<void>;
  /**
   * Stops kube-apiserver (SIGTERM, then SIGKILL after stopTimeoutMs) and starts it again on the same
   * port with the same etcd and credentials; resolves once it is ready. For fault-injection tests.
   */
  restartApiServer(): Promise<void>;
}

const ADDRESS_IN_USE = /address already in use|bind: address|EADDRINUSE/i;
const PORT_ATTEMPTS = 3;

function defaultLog(line: string): void {
  process.stderr.write(`[controlplane] ${line}\n`);
}

const supportsNoFsync = new Map<string, boolean>();

/** etcd's --unsafe-no-fsync (3.5+) makes tests several times faster; probe --help as envtest does. */
function etcdSupportsNoFsync(etcd: string): boolean {
  let known = supportsNoFsync.get(etcd);
  if (known === undefined) {
    let help = '';
    try {
      help = execFileSync(etcd, ['--help'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      help = `${err.stdout ?? ''}${err.stderr ?? ''}`;
    }
    known = help.includes('unsafe-no-fsync');
    supportsNoFsync.set(etcd, known);
  }
  return known;
}

function exitedEarly(proc: ManagedProcess): Error | undefined {
  if (!proc.exit) return undefined;
  const how = proc.exit.signal ?? `exit code ${proc.exit.code}`;
  return new Error(
    `${proc.name} exited during start-up (${how}); last lines of ${proc.logPath}:\n${logTail(proc.logPath)}`,
  );
}

/**
 * Spawns a component on fresh ports, waiting with ready(); retries with new
 * ports when it lost a port race to another process.
 */
export async function startWithFreshPorts<P>(
  name: string,
  start: (ports: P) => ManagedProcess,
  ready: (proc: ManagedProcess, ports: P) => Promise<void>,
  pickPorts: () => Promise<P>,
): Promise<{ proc: ManagedProcess; ports: P }> {
  for (let attempt = 1; ; attempt++) {
    const ports = await pickPorts();
    const proc = start(ports);
    try {
      await ready(proc, ports);
      return { proc, ports };
    } catch (e) {
      if (!proc.exit) await terminate(proc, 5_000);
      if (attempt < PORT_ATTEMPTS && ADDRESS_IN_USE.test(logTail(proc.logPath, 50))) continue;
      throw e instanceof Error ? new Error(`${name}: ${e.message}`) : e;
    }
  }
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? defaultLog;
  const startTimeoutMs = opts.startTimeoutMs ?? (Number(process.env.MASAKARI_CONTROLPLANE_START_TIMEOUT_MS) || 90_000);
  const stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
  const keepDir = opts.keepDir ?? process.env.MASAKARI_CONTROLPLANE_KEEP === '1';
  const crdDir = opts.crdDir === undefined ? defaultCrdDir() : opts.crdDir;
  const binDir = opts.binDir ?? (await ensureBinaries());

  reapOrphans(log);

  const id = `cp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  const pkiDir = join(dir, 'pki');
  mkdirSync(pkiDir, { mode: 0o700 });
  const pki = generateControlPlanePki();
  const files = {
    ca: join(pkiDir, 'ca.crt'),
    servingCert: join(pkiDir, 'apiserver.crt'),
    servingKey: join(pkiDir, 'apiserver.key'),
    saPub: join(pkiDir, 'sa.pub'),
    saKey: join(pkiDir, 'sa.key'),
    tokens: join(pkiDir, 'tokens.csv'),
    kubeconfig: join(dir, 'kubeconfig'),
  };
  writeFileSync(files.ca, pki.ca.certPem);
  writeFileSync(files.servingCert, pki.serving.certPem);
  writeFileSync(files.servingKey, pki.serving.keyPem, { mode: 0o600 });
  writeFileSync(files.saPub, pki.serviceAccount.publicKeyPem);
  writeFileSync(files.saKey, pki.serviceAccount.privateKeyPem, { mode: 0o600 });
  const token = randomBytes(24).toString('hex');
  // token,user,uid,"group1,group2" — system:masters bypasses RBAC
  writeFileSync(files.tokens, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });

  const { watchdog, record } = recordWithWatchdog(id, dir);

  const procs: ManagedProcess[] = [];
  const track = (proc: ManagedProcess): ManagedProcess => {
    procs.push(proc);
    watchdog.guard(proc.pid);
    record.processes.push({ name: proc.name, pid: proc.pid, startTime: proc.startTime });
    writeRecord(record);
    return proc;
  };

  // Backstop for an owner that exits without stop(): 'exit' handlers must be
  // synchronous, so SIGKILL and remove; the watchdog covers fatal signals.
  const onExit = (): void => {
    for (const p of procs) if (!p.exit) signalGroup(p.pid, 'SIGKILL');
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
    removeRecord(id);
  };
  process.on('exit', onExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      // API server first, so it does not spend its grace period retrying a dead etcd.
      for (const p of [...procs].reverse()) await terminate(p, stopTimeoutMs);
      await watchdog.release();
      process.off('exit', onExit);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
      removeRecord(id);
    })());

  try {
    const etcdDir = join(dir, 'etcd');
    const etcdBin = join(binDir, 'etcd');
    const noFsync = etcdSupportsNoFsync(etcdBin);
    const etcd = await startWithFreshPorts(
      'etcd',
      ({ client, peer }) => {
        // a failed attempt may have bootstrapped a member with other peer URLs
        rmSync(etcdDir, { recursive: true, force: true });
        return track(
          spawnInGroup(
            'etcd',
            etcdBin,
            [
              '--name=envtest',
              `--data-dir=${etcdDir}`,
              `--listen-client-urls=http://127.0.0.1:${client}`,
              `--advertise-client-urls=http://127.0.0.1:${client}`,
              `--listen-peer-urls=http://127.0.0.1:${peer}`,
              `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
              `--initial-cluster=envtest=http://127.0.0.1:${peer}`,
              '--log-level=warn',
              ...(noFsync ? ['--unsafe-no-fsync=true'] : []),
            ],
            join(dir, 'etcd.log'),
          ),
        );
      },
      async (proc, { client }) => {
        await waitUntil(
          'etcd /health',
          async () => {
            const res = await httpRequest(`http://127.0.0.1:${client}/health`, { timeoutMs: 2_000 });
            return res.status === 200 ? true : undefined;
          },
          { timeoutMs: startTimeoutMs, abort: () => exitedEarly(proc) },
        );
      },
      async () => ({ client: await freePort(), peer: await freePort() }),
    );
    const etcdUrl = `http://127.0.0.1:${etcd.ports.client}`;

    const apiBin = join(binDir, 'kube-apiserver');
    const spawnApiServer = (port: number): ManagedProcess =>
      track(
        spawnInGroup(
          'kube-apiserver',
          apiBin,
          [
            `--etcd-servers=${etcdUrl}`,
            `--cert-dir=${pkiDir}`,
            `--tls-cert-file=${files.servingCert}`,
            `--tls-private-key-file=${files.servingKey}`,
            `--secure-port=${port}`,
            '--bind-address=127.0.0.1',
            '--advertise-address=127.0.0.1',
            '--service-cluster-ip-range=10.0.0.0/24',
            '--allow-privileged=true',
            '--authorization-mode=RBAC',
            `--token-auth-file=${files.tokens}`,
            '--disable-admission-plugins=ServiceAccount',
            `--service-account-issuer=https://127.0.0.1:${port}/`,
            `--service-account-key-file=${files.saPub}`,
            `--service-account-signing-key-file=${files.saKey}`,
            `--profiling=${opts.profiling === true}`,
            ...(opts.apiserverFeatureGates ? [`--feature-gates=${opts.apiserverFeatureGates}`] : []),
            '--v=1',
          ],
          join(dir, 'kube-apiserver.log'),
        ),
      );
    const apiServerReady = async (proc: ManagedProcess, port: number): Promise<void> => {
      await waitUntil(
        'kube-apiserver /readyz',
        async () => {
          const res = await httpRequest(`https://127.0.0.1:${port}/readyz`, {
            ca: pki.ca.certPem,
            token,
            timeoutMs: 5_000,
          });
          return res.status === 200 ? true : undefined;
        },
        { timeoutMs: startTimeoutMs, intervalMs: 250, abort: () => exitedEarly(proc) },
      );
    };
    const apiserver = await startWithFreshPorts(
      'kube-apiserver',
      ({ port }) => spawnApiServer(port),
      (proc, { port }) => apiServerReady(proc, port),
      async () => ({ port: await freePort() }),
    );
    const server = `https://127.0.0.1:${apiserver.ports.port}`;
    record.server = server;
    writeRecord(record);

    await waitUntil(
      'the default namespace',
      async () => {
        const res = await httpRequest(`${server}/api/v1/namespaces/default`, { ca: pki.ca.certPem, token });
        return res.status === 200 ? true : undefined;
      },
      { timeoutMs: startTimeoutMs, abort: () => exitedEarly(apiserver.proc) },
    );

    const api = { server, ca: pki.ca.certPem, token };
    const installed = crdDir ? await installCrds(api, crdDir, startTimeoutMs) : [];
    const policyDir = opts.policyDir === undefined ? (crdDir ? defaultPolicyDir() : null) : opts.policyDir;
    if (policyDir) installed.push(...(await installPolicies(api, policyDir)));

    const pids = { etcd: etcd.proc.pid, apiserver: apiserver.proc.pid, watchdog: watchdog.pid };
    let currentApiServer = apiserver.proc;
    // Same port, certificates and etcd: clients see the outage of a real restart, then the same server.
    const restartApiServer = async (): Promise<void> => {
      const old = currentApiServer;
      await terminate(old, stopTimeoutMs);
      procs.splice(procs.indexOf(old), 1);
      const port = apiserver.ports.port;
      currentApiServer = spawnApiServer(port);
      pids.apiserver = currentApiServer.pid; // track() appended it after etcd: stop() still ends it first
      await apiServerReady(currentApiServer, port);
    };

    const caData = Buffer.from(pki.ca.certPem).toString('base64');
    writeFileSync(files.kubeconfig, renderKubeconfig(server, caData, token), { mode: 0o600 });
    log(
      `control plane ${id} up at ${server} (etcd ${etcdUrl}); CRDs and policies: ${installed.join(', ') || 'none'}; kubeconfig ${files.kubeconfig}`,
    );
    return {
      kubeconfigPath: files.kubeconfig,
      server,
      token,
      caData,
      caPem: pki.ca.certPem,
      etcdUrl,
      dir,
      id,
      pids,
      stop,
      restartApiServer,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
