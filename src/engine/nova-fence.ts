// Fencing of Nova side effects by the engine Lease. The status journal is
// fenced by the owner token in status.engine (status-writer.ts), but a Nova
// call is not: an engine stalled past its lease (SIGSTOP, a long pause, a
// frozen VM) that wakes up would go on locking, evacuating and unlocking
// servers that the new leader is already working on. So every call that
// changes something in Nova first asks the LeaseHold (src/runtime/
// leaderelection.ts), synchronously, right before it is sent. When the lease
// is no longer held the call is not made: the run is cancelled (onLost) and
// the call rejects with LeaseNotHeld, so the run resumes on whichever engine
// holds the Lease, from its journal. Reads are never refused.

import type { NovaClient } from '../openstack/types.ts';

/** The NovaClient methods that change something in Nova. */
export const NOVA_SIDE_EFFECTS = [
  'updateService',
  'resetState',
  'evacuate',
  'stopServer',
  'startServer',
  'lockServer',
  'unlockServer',
  'addHostToAggregate',
] as const satisfies ReadonlyArray<keyof NovaClient>;

export class LeaseNotHeld extends Error {
  constructor(call: string) {
    super(`not sending ${call} to Nova: this engine no longer holds the engine Lease`);
    this.name = 'LeaseNotHeld';
  }
}

/**
 * nova with every side effect checked against held() right before it is sent.
 * onLost runs (once per refused call) before the call rejects, so the caller's
 * signal is already aborted when it sees the error.
 */
export function fenceNova(nova: NovaClient, held: () => boolean, onLost: (err: LeaseNotHeld) => void): NovaClient {
  const fenced: NovaClient = Object.create(nova) as NovaClient;
  for (const name of NOVA_SIDE_EFFECTS) {
    const call = nova[name].bind(nova) as (...args: unknown[]) => Promise<unknown>;
    (fenced as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      if (!held()) {
        const err = new LeaseNotHeld(name);
        onLost(err);
        return Promise.reject(err);
      }
      return call(...args);
    };
  }
  return fenced;
}
