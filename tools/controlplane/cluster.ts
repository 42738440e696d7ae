// A real single-node Kubernetes cluster on this machine, for the cluster tests
// (test/cluster/): etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd (runc, bridge CNI), kubelet and kube-proxy, so
// the operator runs as pods the way a platform team installs it.
//
// Unlike the loopback control plane (controlplane.ts) it needs root, changes
// host state (iptables rules, a bridge, the node IP on lo) and uses fixed
// ports on the node IP, so only one runs per machine (a lock file). The
// node IP (10.213.0.1 on lo) is local-only: nothing outside routes to it,
// and pods reach it through the bridge's gateway, unlike 127.0.0.1.
//
// Binaries: hack/envtest/build.sh (etcd, kube-apiserver) and
// hack/cluster/build.sh (the other four, same k8s.io/kubernetes version).
// Host packages and the pause image: hack/cluster/host.sh. Images are loaded
// with `ctr images import`, never pulled.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinaries, runPathScript } from './binaries.ts';
import { cleanupHost, killAllContainers, killShims, run, takeLock } from './cluster-host.ts';
import {
  APISERVER_PORT,
  KUBERNETES_SERVICE_IP,
  NODE_IP,
  NODE_NAME,
  SERVICE_CIDR,
  writeNodeConfigs,
} from './cluster-node-config.ts';
import { httpRequest, waitUntil } from './http.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { repoRoot } from './paths.ts';
import { generateClusterPki } from './pki.ts';
import { logTail, signalGroup, spawnInGroup, terminate } from './processes.ts';
import type { ManagedProcess } from './processes.ts';
import { removeRunDir } from './mounts.ts';
import { reapOrphans, recordWithWatchdog, removeRecord, writeRecord } from './registry.ts';

const BUILD_TIMEOUT_MS = 60 * 60_000;

export interface ClusterOptions {
  /** docker-archive tarballs to import into containerd (k8s.io namespace) before returning. */
  images?: string[];
  startTimeoutMs?: number;
  stopTimeoutMs?: number;
  /** Keep the run dir (logs) after stop(); also MASAKARI_CLUSTER_KEEP=1. */
  keepDir?: boolean;
  log?: (line: string) => void;
}

export interface Cluster {
  /** kubeconfig of user admin (system:masters). */
  kubeconfigPath: string;
  server: string;
  nodeIp: string;
  nodeName: string;
  /** Run dir: pki/, etcd/, containerd/, kubelet/, *.log, kubeconfig. */
  dir: string;
  /** Imports a docker-archive tarball into the node's containerd. */
  importImage(archive: string): void;
  stop(): Promise<void>;
}

function defaultLog(line: string): void {
  process.stderr.write(`[cluster] ${line}\n`);
}

export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const log = opts.log ?? defaultLog;
  const startTimeoutMs = opts.startTimeoutMs ?? (Number(process.env.MASAKARI_CLUSTER_START_TIMEOUT_MS) || 180_000);
  const stopTimeoutMs = opts.stopTimeoutMs ?? 15_000;
  const keepDir = opts.keepDir ?? process.env.MASAKARI_CLUSTER_KEEP === '1';
  if (process.getuid?.() !== 0) throw new Error('the test cluster needs root (kubelet, containerd, iptables)');

  const root = repoRoot();
  const [envtestBin, nodeBin, pauseArchive] = await Promise.all([
    ensureBinaries({ timeoutMs: BUILD_TIMEOUT_MS }),
    runPathScript(join(root, 'hack', 'cluster', 'build.sh'), BUILD_TIMEOUT_MS),
    runPathScript(join(root, 'hack', 'cluster', 'host.sh'), BUILD_TIMEOUT_MS),
  ]);
  const pauseImage = run('bash', [
    '-c',
    `source ${join(root, 'hack', 'image', 'common.sh')}; echo $PAUSE_IMAGE`,
  ]).trim();

  const releaseLock = takeLock();
  reapOrphans(log);
  cleanupHost(log);

  const id = `cluster-${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync('/var/tmp/masakari-cluster-');
  const p = (...parts: string[]): string => join(dir, ...parts);
  for (const d of ['pki', 'etcd', 'containerd', 'kubelet', 'cni', 'run']) mkdirSync(p(d), { mode: 0o700 });

  const pki = generateClusterPki({ nodeIp: NODE_IP, nodeName: NODE_NAME, serviceIp: KUBERNETES_SERVICE_IP });
  const files = {
    ca: p('pki', 'ca.crt'),
    caKey: p('pki', 'ca.key'),
    servingCert: p('pki', 'apiserver.crt'),
    servingKey: p('pki', 'apiserver.key'),
    kubeletClientCert: p('pki', 'apiserver-kubelet-client.crt'),
    kubeletClientKey: p('pki', 'apiserver-kubelet-client.key'),
    kubeletCert: p('pki', 'kubelet.crt'),
    kubeletKey: p('pki', 'kubelet.key'),
    saPub: p('pki', 'sa.pub'),
    saKey: p('pki', 'sa.key'),
    tokens: p('pki', 'tokens.csv'),
  };
  const secret = (path: string, data: string): void => writeFileSync(path, data, { mode: 0o600 });
  writeFileSync(files.ca, pki.ca.certPem);
  secret(files.caKey, pki.ca.keyPem);
  writeFileSync(files.servingCert, pki.serving.certPem);
  secret(files.servingKey, pki.serving.keyPem);
  writeFileSync(files.kubeletClientCert, pki.kubeletClient.certPem);
  secret(files.kubeletClientKey, pki.kubeletClient.keyPem);
  writeFileSync(files.kubeletCert, pki.kubeletServing.certPem);
  secret(files.kubeletKey, pki.kubeletServing.keyPem);
  writeFileSync(files.saPub, pki.serviceAccount.publicKeyPem);
  secret(files.saKey, pki.serviceAccount.privateKeyPem);

  // One token per component, each its own Kubernetes identity, so RBAC and
  // the Node authorizer apply as on a kubeadm cluster.
  const identities = {
    admin: { user: 'admin', groups: 'system:masters' },
    'kube-controller-manager': { user: 'system:kube-controller-manager', groups: '' },
    'kube-scheduler': { user: 'system:kube-scheduler', groups: '' },
    kubelet: { user: `system:node:${NODE_NAME}`, groups: 'system:nodes' },
    'kube-proxy': { user: 'system:kube-proxy', groups: '' },
  };
  const server = `https://${NODE_IP}:${APISERVER_PORT}`;
  const caData = Buffer.from(pki.ca.certPem).toString('base64');
  const kubeconfigs: Record<string, string> = {};
  const tokenLines: string[] = [];
  for (const [name, who] of Object.entries(identities)) {
    const token = randomBytes(24).toString('hex');
    tokenLines.push(`${token},${who.user},${who.user},"${who.groups}"`);
    kubeconfigs[name] = p(`${name}.kubeconfig`);
    secret(kubeconfigs[name], renderKubeconfig(server, caData, token));
  }
  secret(files.tokens, tokenLines.join('\n') + '\n');
  const adminToken = tokenLines[0]!.split(',')[0]!;

  const containerdSock = p('run', 'containerd.sock');
  writeNodeConfigs({
    p,
    pauseImage,
    containerdSock,
    files,
    kubeProxyKubeconfig: kubeconfigs['kube-proxy']!,
  });

  const { watchdog, record } = recordWithWatchdog(id, dir, server);

  const procs: ManagedProcess[] = [];
  const start = (name: string, bin: string, args: string[]): ManagedProcess => {
    const proc = spawnInGroup(name, bin, args, p(`${name}.log`));
    procs.push(proc);
    watchdog.guard(proc.pid);
    record.processes.push({ name, pid: proc.pid, startTime: proc.startTime });
    writeRecord(record);
    return proc;
  };
  const exitedEarly = (proc: ManagedProcess) => (): Error | undefined =>
    proc.exit
      ? new Error(`${proc.name} exited during start-up; last lines of ${proc.logPath}:\n${logTail(proc.logPath)}`)
      : undefined;

  const onExit = (): void => {
    for (const proc of procs) if (!proc.exit) signalGroup(proc.pid, 'SIGKILL');
    releaseLock();
  };
  process.on('exit', onExit);

  const ctr = (...args: string[]): string =>
    run('ctr', ['--address', containerdSock, '--namespace', 'k8s.io', ...args], 300_000);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const byName = new Map(procs.map((proc) => [proc.name, proc]));
      // kubelet first (it would restart what we kill), then every container,
      // then the rest in reverse start order.
      const kubelet = byName.get('kubelet');
      if (kubelet) await terminate(kubelet, stopTimeoutMs);
      if (byName.get('containerd') && !byName.get('containerd')!.exit) killAllContainers(ctr, log);
      for (const proc of [...procs].reverse()) await terminate(proc, stopTimeoutMs);
      killShims(containerdSock);
      await watchdog.release();
      process.off('exit', onExit);
      cleanupHost(log, dir);
      // A dir we cannot remove keeps its record, so the next start reaps it.
      const failed = keepDir ? undefined : removeRunDir(dir);
      if (failed) log(`could not remove ${dir}; the next start reaps it: ${failed.message}`);
      else removeRecord(id);
      releaseLock();
    })());

  try {
    const etcd = start('etcd', join(envtestBin, 'etcd'), [
      '--name=masakari-cluster',
      `--data-dir=${p('etcd')}`,
      '--listen-client-urls=http://127.0.0.1:2479',
      '--advertise-client-urls=http://127.0.0.1:2479',
      '--listen-peer-urls=http://127.0.0.1:2480',
      '--initial-advertise-peer-urls=http://127.0.0.1:2480',
      '--initial-cluster=masakari-cluster=http://127.0.0.1:2480',
      '--log-level=warn',
      '--unsafe-no-fsync=true',
    ]);
    await waitUntil(
      'etcd /health',
      async () =>
        (await httpRequest('http://127.0.0.1:2479/health', { timeoutMs: 2_000 })).status === 200 ? true : undefined,
      { timeoutMs: startTimeoutMs, abort: exitedEarly(etcd) },
    );

    const apiserver = start('kube-apiserver', join(envtestBin, 'kube-apiserver'), [
      '--etcd-servers=http://127.0.0.1:2479',
      `--cert-dir=${p('pki')}`,
      `--tls-cert-file=${files.servingCert}`,
      `--tls-private-key-file=${files.servingKey}`,
      `--client-ca-file=${files.ca}`,
      `--kubelet-client-certificate=${files.kubeletClientCert}`,
      `--kubelet-client-key=${files.kubeletClientKey}`,
      // The node name resolves nowhere; logs, exec and port-forward go to its IP.
      '--kubelet-preferred-address-types=InternalIP',
      `--secure-port=${APISERVER_PORT}`,
      `--bind-address=${NODE_IP}`,
      `--advertise-address=${NODE_IP}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      `--token-auth-file=${files.tokens}`,
      `--service-account-issuer=https://kubernetes.default.svc`,
      `--service-account-key-file=${files.saPub}`,
      `--service-account-signing-key-file=${files.saKey}`,
      '--allow-privileged=false',
      '--profiling=false',
      '--v=1',
    ]);
    await waitUntil(
      'kube-apiserver /readyz',
      async () => {
        const res = await httpRequest(`${server}/readyz`, { ca: pki.ca.certPem, token: adminToken, timeoutMs: 5_000 });
        return res.status === 200 ? true : undefined;
      },
      { timeoutMs: startTimeoutMs, intervalMs: 500, abort: exitedEarly(apiserver) },
    );

    // kube-controller-manager and kube-scheduler: their own identity, and their HTTPS port on loopback.
    const componentArgs = (name: string, securePort: number, certDir: string): string[] => [
      `--kubeconfig=${kubeconfigs[name]}`,
      `--authentication-kubeconfig=${kubeconfigs[name]}`,
      `--authorization-kubeconfig=${kubeconfigs[name]}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${securePort}`,
      `--cert-dir=${p('pki', certDir)}`,
    ];
    start('kube-controller-manager', join(nodeBin, 'kube-controller-manager'), [
      ...componentArgs('kube-controller-manager', 10257, 'kcm'),
      `--root-ca-file=${files.ca}`,
      `--service-account-private-key-file=${files.saKey}`,
      '--use-service-account-credentials=true',
      `--cluster-signing-cert-file=${files.ca}`,
      `--cluster-signing-key-file=${files.caKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--leader-elect=false',
      '--v=1',
    ]);
    start('kube-scheduler', join(nodeBin, 'kube-scheduler'), [
      ...componentArgs('kube-scheduler', 10259, 'scheduler'),
      '--leader-elect=false',
      '--v=1',
    ]);

    const containerd = start('containerd', 'containerd', ['--config', p('containerd.toml')]);
    await waitUntil(
      'containerd',
      async () =>
        spawnSync('ctr', ['--address', containerdSock, 'version'], { stdio: 'ignore', timeout: 5_000 }).status === 0
          ? true
          : undefined,
      { timeoutMs: startTimeoutMs, intervalMs: 250, abort: exitedEarly(containerd) },
    );
    for (const archive of [pauseArchive, ...(opts.images ?? [])]) ctr('images', 'import', archive);

    const kubelet = start('kubelet', join(nodeBin, 'kubelet'), [
      `--config=${p('kubelet.yaml')}`,
      `--kubeconfig=${kubeconfigs.kubelet}`,
      `--root-dir=${p('kubelet')}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_IP}`,
      '--v=1',
    ]);
    start('kube-proxy', join(nodeBin, 'kube-proxy'), [`--config=${p('kube-proxy.yaml')}`, '--v=1']);

    await waitUntil(
      `node ${NODE_NAME} Ready`,
      async () => {
        const res = await httpRequest(`${server}/api/v1/nodes/${NODE_NAME}`, { ca: pki.ca.certPem, token: adminToken });
        if (res.status !== 200) return undefined;
        const node = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
      },
      { timeoutMs: startTimeoutMs, intervalMs: 1_000, abort: exitedEarly(kubelet) },
    );

    const kubeconfigPath = kubeconfigs.admin!;
    log(
      `cluster ${id} up at ${server}, node ${NODE_NAME} (${NODE_IP}) Ready; kubeconfig ${kubeconfigPath}; logs in ${dir}`,
    );
    return {
      kubeconfigPath,
      server,
      nodeIp: NODE_IP,
      nodeName: NODE_NAME,
      dir,
      importImage: (archive: string) => void ctr('images', 'import', archive),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
