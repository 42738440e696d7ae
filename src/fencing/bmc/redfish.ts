// The Redfish driver of the Bmc port (DMTF Redfish, DSP0266): power off with
// POST {address}/redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset
// {"ResetType": "ForceOff"} and read PowerState from GET
// {address}/redfish/v1/Systems/{id}, with HTTP Basic credentials (sushy-tools'
// emulator and every BMC we know accept them; no session service needed for
// two calls). Every call has its own deadline (timeoutMs, connect included).
// Errors are classified for the engine (BmcError kinds): 401/403 refused, no
// connection unreachable, no answer in time timeout, anything else (5xx,
// 404, a reply that does not parse, a PowerState we do not know) error. An
// answer we cannot read is never taken as "Off".

import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { BmcError } from './bmc.ts';
import type { Bmc, PowerState } from './bmc.ts';

export interface RedfishOptions {
  /** Base URL of the BMC, e.g. https://10.0.0.5:8000 (no trailing /redfish). */
  address: string;
  /** Member id under /redfish/v1/Systems/. */
  systemId: string;
  username: string;
  password: string;
  /** PEM CA bundle to verify an https BMC with; default: the system's trust store. */
  ca?: string;
  /** https without certificate verification (a lab BMC with a self-signed certificate). */
  insecure?: boolean;
  /** Deadline of each call, connect included. */
  timeoutMs: number;
  /** Test hook: another dispatcher (undici MockAgent). */
  dispatcher?: Dispatcher;
}

const POWER_STATES: ReadonlySet<string> = new Set(['On', 'Off', 'PoweringOn', 'PoweringOff']);

/** Codes of a connection that was never made (or was cut before any answer). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A Redfish error body's first message (@Message.ExtendedInfo), for a message a person can act on. */
function redfishMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as {
      error?: { message?: string; '@Message.ExtendedInfo'?: { Message?: string }[] };
    };
    const info = parsed.error?.['@Message.ExtendedInfo']?.[0]?.Message;
    return info ?? parsed.error?.message ?? '';
  } catch {
    return body.slice(0, 200);
  }
}

export function redfishBmc(o: RedfishOptions): Bmc {
  const base = o.address.replace(/\/+$/, '');
  const system = `${base}/redfish/v1/Systems/${encodeURIComponent(o.systemId)}`;
  const describe = `redfish ${base} system ${o.systemId}`;
  const authorization = `Basic ${Buffer.from(`${o.username}:${o.password}`).toString('base64')}`;
  const dispatcher =
    o.dispatcher ??
    new Agent({
      connect: {
        timeout: o.timeoutMs,
        ...(o.ca ? { ca: o.ca } : {}),
        ...(o.insecure ? { rejectUnauthorized: false } : {}),
      },
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
      // Two calls a fence, seconds apart: no connection is worth keeping between fences.
      keepAliveTimeout: 1_000,
    });

  async function call(
    method: 'GET' | 'POST',
    url: string,
    what: string,
    json: unknown,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; body: string }> {
    const deadline = AbortSignal.timeout(o.timeoutMs);
    const both = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const res = await request(url, {
        method,
        dispatcher,
        signal: both,
        headers: {
          authorization,
          accept: 'application/json',
          ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
      return { status: res.statusCode, body: await res.body.text() };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const code = codeOf(err);
      if (deadline.aborted || (code && TIMEOUT_CODES.has(code))) {
        throw new BmcError('timeout', `${describe}: ${what} got no answer within ${o.timeoutMs / 1000}s`);
      }
      const detail = (err as Error).message || String(err);
      if (code && UNREACHABLE_CODES.has(code)) {
        throw new BmcError('unreachable', `${describe}: ${what} could not reach the BMC: ${detail}`);
      }
      // TLS verification, a malformed URL: a configuration the operator cannot fix by retrying alone.
      throw new BmcError('error', `${describe}: ${what} failed: ${detail}${code ? ` (${code})` : ''}`);
    }
  }

  function refusedOrError(status: number, body: string, what: string): BmcError {
    const detail = redfishMessage(body);
    const said = `${what} answered HTTP ${status}${detail ? `: ${detail}` : ''}`;
    if (status === 401 || status === 403) {
      return new BmcError('refused', `${describe}: ${said} (check the credentials Secret)`);
    }
    return new BmcError('error', `${describe}: ${said}`);
  }

  async function powerState(signal?: AbortSignal): Promise<PowerState> {
    const { status, body } = await call('GET', system, 'GET System', undefined, signal);
    if (status !== 200) throw refusedOrError(status, body, 'GET System');
    let state: unknown;
    try {
      state = (JSON.parse(body) as { PowerState?: unknown }).PowerState;
    } catch {
      throw new BmcError('error', `${describe}: GET System answered a body that is not JSON`);
    }
    if (typeof state !== 'string' || !POWER_STATES.has(state)) {
      throw new BmcError('error', `${describe}: GET System reports an unknown PowerState ${JSON.stringify(state)}`);
    }
    return state as PowerState;
  }

  return {
    describe,
    driver: 'redfish',
    async powerOff(signal?: AbortSignal): Promise<void> {
      const { status, body } = await call(
        'POST',
        `${system}/Actions/ComputerSystem.Reset`,
        'ForceOff',
        { ResetType: 'ForceOff' },
        signal,
      );
      if (status >= 200 && status < 300) return;
      // Some BMCs refuse ForceOff on a system that is already off (400/409 "already in that state"). The
      // request reached the BMC in this recovery, so its own word that the system is Off right after counts.
      if ((status === 400 || status === 409) && (await powerState(signal)) === 'Off') return;
      throw refusedOrError(status, body, 'ForceOff');
    },
    powerState,
  };
}
