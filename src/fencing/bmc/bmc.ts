// What the engine and the return to service need from a host's BMC, whatever
// the protocol (Redfish, IPMI). A driver never guesses: a reply it cannot read
// is an error, and an error is never taken as "off".

export type PowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff';

/** Why a BMC call failed, for conditions, Events and metrics. */
export type BmcFailureKind = 'unreachable' | 'timeout' | 'refused' | 'error';

export class BmcError extends Error {
  constructor(
    readonly kind: BmcFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'BmcError';
  }
}

export interface Bmc {
  /** For messages and the FencingRecord: "redfish https://10.0.0.5:8000 system 1". */
  readonly describe: string;
  readonly driver: 'redfish' | 'ipmi';
  /** Redfish ComputerSystem.Reset ForceOff, IPMI chassis power off. */
  powerOff(signal?: AbortSignal): Promise<void>;
  /** Redfish PowerState, IPMI chassis power status. */
  powerState(signal?: AbortSignal): Promise<PowerState>;
}
