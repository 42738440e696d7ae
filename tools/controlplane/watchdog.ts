// The watchdog makes a control plane die with its owner, however the owner
// dies (exception, SIGKILL, OOM). It is a tiny sh process in its own process
// group whose stdin is a pipe from the owner. The owner writes "pgid <n>" for
// each component it starts and "release" once it has stopped them itself. If
// the pipe reaches EOF without "release", the owner is gone: the watchdog
// stops the groups newest first (the API server before etcd, since an etcd
// asked to stop waits for its clients' streams to end), SIGTERM then SIGKILL
// after 5 s each, and removes the control plane's temp dir and record. A group
// is signalled only while its leader's command line still names the temp dir,
// so a reused pid is never hit (a zombie's command line is empty); without
// /proc (not Linux) it is signalled while the group exists.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';

const SCRIPT = `
dir=$1; record=$2; groups=""
while IFS= read -r line; do
  case "$line" in
    release) exit 0 ;;
    "pgid "*) groups="\${line#pgid } $groups" ;;
  esac
done
ours() {
  if [ -r /proc/self/cmdline ]; then grep -qaF -- "$dir" "/proc/$1/cmdline" 2>/dev/null
  else kill -0 "-$1" 2>/dev/null; fi
}
for g in $groups; do
  ours "$g" || continue
  kill -TERM "-$g" 2>/dev/null
  i=0
  while [ $i -lt 50 ] && ours "$g"; do sleep 0.1; i=$((i+1)); done
  ours "$g" && kill -KILL "-$g" 2>/dev/null
done
rm -rf -- "$dir"; rm -f -- "$record"
`;

export interface Watchdog {
  pid: number;
  /** Tells the watchdog to kill this process group if the owner dies. */
  guard(pgid: number): void;
  /**
   * The owner stopped everything itself: the watchdog exits without acting.
   * Resolves once it has exited (at most RELEASE_WAIT_MS), so a stopped
   * control plane leaves no process behind when stop() resolves.
   */
  release(): Promise<void>;
}

const RELEASE_WAIT_MS = 2_000;

export function startWatchdog(dir: string, recordPath: string): Watchdog {
  // MASAKARI_WATCHDOG_TRACE=<file> records what the watchdog does (sh -x), for debugging.
  const trace = process.env.MASAKARI_WATCHDOG_TRACE;
  const out = trace ? openSync(trace, 'a') : 'ignore';
  const child = spawn('sh', [trace ? '-xc' : '-c', SCRIPT, 'masakari-controlplane-watchdog', dir, recordPath], {
    detached: true,
    stdio: ['pipe', out, out],
  });
  if (typeof out === 'number') closeSync(out);
  if (child.pid === undefined || !child.stdin) throw new Error('could not start the control-plane watchdog (sh)');
  child.unref();
  // The pipe must not keep the owner's event loop alive either.
  (child.stdin as unknown as Socket).unref();
  child.stdin.on('error', () => {
    /* the watchdog exited; nothing left to tell it */
  });
  const stdin = child.stdin;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid,
    guard: (pgid) => void stdin.write(`pgid ${pgid}\n`),
    release: async () => {
      if (!stdin.writableEnded) stdin.end('release\n');
      if (child.exitCode !== null || child.signalCode !== null) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, RELEASE_WAIT_MS)))]);
      clearTimeout(timer);
    },
  };
}
