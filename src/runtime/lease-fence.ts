// Fencing of Nova side effects by a Lease. Every Nova write the operator
// makes is made by the holder of a Lease: the engine's recoveries and BMC
// fence (masakari-engine), the return to service of the built-in detection
// (masakari-detection), the remediator's forced_down and return to service
// (masakari-remediation). A Kubernetes write can be fenced by a
// resourceVersion or an owner token (the engine's status.engine,
// src/engine/status/writer.ts), but a Nova call cannot: a holder stalled past
// its lease (SIGSTOP, a long pause, a frozen VM) that wakes up would go on
// locking, evacuating, forcing down or enabling services that the new holder
// is already acting on. So every call that changes something in Nova asks the
// LeaseHold (leaderelection.ts), synchronously, right before each HTTP
// attempt: the guard rides in the call's options as `beforeSend`, which the
// transport (src/openstack/http.ts) runs before the first attempt and before
// every retry, so a retry of lock, unlock, os-resetState, add_host or an
// os-services PUT is never sent on a check made before an earlier attempt.
// The same guard also runs once when the method is called, so a NovaClient
// without an HTTP transport (the unit tests' fake) is fenced too. When the
// lease is no longer held the attempt is not made: onLost runs (the engine
// cancels the run) and the call rejects with LeaseNotHeld, so the work
// resumes on whichever process holds the Lease. Reads are never refused.
// Here rather than in one feature because every Lease holder shares it
// (docs/design.md, "Layers").

import type { CallOptions, NovaClient } from '../openstack/types.ts';

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

/** Who is fenced, for the message: "this engine no longer holds the engine Lease". */
export interface FencedHolder {
  holder: string;
  lease: string;
}

const ENGINE: FencedHolder = { holder: 'this engine', lease: 'engine' };

export class LeaseNotHeld extends Error {
  constructor(call: string, who: FencedHolder = ENGINE) {
    super(`not sending ${call} to Nova: ${who.holder} no longer holds the ${who.lease} Lease`);
    this.name = 'LeaseNotHeld';
  }
}

/**
 * nova with every side effect checked against held() right before each HTTP
 * attempt. onLost runs (once per refused call) before the call rejects, so the
 * caller's signal is already aborted when it sees the error.
 */
export function fenceNova(
  nova: NovaClient,
  held: () => boolean,
  onLost: (err: LeaseNotHeld) => void,
  who: FencedHolder = ENGINE,
): NovaClient {
  const fenced: NovaClient = Object.create(nova) as NovaClient;
  for (const name of NOVA_SIDE_EFFECTS) {
    const call = nova[name].bind(nova) as (...args: unknown[]) => Promise<unknown>;
    const at = SIDE_EFFECT_OPTIONS_AT[name];
    const guard = (): void => {
      if (held()) return;
      const err = new LeaseNotHeld(name, who);
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

/** Nova for the engine's work outside a run (the expiry sweep, the BMC fence's forced_down): side effects only while the Lease is held. */
export function fencedNova(
  d: { nova?: NovaClient },
  term: { holdsLease: () => boolean } | undefined,
  log: { warn(msg: string): void },
): NovaClient | undefined {
  return leaseFencedNova(d.nova, term?.holdsLease ?? (() => false), ENGINE, log);
}

/**
 * Nova for a leader-elected component whose parts are built once and act in
 * every term (the built-in detection, the remediator): side effects only
 * while `holds()` says this process holds its Lease now (Manager.holdsLease),
 * each refusal logged as a warning.
 */
export function leaseFencedNova(
  nova: NovaClient | undefined,
  holds: () => boolean,
  who: FencedHolder,
  log: { warn(msg: string): void },
): NovaClient | undefined {
  return nova && fenceNova(nova, holds, (err) => log.warn(err.message), who);
}
