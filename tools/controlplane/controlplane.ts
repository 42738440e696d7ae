// A throwaway Kubernetes control plane (etcd + kube-apiserver, no controllers)
// on loopback, for tests and `make run`. Start-up: reap orphans, temp dir,
// PKI (credentials.ts), watchdog, etcd, kube-apiserver (their flags in
// command-lines.ts), default namespace, CRDs, kubeconfig.
// Shape 'ha' is a production-shaped one instead: a three-member etcd cluster,
// two kube-apiservers (each with its own watch cache) on all three members,
// and a TCP balancer in front (balancer.ts) whose address the kubeconfig uses.
// stop() undoes it all; the watchdog and the exit hook make sure the
// processes die with the owner even when stop() is never called.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBalancer } from './balancer.ts';
import type { Balancer } from './balancer.ts';
import { ensureBinaries } from './binaries.ts';
import { apiServerArgs, etcdArgs } from './command-lines.ts';
import { installCrds, installPolicies } from './crds.ts';
import { writeCredentials } from './credentials.ts';
import { httpRequest, waitUntil } from './http.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { defaultCrdDir, defaultPolicyDir } from './paths.ts';
import { ensureEtcdTools, etcdLeader, RESTORE_BUMP_REVISION, restoreSnapshot, saveSnapshot } from './ha.ts';
import type { HaControls } from './ha.ts';
import type { ControlPlane, ControlPlaneOptions } from './contract.ts';
import { startLink } from './link.ts';
import type { Link } from './link.ts';
import { freePort } from './ports.ts';
import { signalGroup, spawnInGroup, terminate } from './processes.ts';
import type { ManagedProcess } from './processes.ts';
import { reapOrphans, recordWithWatchdog, removeRecord, writeRecord } from './registry.ts';
import { etcdSupportsNoFsync, exitedEarly, startWithFreshPorts } from './start.ts';

export { startWithFreshPorts };

const HA_ETCD_MEMBERS = 3;
const HA_API_SERVERS = 2;

function defaultLog(line: string): void {
  process.stderr.write(`[controlplane] ${line}\n`);
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? defaultLog;
  const startTimeoutMs = opts.startTimeoutMs ?? (Number(process.env.MASAKARI_CONTROLPLANE_START_TIMEOUT_MS) || 90_000);
  const stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
  const keepDir = opts.keepDir ?? process.env.MASAKARI_CONTROLPLANE_KEEP === '1';
  const crdDir = opts.crdDir === undefined ? defaultCrdDir() : opts.crdDir;
  const binDir = opts.binDir ?? (await ensureBinaries());
  const shape = opts.shape ?? 'single';

  reapOrphans(log);

  const id = `cp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'masakari-cp-'));
  const { pkiDir, pki, files, token } = writeCredentials(dir);

  const { watchdog, record } = recordWithWatchdog(id, dir);

  const procs: ManagedProcess[] = [];
  let etcdProcs: ManagedProcess[] = [];
  const balancers: Balancer[] = [];
  const links: Link[] = [];
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
      for (const b of balancers) await b.close();
      for (const l of links) await l.close();
      // API servers first, so they do not spend their grace period retrying a dead etcd;
      // a restarted etcd member comes after them in procs, hence the stable sort.
      const order = [...procs]
        .reverse()
        .sort((x, y) => Number(x.name.startsWith('etcd')) - Number(y.name.startsWith('etcd')));
      for (const p of order) await terminate(p, stopTimeoutMs);
      await watchdog.release();
      process.off('exit', onExit);
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
      removeRecord(id);
    })());

  try {
    const etcdBin = join(binDir, 'etcd');
    const noFsync = etcdSupportsNoFsync(etcdBin);
    const members = shape === 'ha' ? HA_ETCD_MEMBERS : 1;
    const memberName = (i: number): string => (members === 1 ? 'envtest' : `etcd-${i}`);
    const memberDir = (i: number): string => join(dir, members === 1 ? 'etcd' : `etcd-${i}`);
    type EtcdPorts = { client: number; peer: number }[];
    const initialCluster = (ports: EtcdPorts): string =>
      ports.map((p, i) => `${memberName(i)}=http://127.0.0.1:${p.peer}`).join(',');
    const spawnEtcd = (i: number, ports: EtcdPorts): ManagedProcess => {
      const { client, peer } = ports[i]!;
      return track(
        spawnInGroup(
          members === 1 ? 'etcd' : `etcd-${i}`,
          etcdBin,
          etcdArgs({
            name: memberName(i),
            dataDir: memberDir(i),
            clientPort: client,
            peerPort: peer,
            initialCluster: initialCluster(ports),
            clusterToken: id,
            noFsync,
          }),
          join(dir, members === 1 ? 'etcd.log' : `etcd-${i}.log`),
        ),
      );
    };
    // /health answers 200 only with a leader, so the members start together and are awaited together.
    const etcdCluster = await startWithFreshPorts(
      'etcd',
      (ports: EtcdPorts) => {
        const started = ports.map((_, i) => {
          // a failed attempt may have bootstrapped a member with other peer URLs
          rmSync(memberDir(i), { recursive: true, force: true });
          return spawnEtcd(i, ports);
        });
        etcdProcs = started;
        return started[0]!;
      },
      async (_first, ports) => {
        await Promise.all(
          ports.map((p, i) =>
            waitUntil(
              `etcd member ${memberName(i)} /health`,
              async () => {
                const res = await httpRequest(`http://127.0.0.1:${p.client}/health`, { timeoutMs: 2_000 });
                return res.status === 200 ? true : undefined;
              },
              { timeoutMs: startTimeoutMs, abort: () => etcdProcs.map(exitedEarly).find(Boolean) },
            ),
          ),
        );
      },
      async () => {
        const ports: EtcdPorts = [];
        for (let i = 0; i < members; i++) ports.push({ client: await freePort(), peer: await freePort() });
        return ports;
      },
      async () => {
        for (const p of etcdProcs) if (!p.exit) await terminate(p, 5_000);
      },
      () => etcdProcs.map((p) => p.logPath),
    );
    const etcdPorts = etcdCluster.ports;
    const etcdUrls = etcdPorts.map((p) => `http://127.0.0.1:${p.client}`);
    const etcdUrl = etcdUrls[0]!;

    const apiBin = join(binDir, 'kube-apiserver');
    const apiServers = shape === 'ha' ? HA_API_SERVERS : 1;
    // Both API servers of shape 'ha' issue tokens for the one address clients use: the balancer's.
    const balancerPort = shape === 'ha' ? await freePort() : undefined;
    // API server 1 of shape 'ha' reaches every member through a link (link.ts) that can be delayed or cut.
    if (apiServers > 1) for (const p of etcdPorts) links.push(await startLink(await freePort(), p.client));
    const etcdServersOf = (i: number): string =>
      i === 1 && links.length ? links.map((l) => `http://127.0.0.1:${l.port}`).join(',') : etcdUrls.join(',');
    const spawnApiServer = (port: number, i = 0): ManagedProcess =>
      track(
        spawnInGroup(
          apiServers === 1 ? 'kube-apiserver' : `kube-apiserver-${i}`,
          apiBin,
          apiServerArgs({
            etcdServers: etcdServersOf(i),
            pkiDir,
            files,
            port,
            issuerPort: balancerPort ?? port,
            profiling: opts.profiling === true,
            featureGates: opts.apiserverFeatureGates,
          }),
          join(dir, apiServers === 1 ? 'kube-apiserver.log' : `kube-apiserver-${i}.log`),
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
    const apiProcs: ManagedProcess[] = [];
    const apiPorts: number[] = [];
    for (let i = 0; i < apiServers; i++) {
      const started = await startWithFreshPorts(
        `kube-apiserver${apiServers === 1 ? '' : `-${i}`}`,
        ({ port }) => spawnApiServer(port, i),
        (proc, { port }) => apiServerReady(proc, port),
        async () => ({ port: await freePort() }),
      );
      apiProcs.push(started.proc);
      apiPorts.push(started.ports.port);
    }
    let balancer: Balancer | undefined;
    if (balancerPort !== undefined) {
      balancer = await startBalancer(balancerPort, () => apiPorts);
      balancers.push(balancer);
    }
    const server = `https://127.0.0.1:${balancerPort ?? apiPorts[0]!}`;
    record.server = server;
    writeRecord(record);

    await waitUntil(
      'the default namespace',
      async () => {
        const res = await httpRequest(`${server}/api/v1/namespaces/default`, { ca: pki.ca.certPem, token });
        return res.status === 200 ? true : undefined;
      },
      { timeoutMs: startTimeoutMs, abort: () => exitedEarly(apiProcs[0]!) },
    );

    const api = { server, ca: pki.ca.certPem, token };
    const installed = crdDir ? await installCrds(api, crdDir, startTimeoutMs) : [];
    const policyDir = opts.policyDir === undefined ? (crdDir ? defaultPolicyDir() : null) : opts.policyDir;
    if (policyDir) installed.push(...(await installPolicies(api, policyDir)));

    const pids = { etcd: etcdProcs[0]!.pid, apiserver: apiProcs[0]!.pid, watchdog: watchdog.pid };
    const replace = (list: ManagedProcess[], i: number, proc: ManagedProcess): void => {
      const old = list[i]!;
      const at = procs.indexOf(old);
      if (at >= 0) procs.splice(at, 1);
      list[i] = proc;
    };
    const startApiServer = async (i: number): Promise<void> => {
      if (!apiProcs[i]!.exit) return;
      const proc = spawnApiServer(apiPorts[i]!, i);
      replace(apiProcs, i, proc);
      if (i === 0) pids.apiserver = proc.pid;
      await apiServerReady(proc, apiPorts[i]!);
    };
    // Same port, certificates and etcd: clients see the outage of a real restart, then the same server.
    const restartApiServer = async (): Promise<void> => {
      await terminate(apiProcs[0]!, stopTimeoutMs);
      await startApiServer(0);
    };
    const kill = async (proc: ManagedProcess): Promise<void> => {
      if (proc.exit) return;
      proc.child.ref();
      signalGroup(proc.pid, 'SIGKILL');
      await proc.exited;
      proc.child.unref();
    };
    let restores = 0;
    const restore = async (file: string, o: { bumpRevision?: number } = {}): Promise<void> => {
      const tools = await ensureEtcdTools();
      for (let i = 0; i < apiProcs.length; i++) await terminate(apiProcs[i]!, stopTimeoutMs);
      for (const p of etcdProcs) await kill(p);
      const token = `${id}-restore-${++restores}`;
      for (let i = 0; i < members; i++) {
        rmSync(memberDir(i), { recursive: true, force: true });
        await restoreSnapshot(
          tools,
          file,
          {
            name: memberName(i),
            dataDir: memberDir(i),
            peerUrl: `http://127.0.0.1:${etcdPorts[i]!.peer}`,
            initialCluster: initialCluster(etcdPorts),
            token,
          },
          o.bumpRevision ?? RESTORE_BUMP_REVISION,
        );
      }
      for (let i = 0; i < members; i++) replace(etcdProcs, i, spawnEtcd(i, etcdPorts));
      pids.etcd = etcdProcs[0]!.pid;
      await Promise.all(
        etcdUrls.map((url, i) =>
          waitUntil(
            `restored etcd member ${memberName(i)} /health`,
            async () => ((await httpRequest(`${url}/health`, { timeoutMs: 2_000 })).status === 200 ? true : undefined),
            { timeoutMs: startTimeoutMs, abort: () => exitedEarly(etcdProcs[i]!) },
          ),
        ),
      );
      for (let i = 0; i < apiProcs.length; i++) await startApiServer(i);
    };
    const ha: HaControls | undefined =
      shape === 'ha'
        ? {
            etcdUrls,
            apiServers: apiPorts.map((p) => `https://127.0.0.1:${p}`),
            etcdLeader: () => etcdLeader(etcdUrls, etcdProcs),
            killEtcdMember: (i) => kill(etcdProcs[i]!),
            startEtcdMember: async (i) => {
              if (!etcdProcs[i]!.exit) return;
              const proc = spawnEtcd(i, etcdPorts);
              replace(etcdProcs, i, proc);
              if (i === 0) pids.etcd = proc.pid;
              // /version answers without quorum, unlike /health
              await waitUntil(
                `etcd member ${memberName(i)} /version`,
                async () => {
                  const res = await httpRequest(`${etcdUrls[i]}/version`, { timeoutMs: 2_000 });
                  return res.status === 200 ? true : undefined;
                },
                { timeoutMs: startTimeoutMs, abort: () => exitedEarly(proc) },
              );
            },
            killApiServer: (i) => kill(apiProcs[i]!),
            startApiServer,
            resetBalancer: () => balancer?.resetAll() ?? 0,
            pids: () => [...etcdProcs, ...apiProcs].map((p) => p.pid),
            setEtcdLink: (state) => {
              for (const l of links) l.set(state);
            },
            snapshot: async (file) => {
              const tools = await ensureEtcdTools();
              const leader = (await etcdLeader(etcdUrls, etcdProcs)) ?? 0;
              return saveSnapshot(tools, etcdUrls[leader]!, file);
            },
            restore,
          }
        : undefined;

    const caData = Buffer.from(pki.ca.certPem).toString('base64');
    writeFileSync(files.kubeconfig, renderKubeconfig(server, caData, token), { mode: 0o600 });
    log(
      `control plane ${id} (${shape}) up at ${server} (etcd ${etcdUrls.join(',')}); CRDs and policies: ${installed.join(', ') || 'none'}; kubeconfig ${files.kubeconfig}`,
    );
    return {
      shape,
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
      ...(ha ? { ha } : {}),
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
