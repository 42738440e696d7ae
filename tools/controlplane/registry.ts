// Records of running control planes, one JSON file per control plane in the
// state dir (paths.ts). They let any later start find control planes whose
// owner died without cleaning up (SIGKILL, a crashed runner) and reap them.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { removeRunDir } from './mounts.ts';
import { isSameProcess, processStartTime, signalGroup } from './processes.ts';
import { stateDir } from './paths.ts';
import type { Watchdog } from './watchdog.ts';
import { startWatchdog } from './watchdog.ts';

export interface ProcessRef {
  name: string;
  pid: number;
  startTime?: string;
}

export interface ControlPlaneRecord {
  id: string;
  /** The temp dir holding data, certs, logs and the kubeconfig. */
  dir: string;
  owner: ProcessRef;
  /** Components, each the leader of its own process group, and the watchdog. */
  processes: ProcessRef[];
  server?: string;
  startedAt: string;
}

export function recordPath(id: string): string {
  return join(stateDir(), `${id}.json`);
}

/**
 * Starts the watchdog for a new control plane (or cloud, or cluster) in `dir`
 * and writes its record, so that its processes die with their owner and a
 * later run reaps whatever a crash left. The caller adds each process it
 * starts to record.processes and guards it with the watchdog.
 */
export function recordWithWatchdog(
  id: string,
  dir: string,
  server?: string,
): { watchdog: Watchdog; record: ControlPlaneRecord } {
  const watchdog = startWatchdog(dir, recordPath(id));
  const record: ControlPlaneRecord = {
    id,
    dir,
    owner: ownerRef(),
    processes: [{ name: 'watchdog', pid: watchdog.pid, startTime: processStartTime(watchdog.pid) }],
    startedAt: new Date().toISOString(),
    ...(server === undefined ? {} : { server }),
  };
  writeRecord(record);
  return { watchdog, record };
}

export function writeRecord(record: ControlPlaneRecord): void {
  mkdirSync(stateDir(), { recursive: true });
  const path = recordPath(record.id);
  // write-then-rename so a concurrent reaper never reads half a record
  writeFileSync(`${path}.tmp`, JSON.stringify(record, null, 2));
  renameSync(`${path}.tmp`, path);
}

export function removeRecord(id: string): void {
  rmSync(recordPath(id), { force: true });
}

export function listRecords(): ControlPlaneRecord[] {
  let names: string[];
  try {
    names = readdirSync(stateDir());
  } catch {
    return [];
  }
  const records: ControlPlaneRecord[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    try {
      records.push(JSON.parse(readFileSync(join(stateDir(), name), 'utf8')) as ControlPlaneRecord);
    } catch {
      // unreadable or vanished meanwhile: not ours to judge
    }
  }
  return records;
}

export function ownerRef(): ProcessRef {
  return { name: 'owner', pid: process.pid, startTime: processStartTime(process.pid) };
}

function stillRunning(p: ProcessRef, dir: string): boolean {
  if (!isSameProcess(p.pid, p.startTime)) return false;
  // belt and braces against pid reuse where /proc has no start time
  try {
    return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return true;
  }
}

export interface ReapedControlPlane {
  id: string;
  ownerPid: number;
  killed: ProcessRef[];
}

/**
 * Stops every recorded control plane whose owner process is gone: SIGKILL to
 * each component's process group, then removes its temp dir and record.
 * Logs one line per control plane reaped.
 */
export function reapOrphans(log: (line: string) => void): ReapedControlPlane[] {
  const reaped: ReapedControlPlane[] = [];
  for (const rec of listRecords()) {
    if (isSameProcess(rec.owner.pid, rec.owner.startTime)) continue;
    const killed = rec.processes.filter((p) => stillRunning(p, rec.dir));
    for (const p of killed) signalGroup(p.pid, 'SIGKILL');
    const what = killed.length ? killed.map((p) => `${p.name} pid ${p.pid}`).join(', ') : 'no live processes';
    // A dir that cannot go (a mount we may not detach) must not stop this
    // start: the record stays, so the next start tries again, and says so.
    const failed = removeRunDir(rec.dir);
    if (failed) {
      log(
        `orphan control plane ${rec.id} (owner pid ${rec.owner.pid} is gone): killed ${what}, could not remove ${rec.dir}: ${failed.message}`,
      );
      continue;
    }
    removeRecord(rec.id);
    log(
      `reaped orphan control plane ${rec.id} (owner pid ${rec.owner.pid} is gone): killed ${what}, removed ${rec.dir}`,
    );
    reaped.push({ id: rec.id, ownerPid: rec.owner.pid, killed });
  }
  return reaped;
}
