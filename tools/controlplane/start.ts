// Start-up helpers of the local control plane (controlplane.ts): a component
// started on fresh ports and retried on new ones when it lost a port race, its
// early exit turned into an error naming its log, and the etcd flag probe.
import { execFileSync } from 'node:child_process';
import { logTail, terminate } from './processes.ts';
import type { ManagedProcess } from './processes.ts';

const ADDRESS_IN_USE = /address already in use|bind: address|EADDRINUSE/i;
const PORT_ATTEMPTS = 3;

const supportsNoFsync = new Map<string, boolean>();

/** etcd's --unsafe-no-fsync (3.5+) makes tests several times faster; probe --help as envtest does. */
export function etcdSupportsNoFsync(etcd: string): boolean {
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

export function exitedEarly(proc: ManagedProcess): Error | undefined {
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
  /** Ends what a failed attempt started; default: terminates proc. */
  cleanUp?: (proc: ManagedProcess) => Promise<void>,
  /** The logs of a failed attempt to look for a lost port race in; default proc's. */
  logs: () => string[] = () => [],
): Promise<{ proc: ManagedProcess; ports: P }> {
  for (let attempt = 1; ; attempt++) {
    const ports = await pickPorts();
    const proc = start(ports);
    try {
      await ready(proc, ports);
      return { proc, ports };
    } catch (e) {
      if (cleanUp) await cleanUp(proc);
      else if (!proc.exit) await terminate(proc, 5_000);
      const lostRace = [proc.logPath, ...logs()].some((l) => ADDRESS_IN_USE.test(logTail(l, 50)));
      if (attempt < PORT_ATTEMPTS && lostRace) continue;
      throw e instanceof Error ? new Error(`${name}: ${e.message}`) : e;
    }
  }
}
