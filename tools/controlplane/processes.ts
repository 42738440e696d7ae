// Child processes of a control plane. Each runs in its own process group
// (detached), so one signal to the group reaches anything it forks, and a
// Ctrl-C aimed at the test runner's group does not kill it half-way: the
// owner (or its watchdog) stops it in order instead.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  name: string;
  pid: number;
  /** Kernel start time of pid (see processStartTime), to tell it from a later process reusing the pid. */
  startTime: string | undefined;
  logPath: string;
  child: ChildProcess;
  /** Set once the process has exited. */
  exit: ExitInfo | undefined;
  exited: Promise<ExitInfo>;
}

/** Starts bin in its own process group, stdout and stderr appended to logPath. */
export function spawnInGroup(
  name: string,
  bin: string,
  args: string[],
  logPath: string,
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): ManagedProcess {
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd], env: options.env, cwd: options.cwd });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new Error(`could not start ${name} (${bin})`);
  // The owner's event loop must not wait for the control plane; stop() and
  // the exit hook end it explicitly.
  child.unref();
  const proc: ManagedProcess = {
    name,
    pid: child.pid,
    startTime: processStartTime(child.pid),
    logPath,
    child,
    exit: undefined,
    exited: new Promise<ExitInfo>((resolve) => {
      child.on('exit', (code, signal) => {
        proc.exit = { code, signal };
        resolve(proc.exit);
      });
    }),
  };
  child.on('error', () => {
    /* reported through 'exit' or the start timeout */
  });
  return proc;
}

/** Fields 3.. of /proc/<pid>/stat (index 0 is the state), or undefined without /proc. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // field 2 (comm) may hold spaces and parentheses; count from the last ')'
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * True while pid runs. A zombie counts as dead: where no init reaps orphans
 * (some containers), a dead owner stays a zombie for good and kill(pid, 0)
 * still succeeds on it.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procStat(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/** Sends signal to the whole process group led by pid; false when the group is gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The process's start time in clock ticks since boot (/proc/<pid>/stat field
 * 22), or undefined where /proc is unavailable. A pid plus its start time
 * names one process for good, even after the pid is reused.
 */
export function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** True when pid is alive and, where known, is still the process that had startTime. */
export function isSameProcess(pid: number, startTime: string | undefined): boolean {
  if (!isAlive(pid)) return false;
  if (startTime === undefined) return true;
  const now = processStartTime(pid);
  return now === undefined || now === startTime;
}

/**
 * SIGTERM to the process group, then SIGKILL if it has not exited within
 * timeoutMs. Resolves once the process has exited.
 */
export async function terminate(proc: ManagedProcess, timeoutMs: number): Promise<void> {
  if (proc.exit) return;
  // keep the event loop alive while we wait for the exit event
  proc.child.ref();
  signalGroup(proc.pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      signalGroup(proc.pid, 'SIGKILL');
      resolve();
    }, timeoutMs);
  });
  await Promise.race([proc.exited, killed]);
  await proc.exited;
  clearTimeout(timer);
  proc.child.unref();
}

/** The last lines of a log file, for error messages. */
export function logTail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
