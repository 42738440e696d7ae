// Resource use of a process started by a benchmark, read from Linux /proc
// (no cooperation from the process needed, so the same numbers exist for
// ours and for the reference masakari-api).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** A process and its descendants: masakari-api serves from a worker it forks. */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      const children = readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, 'utf8').trim();
      if (children) pids.push(...children.split(/\s+/).map(Number));
    } catch {
      /* exited meanwhile */
    }
  }
  return pids;
}

/** CPU time (user + system, all threads) a process tree has used so far, in ms (100 ticks/s), or NaN. */
export function cpuMs(pid: number | undefined): number {
  if (!pid) return NaN;
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      if (p === pid) return NaN;
    }
  }
  return total;
}

/**
 * Memory a process tree occupies, in MiB, or NaN when unknown: the resident
 * set of the process plus the private pages of each descendant (a forked
 * worker shares the rest with its parent, and a container's memory counts a
 * shared page once).
 */
export async function memoryMiB(pid: number | undefined): Promise<number> {
  if (!pid) return NaN;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    let kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    for (const child of processTree(pid).slice(1)) {
      const rollup = await readFile(`/proc/${child}/smaps_rollup`, 'utf8').catch(() => '');
      for (const m of rollup.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB/gm)) kb += Number(m[1]);
    }
    return kb / 1024;
  } catch {
    return NaN;
  }
}

/** The highest resident set the process has had (VmHWM), in MiB, or NaN. */
export async function peakRssMiB(pid: number | undefined): Promise<number> {
  if (!pid) return NaN;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The machine's 1-minute load average, to say under what load a result was taken. */
export function loadAverage(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}
