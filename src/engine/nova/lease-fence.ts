// Fencing of Nova side effects by the engine Lease. The status journal is
// fenced by the owner token in status.engine (status/writer.ts), but a Nova
// call is not: an engine stalled past its lease (SIGSTOP, a long pause, a
// frozen VM) that wakes up would go on locking, evacuating and unlocking
// servers that the new leader is already working on. So every call that
// changes something in Nova asks the LeaseHold (src/runtime/
// leaderelection.ts), synchronously, right before each HTTP attempt: the
// guard rides in the call's options as `beforeSend`, which the transport
// (src/openstack/http.ts) runs before the first attempt and before every
// retry, so a retry of lock, unlock, os-resetState, add_host or an
// os-services PUT is never sent on a check made before an earlier attempt.
// The same guard also runs once when the method is called, so a NovaClient
// without an HTTP transport (the unit tests' fake) is fenced too. When the
// lease is no longer held the attempt is not made: the run is cancelled
// (onLost) and the call rejects with LeaseNotHeld, so the run resumes on
// whichever engine holds the Lease, from its journal. Reads are never refused.

import type { CallOptions, NovaClient } from '../../openstack/types.ts';

/** The NovaClient methods that change something in Nova, with the position of their CallOptions argument. */
const SIDE_EFFECT_OPTIONS_AT = {
  updateService: 2,
  resetState: 2,
  evacuate: 2,
  stopServer: 1,
  startServer: 1,
  lockServer: 1,
  unlockServer: 1,
  addHostToAggregate: 2,
} as const satisfies Partial<Record<keyof NovaClient, number>>;

type SideEffect = keyof typeof SIDE_EFFECT_OPTIONS_AT;

/** The NovaClient methods that change something in Nova. */
export const NOVA_SIDE_EFFECTS = Object.keys(SIDE_EFFECT_OPTIONS_AT) as SideEffect[];

export class LeaseNotHeld extends Error {
  constructor(call: string) {
    super(`not sending ${call} to Nova: this engine no longer holds the engine Lease`);
    this.name = 'LeaseNotHeld';
  }
}

/**
 * nova with every side effect checked against held() right before each HTTP
 * attempt. onLost runs (once per refused call) before the call rejects, so the
 * caller's signal is already aborted when it sees the error.
 */
export function fenceNova(nova: NovaClient, held: () => boolean, onLost: (err: LeaseNotHeld) => void): NovaClient {
  const fenced: NovaClient = Object.create(nova) as NovaClient;
  for (const name of NOVA_SIDE_EFFECTS) {
    const call = nova[name].bind(nova) as (...args: unknown[]) => Promise<unknown>;
    const at = SIDE_EFFECT_OPTIONS_AT[name];
    const guard = (): void => {
      if (held()) return;
      const err = new LeaseNotHeld(name);
      onLost(err);
      throw err;
    };
    (fenced as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      try {
        guard();
      } catch (err) {
        return Promise.reject(err);
      }
      const given = args[at] as CallOptions | undefined;
      const options: CallOptions = {
        ...given,
        beforeSend: () => {
          given?.beforeSend?.();
          guard();
        },
      };
      const withOptions = [...args];
      while (withOptions.length < at) withOptions.push(undefined);
      withOptions[at] = options;
      return call(...withOptions);
    };
  }
  return fenced;
}

/** Nova for work outside a run (the expiry sweep): side effects only while the Lease is held. */
export function fencedNova(
  d: { nova?: NovaClient },
  term: { holdsLease: () => boolean } | undefined,
  log: { warn(msg: string): void },
): NovaClient | undefined {
  const holdsLease = term?.holdsLease ?? (() => false);
  return d.nova && fenceNova(d.nova, holdsLease, (err) => log.warn(err.message));
}
