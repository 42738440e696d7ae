// The production-shaped control plane's fault controls (controlplane.ts, shape
// 'ha'), the etcd leader lookup, and its backup tools: `etcdctl snapshot save`
// against a running member and `etcdutl snapshot restore` into a fresh data
// dir, both built from the etcd module of the pinned version
// (hack/etcd-tools/build.sh), as Kubernetes' guide to backing up and
// restoring etcd does it.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { runPathScript } from './binaries.ts';
import { httpRequest } from './http.ts';
import type { LinkState } from './link.ts';
import { repoRoot } from './paths.ts';
import type { ManagedProcess } from './processes.ts';

/** Faults of the production-shaped control plane, by member index. */
export interface HaControls {
  /** Client URLs of the etcd members (http://127.0.0.1:<port>), running or not. */
  etcdUrls: string[];
  /** Direct URLs of the API servers, bypassing the balancer. */
  apiServers: string[];
  /** Index of the etcd member that is leader now (asks the running members); undefined without quorum. */
  etcdLeader(): Promise<number | undefined>;
  /** SIGKILLs etcd member i (no-op if it is down); resolves once it has exited. */
  killEtcdMember(i: number): Promise<void>;
  /** Starts etcd member i again on its data dir and ports; resolves once it serves its client port (quorum may still be missing). */
  startEtcdMember(i: number): Promise<void>;
  /** SIGKILLs API server i (no-op if it is down); open watches on it end with a reset. */
  killApiServer(i: number): Promise<void>;
  /** Starts API server i again on its port; resolves once it is ready. */
  startApiServer(i: number): Promise<void>;
  /** Resets every connection through the balancer at once; returns how many. */
  resetBalancer(): number;
  /** Pids of the current etcd members and API servers. */
  pids(): number[];
  /** The link between API server 1 and every etcd member (link.ts): open, delayed or partitioned. */
  setEtcdLink(state: LinkState): void;
  /** Saves a snapshot of the etcd keyspace (etcdctl snapshot save, from a member with quorum) to file. */
  snapshot(file: string): Promise<{ revision: number }>;
  /**
   * Restores file into a fresh three-member cluster, as Kubernetes says to: both API servers
   * stopped, every member restored (etcdutl snapshot restore) into a new data dir with a new
   * cluster token, the members started, then the API servers. Resolves once both are ready.
   * Clients of the balancer see the outage of the whole control plane, then, with bumpRevision
   * (default RESTORE_BUMP_REVISION), resourceVersions far ahead of any seen before and every watch
   * answered 410 Gone, so every client relists (Kubernetes' guidance, etcdutl --bump-revision
   * --mark-compacted); with bumpRevision 0 (a plain restore) resourceVersions go back to the
   * snapshot's, and a watch resumed from a later one may silently miss the rollback.
   */
  restore(file: string, o?: { bumpRevision?: number }): Promise<void>;
}

/** The index of the member the running members name as leader; undefined when none answers with one. */
export async function etcdLeader(urls: string[], procs: ManagedProcess[]): Promise<number | undefined> {
  const ids: (string | undefined)[] = [];
  let leader: string | undefined;
  for (const [i, url] of urls.entries()) {
    if (procs[i]?.exit) {
      ids.push(undefined);
      continue;
    }
    try {
      const res = await httpRequest(`${url}/v3/maintenance/status`, { method: 'POST', body: {}, timeoutMs: 2_000 });
      const status = JSON.parse(res.body) as { header?: { member_id?: string }; leader?: string };
      ids.push(res.status === 200 ? status.header?.member_id : undefined);
      if (res.status === 200 && status.leader && status.leader !== '0') leader ??= status.leader;
    } catch {
      ids.push(undefined);
    }
  }
  const at = leader === undefined ? -1 : ids.indexOf(leader);
  return at >= 0 ? at : undefined;
}

const TOOL_TIMEOUT_MS = 60_000;

/** What Kubernetes' guide to restoring etcd suggests: far beyond the writes since the snapshot. */
export const RESTORE_BUMP_REVISION = 1_000_000_000;

/** The dir with etcdctl and etcdutl, built on first use (minutes on a fresh machine, from cached modules seconds). */
export async function ensureEtcdTools(): Promise<string> {
  const dir = await runPathScript(join(repoRoot(), 'hack', 'etcd-tools', 'build.sh'), 60 * 60_000);
  for (const tool of ['etcdctl', 'etcdutl']) accessSync(join(dir, tool), constants.X_OK);
  return dir;
}

function runTool(bin: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      { timeout: TOOL_TIMEOUT_MS, env: { ...process.env, ...env }, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${bin} ${args.join(' ')}: ${err.message}\n${stderr.slice(-2_000)}`));
        else resolve(`${stdout}${stderr}`);
      },
    );
  });
}

/** etcdctl snapshot save from endpoint; returns the snapshot's revision (etcdutl snapshot status). */
export async function saveSnapshot(toolsDir: string, endpoint: string, file: string): Promise<{ revision: number }> {
  await runTool(join(toolsDir, 'etcdctl'), [
    `--endpoints=${endpoint}`,
    '--command-timeout=30s',
    'snapshot',
    'save',
    file,
  ]);
  const status = await runTool(join(toolsDir, 'etcdutl'), ['snapshot', 'status', file, '--write-out=json']);
  const revision = Number((JSON.parse(status.trim().split('\n').pop() ?? '{}') as { revision?: number }).revision);
  if (!Number.isFinite(revision)) throw new Error(`etcdutl snapshot status ${file}: no revision in ${status}`);
  return { revision };
}

/** etcdutl snapshot restore of file into dataDir (which must not exist) as member name of a new cluster. */
export async function restoreSnapshot(
  toolsDir: string,
  file: string,
  member: { name: string; dataDir: string; peerUrl: string; initialCluster: string; token: string },
  /** Revisions to skip past the snapshot's, with the restored revision marked compacted; 0: a plain restore. */
  bumpRevision: number,
): Promise<void> {
  await runTool(join(toolsDir, 'etcdutl'), [
    'snapshot',
    'restore',
    file,
    `--name=${member.name}`,
    `--data-dir=${member.dataDir}`,
    `--initial-cluster=${member.initialCluster}`,
    `--initial-cluster-token=${member.token}`,
    `--initial-advertise-peer-urls=${member.peerUrl}`,
    ...(bumpRevision > 0 ? [`--bump-revision=${bumpRevision}`, '--mark-compacted'] : []),
  ]);
}
