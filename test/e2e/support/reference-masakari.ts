// Runs the reference masakari-api 22.0.0 (from PyPI) on loopback: noauth2,
// SQLite, the in-process `fake://` RPC transport (no engine, so notifications
// stay `new`, like our facade with MASAKARI_COMPONENTS=api), pointed at a
// Keystone/Nova (our simulator) for the host-name check.
//
// With `engine`, a reference masakari-engine runs too, sharing the SQLite and
// TaskFlow databases. `fake://` never delivers the API's RPC cast to it, so it
// finds work only through its periodic task `_process_unfinished_notifications`
// (notifications `new` for longer than `retry_notification_new_status_interval`),
// which this module runs every second.
//
// bench/openstack wires it like a deployment instead: `transportUrl` (the
// mini cloud's RabbitMQ, so the cast reaches the engine), `keystoneAuth`
// against the real Keystone, and `engine.masakariDefaults`.
//
// masakari-api, masakari-engine and a test's helper scripts (through
// `pythonEnv`) begin their SQLite transactions IMMEDIATE, as the mini cloud's
// do: with oslo.db's deferred BEGIN, the engine's periodic task and a helper
// writing the same file could fail at once with "database is locked" instead
// of waiting on the busy timeout.
// Production Masakari runs on MySQL, where writers wait for each other too.
// Not `db sync`: alone on the file, and its migration inspects the schema on
// a second connection while the first holds its transaction, which IMMEDIATE
// would make wait on itself.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sqliteImmediatePythonPath } from '../../../tools/openstack-cloud/config.ts';
import { freePort, waitForHttp } from './net.ts';

const run = promisify(execFile);

export interface ReferenceOptions {
  venv: string;
  /** Keystone v3 URL Masakari's service user authenticates against. */
  authUrl: string;
  username: string;
  password: string;
  projectName: string;
  /** Seconds an RPC call (GET notification at >= 1.1) waits for an engine. */
  rpcResponseTimeout?: number;
  /** Also run masakari-engine (see the header). */
  engine?: ReferenceEngineOptions;
  /**
   * A real deployment's wiring instead of the in-process test one: RPC over
   * this oslo.messaging URL (e.g. the cloud's RabbitMQ), so the API's cast
   * reaches the engine at once.
   */
  transportUrl?: string;
  /** keystone auth (keystonemiddleware against authUrl, the service user above) instead of noauth2. */
  keystoneAuth?: boolean;
  /** How long masakari-api may take to answer after its start (default 60 s; minutes on a loaded machine). */
  apiStartTimeoutMs?: number;
  /** Seconds of the API's random pause before creating a notification; default 0 (Masakari's default is 5). */
  notificationDelayMax?: number;
}

export interface ReferenceEngineOptions {
  /** Start from Masakari's own defaults instead of FAST_ENGINE_OPTIONS (`options` still apply). */
  masakariDefaults?: boolean;
  /**
   * Extra `[DEFAULT]` options over the fast defaults below, e.g.
   * `{ wait_period_after_evacuation: 2 }`.
   */
  options?: Record<string, string | number>;
}

/**
 * Engine options that make the reference finish a recovery in seconds. The
 * periodic task's spacing is read when the manager module is imported, which
 * masakari-engine does after parsing the config file, so 1 s takes effect.
 */
const FAST_ENGINE_OPTIONS: Record<string, string | number> = {
  process_unfinished_notifications_interval: 1,
  retry_notification_new_status_interval: 1,
  periodic_fuzzy_delay: 0,
  periodic_interval_max: 1,
  wait_period_after_service_update: 1,
  wait_period_after_evacuation: 3,
  wait_period_after_power_off: 3,
  wait_period_after_power_on: 3,
  verify_interval: 1,
};

export interface ReferenceMasakari {
  url: string;
  /** The masakari-api process (for resource measurements). */
  pid: number | undefined;
  /** The masakari.conf both processes read (for helper scripts run in the venv). */
  configFile: string;
  /** The environment the reference's processes run with: run helper scripts that open its database with it. */
  pythonEnv: NodeJS.ProcessEnv;
  /** The masakari-engine process, when started. */
  enginePid: number | undefined;
  /** Last 20 KiB of the engine's log (stderr), for failure messages. */
  engineLog(): string;
  stop(): Promise<void>;
}

export async function startReferenceMasakari(o: ReferenceOptions): Promise<ReferenceMasakari> {
  const dir = await mkdtemp(path.join(tmpdir(), 'masakari-ref-'));
  const port = await freePort();
  await copyFile(path.join(o.venv, 'etc/masakari/api-paste.ini'), path.join(dir, 'api-paste.ini'));
  const conf = path.join(dir, 'masakari.conf');
  const pythonEnv = { ...process.env, PYTHONPATH: sqliteImmediatePythonPath() };
  await writeFile(
    conf,
    [
      '[DEFAULT]',
      `auth_strategy = ${o.keystoneAuth ? 'keystone' : 'noauth2'}`,
      'masakari_api_listen = 127.0.0.1',
      `masakari_api_listen_port = ${port}`,
      'masakari_api_workers = 1',
      `transport_url = ${o.transportUrl ?? 'fake://'}`,
      // No coordination backend: Masakari would sleep 0..5 s per notification.
      `notification_delay_max = ${o.notificationDelayMax ?? 0}`,
      `rpc_response_timeout = ${o.rpcResponseTimeout ?? 2}`,
      `api_paste_config = ${path.join(dir, 'api-paste.ini')}`,
      `os_privileged_user_auth_url = ${o.authUrl}`,
      `os_privileged_user_name = ${o.username}`,
      `os_privileged_user_password = ${o.password}`,
      `os_privileged_user_tenant = ${o.projectName}`,
      // Masakari's defaults ("default") are domain names, and a real Keystone's is "Default"
      ...(o.keystoneAuth ? ['os_user_domain_name = Default', 'os_project_domain_name = Default'] : []),
      ...(o.engine
        ? Object.entries({
            ...(o.engine.masakariDefaults ? {} : FAST_ENGINE_OPTIONS),
            ...(o.engine.options ?? {}),
          }).map(([k, v]) => `${k} = ${v}`)
        : []),
      '[database]',
      // A 30 s busy timeout (pysqlite's is 5 s): the api, the engine and a test's helper script share the
      // file, and on a loaded machine one writer can hold it longer than 5 s ("database is locked").
      `connection = sqlite:///${path.join(dir, 'masakari.db')}?timeout=30`,
      '[taskflow]',
      `connection = sqlite:///${path.join(dir, 'taskflow.db')}`,
      '[keystone_authtoken]',
      'auth_type = password',
      ...(o.keystoneAuth
        ? [
            `www_authenticate_uri = ${o.authUrl}`,
            `auth_url = ${o.authUrl}`,
            `username = ${o.username}`,
            `password = ${o.password}`,
            `project_name = ${o.projectName}`,
            'user_domain_name = Default',
            'project_domain_name = Default',
          ]
        : []),
      '[oslo_messaging_notifications]',
      'driver = noop',
      '',
    ].join('\n'),
  );
  await run(path.join(o.venv, 'bin/masakari-manage'), ['--config-file', conf, 'db', 'sync'], { timeout: 120_000 });
  const child: ChildProcess = spawn(path.join(o.venv, 'bin/masakari-api'), ['--config-file', conf], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: pythonEnv,
    detached: false,
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  let engine: ChildProcess | undefined;
  let engineLog = '';
  if (o.engine) {
    engine = spawn(path.join(o.venv, 'bin/masakari-engine'), ['--config-file', conf], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: pythonEnv,
      detached: false,
    });
    engine.stderr?.on('data', (d: Buffer) => {
      engineLog = (engineLog + d.toString()).slice(-20_000);
    });
  }
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/`, o.apiStartTimeoutMs ?? 60_000);
  } catch (e) {
    child.kill('SIGKILL');
    engine?.kill('SIGKILL');
    throw new Error(`reference masakari-api did not start: ${(e as Error).message}\n${stderr}`);
  }
  return {
    url,
    pid: child.pid,
    configFile: conf,
    pythonEnv,
    enginePid: engine?.pid,
    engineLog: () => engineLog,
    async stop() {
      await Promise.all([stopProcess(child), engine ? stopProcess(engine) : undefined]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** SIGTERM, then SIGKILL if it is still there after 200 ms. */
async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  p.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}
