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
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { ensureBinaries, runPathScript } from './binaries.ts';
import { httpRequest, waitUntil } from './http.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { repoRoot } from './paths.ts';
import { generateClusterPki } from './pki.ts';
import { logTail, signalGroup, spawnInGroup, terminate } from './processes.ts';
import type { ManagedProcess } from './processes.ts';
import { reapOrphans, recordWithWatchdog, removeRecord, writeRecord } from './registry.ts';

export const NODE_IP = '10.213.0.1';
export const NODE_NAME = 'masakari-node';
export const POD_CIDR = '10.214.0.0/24';
export const SERVICE_CIDR = '10.215.0.0/24';
/** The `kubernetes` Service: the first address of SERVICE_CIDR. */
export const KUBERNETES_SERVICE_IP = '10.215.0.1';
export const APISERVER_PORT = 6443;
const BRIDGE = 'mko-pods';
const CNI_NETWORK = 'masakari-pods';
const LOCK_PATH = '/run/masakari-cluster.lock';
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

/** Takes the machine-wide lock, or says who holds it. */
function takeLock(): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(LOCK_PATH, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(LOCK_PATH, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(readFileSync(LOCK_PATH, 'utf8').trim());
      let alive = false;
      try {
        process.kill(holder, 0);
        alive = true;
      } catch {
        /* gone */
      }
      if (alive) throw new Error(`a test cluster is already running on this machine (pid ${holder}, ${LOCK_PATH})`);
      rmSync(LOCK_PATH, { force: true });
    }
  }
  throw new Error(`cannot take ${LOCK_PATH}`);
}

function run(cmd: string, args: string[], timeoutMs = 120_000): string {
  return execFileSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryRun(cmd: string, args: string[], timeoutMs = 60_000): void {
  spawnSync(cmd, args, { stdio: 'ignore', timeout: timeoutMs });
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
  writeFileSync(
    p('containerd.toml'),
    [
      'version = 2',
      `root = "${p('containerd')}"`,
      `state = "${p('run', 'containerd-state')}"`,
      '[grpc]',
      `  address = "${containerdSock}"`,
      '[plugins."io.containerd.grpc.v1.cri"]',
      `  sandbox_image = "${pauseImage}"`,
      // This machine denies lowering oom_score_adj (no CAP_SYS_RESOURCE for
      // it), so runc could not give the sandbox kubelet's -998; keep every
      // container at or above containerd's own score instead.
      '  restrict_oom_score_adj = true',
      '  [plugins."io.containerd.grpc.v1.cri".containerd]',
      '    snapshotter = "overlayfs"',
      '    default_runtime_name = "runc"',
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '      runtime_type = "io.containerd.runc.v2"',
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      '    bin_dir = "/usr/lib/cni"',
      `    conf_dir = "${p('cni')}"`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    p('cni', '10-masakari.conflist'),
    JSON.stringify({
      cniVersion: '0.4.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_CIDR }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: p('run', 'cni-ipam'),
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    }),
  );
  writeFileSync(
    p('kubelet.yaml'),
    dump({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: NODE_IP,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      tlsCertFile: files.kubeletCert,
      tlsPrivateKeyFile: files.kubeletKey,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: files.ca },
      },
      authorization: { mode: 'Webhook' },
      containerRuntimeEndpoint: `unix://${containerdSock}`,
      cgroupDriver: 'cgroupfs',
      // The machine runs cgroup v1; kubelet 1.34 refuses it unless told not to.
      failCgroupV1: false,
      failSwapOn: false,
      // A shared test machine: no evictions or image GC triggered by other
      // tenants' disk and memory use.
      evictionHard: { 'memory.available': '0%', 'nodefs.available': '0%', 'imagefs.available': '0%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      cgroupsPerQOS: false,
      enforceNodeAllocatable: [],
      resolvConf: '/etc/resolv.conf',
      serializeImagePulls: false,
      registerNode: true,
      nodeStatusUpdateFrequency: '5s',
      syncFrequency: '10s',
      fileCheckFrequency: '10s',
      volumeStatsAggPeriod: '0s',
      maxPods: 50,
    }),
  );
  writeFileSync(
    p('kube-proxy.yaml'),
    dump({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clusterCIDR: POD_CIDR,
      clientConnection: { kubeconfig: kubeconfigs['kube-proxy'] },
      hostnameOverride: NODE_NAME,
      bindAddress: NODE_IP,
      healthzBindAddress: '127.0.0.1:10256',
      metricsBindAddress: '127.0.0.1:10249',
      nodePortAddresses: [`${NODE_IP}/32`],
      // Leave the host's conntrack table sizes and timeouts alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { syncPeriod: '10s', minSyncPeriod: '1s' },
    }),
  );

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
      watchdog.release();
      process.off('exit', onExit);
      cleanupHost(log, dir);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
      removeRecord(id);
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

    start('kube-controller-manager', join(nodeBin, 'kube-controller-manager'), [
      `--kubeconfig=${kubeconfigs['kube-controller-manager']}`,
      `--authentication-kubeconfig=${kubeconfigs['kube-controller-manager']}`,
      `--authorization-kubeconfig=${kubeconfigs['kube-controller-manager']}`,
      '--bind-address=127.0.0.1',
      '--secure-port=10257',
      `--cert-dir=${p('pki', 'kcm')}`,
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
      `--kubeconfig=${kubeconfigs['kube-scheduler']}`,
      `--authentication-kubeconfig=${kubeconfigs['kube-scheduler']}`,
      `--authorization-kubeconfig=${kubeconfigs['kube-scheduler']}`,
      '--bind-address=127.0.0.1',
      '--secure-port=10259',
      `--cert-dir=${p('pki', 'scheduler')}`,
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

/** Kills and removes every container and sandbox of the node's containerd. */
function killAllContainers(ctr: (...args: string[]) => string, log: (line: string) => void): void {
  try {
    const ids = ctr('containers', 'list', '--quiet').split('\n').filter(Boolean);
    for (const cid of ids) {
      try {
        ctr('tasks', 'kill', '--signal', 'SIGKILL', cid);
      } catch {
        /* not running */
      }
    }
    for (const cid of ids) {
      try {
        ctr('tasks', 'delete', '--force', cid);
      } catch {
        /* no task */
      }
    }
  } catch (e) {
    log(`could not list containers: ${(e as Error).message}`);
  }
}

/** containerd-shim-runc-v2 processes outlive containerd; end ours (their command line names our socket). */
function killShims(containerdSock: string): void {
  let pids: string[] = [];
  try {
    pids = run('ps', ['-eo', 'pid=,args='])
      .split('\n')
      .filter((l) => l.includes('containerd-shim') && l.includes(containerdSock))
      .map((l) => l.trim().split(/\s+/)[0]!);
  } catch {
    return;
  }
  for (const pid of pids) signalGroup(Number(pid), 'SIGKILL');
}

/**
 * Removes what a previous cluster left on the host: mounts under old run
 * dirs, kube-proxy's and the CNI plugin's iptables rules, the pod bridge.
 */
function cleanupHost(log: (line: string) => void, onlyDir?: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => (onlyDir ? m.startsWith(onlyDir + '/') : m.startsWith('/var/tmp/masakari-cluster-')))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) tryRun('umount', ['-l', m]);
  if (!onlyDir) {
    for (const d of run('bash', ['-c', 'ls -d /var/tmp/masakari-cluster-* 2>/dev/null || true'])
      .split('\n')
      .filter(Boolean)) {
      rmSync(d, { recursive: true, force: true });
    }
  }
  for (const table of ['nat', 'filter', 'mangle']) {
    let rules = '';
    try {
      rules = run('iptables-save', ['-t', table]);
    } catch {
      continue;
    }
    // kube-proxy's and kubelet's KUBE-* chains, and the CNI-* chains the
    // bridge plugin made for our network (their rules carry its name); other
    // users' rules stay.
    const ours = new Set<string>();
    for (const l of rules.split('\n')) {
      if (!l.includes(`"${CNI_NETWORK}"`)) continue;
      for (const m of l.matchAll(/(?:-A|-j) (CNI-[0-9a-f]+)\b/g)) ours.add(m[1]!);
    }
    const isOurs = (chain: string): boolean => chain.startsWith('KUBE-') || ours.has(chain);
    const lines = rules.split('\n');
    const kept = lines.filter((l) => {
      const decl = /^:(\S+)/.exec(l);
      if (decl) return !isOurs(decl[1]!);
      const rule = /^-A (\S+)(?:.* -j (\S+))?/.exec(l);
      if (!rule) return true;
      return !isOurs(rule[1]!) && !(rule[2] && isOurs(rule[2]));
    });
    if (kept.length === lines.length) continue;
    const res = spawnSync('iptables-restore', ['-T', table], { input: kept.join('\n'), timeout: 30_000 });
    if (res.status !== 0) log(`could not clean iptables table ${table}: ${res.stderr?.toString()}`);
  }
  if (existsSync(`/sys/class/net/${BRIDGE}`)) tryRun('ip', ['link', 'delete', BRIDGE]);
}
