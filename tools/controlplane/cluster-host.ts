// What the single-node cluster does to the host outside its run dir: the
// machine-wide lock, containerd's containers and shims, mounts, iptables
// rules and the pod bridge left by a previous run.

import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BRIDGE, CNI_NETWORK } from './cluster-node-config.ts';
import { removeRunDir, unmountUnder } from './mounts.ts';
import { signalGroup } from './processes.ts';

const LOCK_PATH = '/run/masakari-cluster.lock';

/** Takes the machine-wide lock, or says who holds it. */
export function takeLock(): () => void {
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

export function run(cmd: string, args: string[], timeoutMs = 120_000): string {
  return execFileSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function tryRun(cmd: string, args: string[], timeoutMs = 60_000): void {
  spawnSync(cmd, args, { stdio: 'ignore', timeout: timeoutMs });
}

/** Kills and removes every container and sandbox of the node's containerd. */
export function killAllContainers(ctr: (...args: string[]) => string, log: (line: string) => void): void {
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
export function killShims(containerdSock: string): void {
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
export function cleanupHost(log: (line: string) => void, onlyDir?: string): void {
  if (onlyDir) unmountUnder(onlyDir);
  else {
    for (const d of run('bash', ['-c', 'ls -d /var/tmp/masakari-cluster-* 2>/dev/null || true'])
      .split('\n')
      .filter(Boolean)) {
      const failed = removeRunDir(d);
      if (failed) log(`could not remove ${d} left by an earlier cluster: ${failed.message}`);
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
