// The tests' one fake Redfish BMC: an HTTP(S) server on 127.0.0.1 that
// serves the subset of DSP0266 the fencing driver uses (and sushy-tools'
// emulator serves alike), with one ComputerSystem per compute host:
//   GET  /redfish/v1                                              service root
//   GET  /redfish/v1/Systems                                      collection
//   GET  /redfish/v1/Systems/{id}                                 PowerState
//   POST /redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset    {"ResetType": On|ForceOff|GracefulShutdown|ForceRestart|PushPowerButton}
// HTTP Basic auth (401 with a Redfish error body when wrong). Test knobs:
// faults on the next requests (500s, or no answer at all), a power state that
// lies for the next N reads, a password change (refused), a request log.
// linkToNova() ties a system's power to the simulated Nova's compute service
// of a host: powered off, its nova-compute dies; powered on, it comes back,
// as a real power cut would look to Nova.

import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SimState } from './state.ts';

export type FakePowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff';

export interface FakeSystem {
  id: string;
  power: FakePowerState;
  /** The next `lieReads` GETs of the system report `lieAs` instead of the truth. */
  lieReads: number;
  lieAs: FakePowerState;
  /** Resets accepted, by ResetType. */
  resets: Record<string, number>;
}

export interface FakeBmcRequest {
  at: Date;
  method: string;
  path: string;
  /** POST body's ResetType. */
  resetType?: string;
  /** GET of a system: the PowerState it answered (a lie included). */
  power?: FakePowerState;
  status: number;
}

export interface FakeBmcFault {
  /** 500: answer Internal Server Error without acting; hang: never answer (until stop or clearFaults). */
  kind: 500 | 'hang';
  count: number;
  /** Only requests of this method (default any). */
  method?: 'GET' | 'POST';
}

export interface FakeRedfishOptions {
  /** System ids (usually the compute hosts' names); all start On. */
  systems: string[];
  username?: string;
  password?: string;
  /** Serve https with this key pair (PEM). */
  tls?: { key: string; cert: string };
  host?: string;
  port?: number;
}

export interface FakeRedfish {
  /** http(s)://127.0.0.1:<port>: the address of HaHost spec.fencing. */
  url: string;
  username: string;
  /** Change it and every request is refused (401) until it matches again. */
  password: string;
  systems: Map<string, FakeSystem>;
  log: FakeBmcRequest[];
  fault(f: FakeBmcFault): void;
  /** Drops every fault and answers the requests held by a hang (with 503). */
  clearFaults(): void;
  /** The next `reads` GETs of `id` report `as` (default On) whatever the truth. */
  lie(id: string, reads: number, as?: FakePowerState): void;
  /** A person (or automation) powers the system on or off at the BMC. */
  setPower(id: string, power: FakePowerState): void;
  /** Called on every change of a system's power. */
  onPower(fn: (id: string, power: FakePowerState) => void): void;
  /**
   * Awaited before a system's GET is answered and before a Reset is acted on (authenticated requests
   * only), with the request as logged: an invariant can look at the world at the moment the BMC first
   * says Off, before anyone could act on it.
   */
  beforeAnswer: ((r: FakeBmcRequest) => Promise<void> | void) | undefined;
  stop(): Promise<void>;
}

const ROOT = '/redfish/v1';

function redfishError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        code: 'Base.1.0.GeneralError',
        message,
        '@Message.ExtendedInfo': [{ MessageId: 'Base.1.0.GeneralError', Message: message }],
      },
    }),
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeRedfish(o: FakeRedfishOptions): Promise<FakeRedfish> {
  const systems = new Map<string, FakeSystem>(
    o.systems.map((id) => [id, { id, power: 'On', lieReads: 0, lieAs: 'On', resets: {} }]),
  );
  const faults: FakeBmcFault[] = [];
  const held = new Set<ServerResponse>();
  const listeners: Array<(id: string, power: FakePowerState) => void> = [];
  const log: FakeBmcRequest[] = [];

  const setPower = (id: string, power: FakePowerState): void => {
    const s = systems.get(id);
    if (!s) throw new Error(`fake BMC: no system ${id}`);
    if (s.power === power) return;
    s.power = power;
    for (const fn of listeners) fn(id, power);
  };

  const bmc: FakeRedfish = {
    url: '',
    username: o.username ?? 'admin',
    password: o.password ?? 'password',
    systems,
    log,
    fault: (f) => faults.push({ ...f }),
    clearFaults() {
      faults.length = 0;
      for (const res of held) redfishError(res, 503, 'released');
      held.clear();
    },
    lie(id, reads, as = 'On') {
      const s = systems.get(id);
      if (!s) throw new Error(`fake BMC: no system ${id}`);
      s.lieReads = reads;
      s.lieAs = as;
    },
    setPower,
    onPower: (fn) => listeners.push(fn),
    beforeAnswer: undefined,
    stop: () => stop(),
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    const body = method === 'POST' ? await readBody(req) : '';
    let resetType: string | undefined;
    try {
      resetType = body ? ((JSON.parse(body) as { ResetType?: string }).ResetType ?? undefined) : undefined;
    } catch {
      resetType = undefined;
    }
    const entry: FakeBmcRequest = { at: new Date(), method, path, status: 0, ...(resetType ? { resetType } : {}) };
    log.push(entry);
    const answer = (status: number, json?: unknown): void => {
      entry.status = status;
      if (json === undefined) {
        res.writeHead(status);
        res.end();
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    const fault = faults.find((f) => f.count > 0 && (!f.method || f.method === method));
    if (fault) {
      fault.count--;
      if (fault.kind === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      entry.status = 500;
      return redfishError(res, 500, 'Internal error (injected)');
    }
    const expected = `Basic ${Buffer.from(`${bmc.username}:${bmc.password}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      entry.status = 401;
      res.setHeader('www-authenticate', 'Basic realm="fake-bmc"');
      return redfishError(res, 401, 'Invalid username or password');
    }
    if (path === ROOT && method === 'GET') {
      return answer(200, { '@odata.id': ROOT, RedfishVersion: '1.6.0', Systems: { '@odata.id': `${ROOT}/Systems` } });
    }
    if (path === `${ROOT}/Systems` && method === 'GET') {
      return answer(200, {
        '@odata.id': `${ROOT}/Systems`,
        Members: [...systems.keys()].map((id) => ({ '@odata.id': `${ROOT}/Systems/${id}` })),
        'Members@odata.count': systems.size,
      });
    }
    const m = /^\/redfish\/v1\/Systems\/([^/]+)(\/Actions\/ComputerSystem\.Reset)?$/.exec(path);
    const system = m ? systems.get(decodeURIComponent(m[1]!)) : undefined;
    if (!m || !system) return redfishError(res, 404, `Resource ${path} not found`);
    if (!m[2] && method === 'GET') {
      let power = system.power;
      if (system.lieReads > 0) {
        system.lieReads--;
        power = system.lieAs;
      }
      entry.power = power;
      await bmc.beforeAnswer?.(entry);
      return answer(200, {
        '@odata.id': `${ROOT}/Systems/${system.id}`,
        Id: system.id,
        Name: system.id,
        PowerState: power,
        Actions: {
          '#ComputerSystem.Reset': {
            target: `${ROOT}/Systems/${system.id}/Actions/ComputerSystem.Reset`,
            'ResetType@Redfish.AllowableValues': [
              'On',
              'ForceOff',
              'GracefulShutdown',
              'ForceRestart',
              'PushPowerButton',
            ],
          },
        },
      });
    }
    if (m[2] && method === 'POST') {
      const to: Record<string, FakePowerState | 'toggle'> = {
        On: 'On',
        ForceOn: 'On',
        ForceOff: 'Off',
        GracefulShutdown: 'Off',
        ForceRestart: 'On',
        PushPowerButton: 'toggle',
      };
      const next = resetType ? to[resetType] : undefined;
      if (!next) return redfishError(res, 400, `ResetType ${JSON.stringify(resetType)} is not supported`);
      await bmc.beforeAnswer?.(entry);
      system.resets[resetType!] = (system.resets[resetType!] ?? 0) + 1;
      if (resetType === 'ForceRestart') {
        setPower(system.id, 'Off');
        setPower(system.id, 'On');
      } else {
        setPower(system.id, next === 'toggle' ? (system.power === 'Off' ? 'On' : 'Off') : next);
      }
      return answer(204);
    }
    return redfishError(res, 405, `${method} not allowed on ${path}`);
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) redfishError(res, 500, (err as Error).message);
    });
  };
  const server: Server = o.tls
    ? createHttpsServer({ key: o.tls.key, cert: o.tls.cert }, listener)
    : createHttpServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  bmc.url = `${o.tls ? 'https' : 'http'}://${o.host ?? '127.0.0.1'}:${port}`;

  async function stop(): Promise<void> {
    held.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return bmc;
}

/**
 * Ties each system's power to the simulated Nova's compute service of the
 * host of the same name (or `hostOf(systemId)`): Off kills its nova-compute
 * (service down, as after a power cut), On starts it again (up unless forced
 * down, which stays the operator's to clear, as in Nova).
 */
export function linkToNova(bmc: FakeRedfish, nova: SimState, hostOf: (systemId: string) => string = (id) => id): void {
  bmc.onPower((id, power) => {
    if (power === 'Off') nova.failHost(hostOf(id));
    else if (power === 'On') nova.recoverHost(hostOf(id));
  });
}
