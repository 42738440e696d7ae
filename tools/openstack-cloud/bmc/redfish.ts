// The Redfish BMCs: one sushy-emulator (sushy-tools 2.2.0, its fake system
// driver) serving one ComputerSystem per compute host, behind HTTP basic auth,
// with its external notifier pointed at the power link (power-link.ts).
//
// The fake driver is sushy-tools' own model of a BMC: a power request
// (ComputerSystem.Reset) is accepted at once and applied 1–11 s later, at the
// first read of the system after that time (fakedriver.py set_power_state,
// _update_if_needed). Its state lives in an SQLite file in the state dir, so
// a stopped and restarted emulator keeps each system's power, as a BMC does.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from '../../controlplane/http.ts';
import { logTail, terminate, type ManagedProcess } from '../../controlplane/processes.ts';
import { httpStatus } from '../probes.ts';

const run = promisify(execFile);

/** A stable system id per host (a UUID shape, as real BMCs and the fake driver use). */
export function systemId(host: string): string {
  const h = createHash('sha256').update(`masakari-mini-cloud/${host}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface RedfishEmulatorOptions {
  dir: string;
  venv: string;
  port: number;
  linkPort: number;
  hosts: string[];
  username: string;
  password: string;
  launch(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): ManagedProcess;
  startTimeoutMs: number;
}

export interface RedfishEmulator {
  url: string;
  running(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** POST ComputerSystem.Reset as the BMC's own user. */
  reset(host: string, resetType: 'On' | 'ForceOff'): Promise<void>;
  /** GET the system's PowerState (a read also applies a request whose time has come). */
  powerState(host: string): Promise<string>;
}

const pyString = (s: string) => JSON.stringify(s);

export async function prepareRedfishEmulator(o: RedfishEmulatorOptions): Promise<RedfishEmulator> {
  const base = join(o.dir, 'bmc', 'redfish');
  mkdirSync(join(base, 'state'), { recursive: true });
  // bcrypt, the only digest sushy-emulator's basic auth reads (auth_basic.py); cost 4 keeps each request cheap
  const hash = await run(
    join(o.venv, 'bin/python'),
    ['-c', 'import bcrypt,sys;print(bcrypt.hashpw(sys.argv[1].encode(),bcrypt.gensalt(4)).decode())', o.password],
    { timeout: 60_000 },
  );
  writeFileSync(join(base, 'htpasswd'), `${o.username}:${hash.stdout.trim()}\n`);
  const systems = o.hosts.map(
    (h) =>
      `  {'uuid': ${pyString(systemId(h))}, 'name': ${pyString(h)}, 'power_state': 'On', 'external_notifier': True, 'nics': []},`,
  );
  const conf = join(base, 'sushy.conf');
  writeFileSync(
    conf,
    [
      `SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'`,
      `SUSHY_EMULATOR_LISTEN_PORT = ${o.port}`,
      'SUSHY_EMULATOR_FAKE_DRIVER = True',
      `SUSHY_EMULATOR_STATE_DIR = ${pyString(join(base, 'state'))}`,
      `SUSHY_EMULATOR_AUTH_FILE = ${pyString(join(base, 'htpasswd'))}`,
      `EXTERNAL_NOTIFICATION_URL = 'http://127.0.0.1:${o.linkPort}/redfish/notify'`,
      'SUSHY_EMULATOR_FAKE_SYSTEMS = [',
      ...systems,
      ']',
      '',
    ].join('\n'),
  );
  const url = `http://127.0.0.1:${o.port}`;
  const auth = `Basic ${Buffer.from(`${o.username}:${o.password}`).toString('base64')}`;
  const env: NodeJS.ProcessEnv = {
    PATH: `${join(o.venv, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: join(o.dir, 'run'),
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    NO_PROXY: '127.0.0.1,localhost',
  };
  let proc: ManagedProcess | undefined;
  const running = () => proc !== undefined && !proc.exit;
  const call = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  return {
    url,
    running,
    async start() {
      if (running()) return;
      // the config path names dir, as the watchdog requires of a guarded process's command line
      const p = o.launch('bmc-redfish', join(o.venv, 'bin/sushy-emulator'), ['--config', conf], env);
      proc = p;
      await waitUntil(
        'sushy-emulator answering',
        async () => ((await httpStatus(`${url}/redfish/v1/`)) !== undefined ? true : undefined),
        {
          timeoutMs: o.startTimeoutMs,
          intervalMs: 300,
          abort: () =>
            p.exit ? new Error(`sushy-emulator exited; last lines of ${p.logPath}:\n${logTail(p.logPath)}`) : undefined,
        },
      );
    },
    async stop() {
      if (proc) await terminate(proc, 10_000);
    },
    async reset(host, resetType) {
      const r = await call('POST', `/redfish/v1/Systems/${systemId(host)}/Actions/ComputerSystem.Reset`, {
        ResetType: resetType,
      });
      if (r.status >= 300) throw new Error(`Redfish ${resetType} of ${host}: HTTP ${r.status} ${await r.text()}`);
      await r.arrayBuffer().catch(() => undefined);
    },
    async powerState(host) {
      const r = await call('GET', `/redfish/v1/Systems/${systemId(host)}`);
      if (r.status !== 200) throw new Error(`Redfish GET system of ${host}: HTTP ${r.status} ${await r.text()}`);
      return ((await r.json()) as { PowerState?: string }).PowerState ?? '';
    },
  };
}
