// Masakari's non-blocking lock `masakari-<reserved_host>`: while one host
// recovery evacuates onto a reserved host, no other recovery may take it.
//
// Why an in-process lock is enough here: the engine acts only on the Lease
// leader, so every running recovery lives in this process. A leader that dies
// loses its locks with it; the next leader learns which reserved host each
// interrupted run was using from that run's journal (effect
// `reserved-host:<name>`, see host-failure-tasks.ts) and takes the lock again
// before it resumes. A run that finds the lock held fails that reserved host
// with Masakari's LockAlreadyAcquired text and moves on to the next one.

import { RecoveryFailed } from './context.ts';

/** Masakari's LockAlreadyAcquired, raised as HostRecoveryFailureException by the driver. */
export class LockAlreadyAcquired extends RecoveryFailed {
  constructor(resource: string) {
    super(`Lock is already acquired on ${resource}.`);
    this.name = 'LockAlreadyAcquired';
  }
}

const held = new Map<string, string>();

/** Takes the reserved host for `owner` (a notification uuid) or throws LockAlreadyAcquired. */
export function acquireReservedHostMutex(host: string, owner: string): () => void {
  if (held.has(host)) throw new LockAlreadyAcquired(host);
  held.set(host, owner);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (held.get(host) === owner) held.delete(host);
  };
}

/** Who holds the reserved host, for logs and tests. */
export function reservedHostMutexHolder(host: string): string | undefined {
  return held.get(host);
}
