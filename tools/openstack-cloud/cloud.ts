// A real, small OpenStack on loopback for end-to-end tests and `make
// openstack`: RabbitMQ (Debian), Keystone 30, Placement 16 and Nova 34 (api,
// conductor, scheduler, one nova-compute per host with
// fake.FakeDriverWithoutFakeNodes and its own state path) from the pinned venv
// of hack/openstack/venv.sh, plus our Glance/Neutron stand-ins and a recording
// proxy in front of nova-api. SQLite, one worker each, free ports.
//
// Like the Kubernetes control plane (tools/controlplane) it leaves a record and
// starts a watchdog, so its processes die with the owner however the owner
// dies, and a later start reaps what a killed owner left behind.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from '../controlplane/http.ts';
import { repoRoot } from '../controlplane/paths.ts';
import { logTail, signalGroup, spawnInGroup, terminate } from '../controlplane/processes.ts';
import type { ManagedProcess } from '../controlplane/processes.ts';
import { reapOrphans, recordWithWatchdog, removeRecord, writeRecord } from '../controlplane/registry.ts';
import { ADMIN_PASSWORD, keystoneUrl, MEMBER_PASSWORD, rabbitUrl, sqliteImmediatePythonPath } from './config.ts';
import { defaultLog, ensureOpenStackVenv, ensureRabbitmq } from './install.ts';
import { seedKeystone, type KeystoneAdmin } from './keystone-seed.ts';
import { httpStatus, tcpOpen } from './probes.ts';
import { startNovaRecorder, type NovaRecorder } from './recorder.ts';
import { startGlance, startNeutron, type StandIn } from './standins.ts';
import { sqlite } from './templates.ts';
import { prepareWorkDir } from './work-dir.ts';

export interface OpenStackCloudOptions {
  /** Compute host names (never "compute": the fake driver renames that node). Default cpu1..cpu3. */
  computes?: string[];
  /** The venv; default: hack/openstack/venv.sh builds or finds it. */
  venv?: string;
  /** Per service; default MASAKARI_OPENSTACK_START_TIMEOUT_MS or 180 s (2 busy cores). */
  startTimeoutMs?: number;
  /** Keep the work dir (logs, DBs) after stop(); also MASAKARI_OPENSTACK_KEEP=1. */
  keepDir?: boolean;
  log?: (line: string) => void;
}

export interface OpenStackCloud {
  dir: string;
  /** Keystone v3, e.g. http://127.0.0.1:PORT/v3 */
  authUrl: string;
  /** The compute endpoint in the catalog (the recording proxy), ending in /v2.1. */
  novaUrl: string;
  /** OS_* for the cloud admin (project admin), as `openstack` and the operator read them. */
  adminEnv: Record<string, string>;
  /** OS_* for user "member" in project "demo" (owns servers, may lock them). */
  memberEnv: Record<string, string>;
  computes: string[];
  recorder: NovaRecorder;
  glance: StandIn;
  neutron: StandIn;
  keystone: KeystoneAdmin;
  /** Adds or replaces the catalog's instance-ha (masakari) endpoint. */
  setMasakariEndpoint(url: string): Promise<void>;
  /** SIGKILLs a host's nova-compute (its fake servers are lost with it, as with a dead host). */
  killCompute(host: string): Promise<void>;
  /** Starts a host's nova-compute again and waits until Nova reports it up (waitUp false: only starts it). */
  startCompute(host: string, waitUp?: boolean): Promise<void>;
  /** Waits until Nova reports every host's nova-compute up (never while its service is forced down). */
  waitComputesUp(hosts: string[]): Promise<void>;
  computeRunning(host: string): boolean;
  /** Seconds the bring-up took, per phase and in all. */
  timings: Record<string, number>;
  /** oslo.messaging URL of the cloud's RabbitMQ (for another service's RPC, e.g. Masakari's). */
  transportUrl: string;
  /**
   * Starts a helper process (an emulated BMC) owned like the cloud's own: in its own group, logged to
   * dir/log/<name>.log, guarded by the watchdog (so its command line must name dir) and stopped by stop().
   */
  launch(name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): ManagedProcess;
  stop(): Promise<void>;
}

const DEFAULT_COMPUTES = ['cpu1', 'cpu2', 'cpu3'];

export async function startOpenStackCloud(opts: OpenStackCloudOptions = {}): Promise<OpenStackCloud> {
  const log = opts.log ?? defaultLog;
  const computes = opts.computes ?? DEFAULT_COMPUTES;
  if (computes.includes('compute'))
    throw new Error('a compute host may not be called "compute" (the fake driver renames it)');
  const startTimeoutMs = opts.startTimeoutMs ?? (Number(process.env.MASAKARI_OPENSTACK_START_TIMEOUT_MS) || 180_000);
  const keepDir = opts.keepDir ?? process.env.MASAKARI_OPENSTACK_KEEP === '1';
  const timings: Record<string, number> = {};
  const t0 = Date.now();
  const mark = (what: string, since = t0) => {
    timings[what] = Math.round((Date.now() - since) / 100) / 10;
  };

  const [venv, rabbitServer] = await Promise.all([opts.venv ?? ensureOpenStackVenv(log), ensureRabbitmq()]);
  mark('install');
  const bin = (name: string) => join(venv, 'bin', name);

  reapOrphans(log);
  const tUp = Date.now();
  const id = `os-${process.pid}-${randomBytes(4).toString('hex')}`;
  const { dir, ports } = await prepareWorkDir(venv, computes, log, startTimeoutMs);
  mark('databases', tUp);

  const { watchdog, record } = recordWithWatchdog(id, dir);

  const procs = new Map<string, ManagedProcess>();
  const pyEnv: NodeJS.ProcessEnv = {
    PATH: `${join(venv, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: join(dir, 'run'),
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    // no proxies: everything is on loopback
    NO_PROXY: '127.0.0.1,localhost',
    // sitecustomize: SQLite transactions BEGIN IMMEDIATE (see the file for why)
    PYTHONPATH: sqliteImmediatePythonPath(),
  };
  /** Starts a long-running process in its own group; its command line names dir (the watchdog checks that). */
  const launch = (name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = pyEnv): ManagedProcess => {
    const proc = spawnInGroup(name, cmd, args, join(dir, 'log', `${name}.log`), { env, cwd: join(dir, 'run') });
    procs.set(name, proc);
    watchdog.guard(proc.pid);
    record.processes.push({ name, pid: proc.pid, startTime: proc.startTime });
    writeRecord(record);
    return proc;
  };
  const died = (name: string) => (): Error | undefined => {
    const p = procs.get(name);
    if (!p?.exit) return undefined;
    return new Error(
      `${name} exited (${p.exit.signal ?? `code ${p.exit.code}`}); last lines of ${p.logPath}:\n${logTail(p.logPath)}`,
    );
  };

  let recorder: NovaRecorder | undefined;
  let glance: StandIn | undefined;
  let neutron: StandIn | undefined;

  const onExit = (): void => {
    for (const p of procs.values()) if (!p.exit) signalGroup(p.pid, 'SIGKILL');
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
    removeRecord(id);
  };
  process.on('exit', onExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      // computes and the API first, RabbitMQ and Keystone last, so nobody spends its grace retrying them
      const order = [...procs.values()].reverse();
      await Promise.all(
        order.filter((p) => !/^(rabbitmq|epmd|keystone)$/.test(p.name)).map((p) => terminate(p, 10_000)),
      );
      for (const p of order.filter((q) => /^(rabbitmq|epmd|keystone)$/.test(q.name))) await terminate(p, 15_000);
      await Promise.all([recorder?.close(), glance?.close(), neutron?.close()]);
      await watchdog.release();
      process.off('exit', onExit);
      // a process reaped a moment ago may still have had a log line in flight: retried, and a directory that
      // still will not go is left in /tmp with a line that says so, not a failed teardown
      if (!keepDir)
        try {
          rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
        } catch (e) {
          log(`could not remove ${dir}: ${e instanceof Error ? e.message : String(e)}`);
        }
      removeRecord(id);
    })());

  const novaConfArgs = ['--config-file', join(dir, 'etc/nova/nova.conf')];
  const computeArgs = (host: string) => [...novaConfArgs, '--config-file', join(dir, 'etc', `compute-${host}.conf`)];
  const startComputeProcess = (host: string) => launch(`nova-compute-${host}`, bin('nova-compute'), computeArgs(host));

  let keystone: KeystoneAdmin | undefined;
  const adminEnv: Record<string, string> = {
    OS_AUTH_URL: `${keystoneUrl(ports)}/v3`,
    OS_IDENTITY_API_VERSION: '3',
    OS_USERNAME: 'admin',
    OS_PASSWORD: ADMIN_PASSWORD,
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
    OS_INTERFACE: 'public',
  };
  const memberEnv = { ...adminEnv, OS_USERNAME: 'member', OS_PASSWORD: MEMBER_PASSWORD, OS_PROJECT_NAME: 'demo' };

  const computeServices = async (): Promise<{ host: string; state: string; status: string }[]> => {
    if (!keystone) return [];
    const r = await keystone.nova('GET', '/os-services?binary=nova-compute');
    return (r.body as { services?: { host: string; state: string; status: string }[] }).services ?? [];
  };
  const waitComputesUp = (hosts: string[], what: string) =>
    waitUntil(
      what,
      async () => {
        const up = new Set((await computeServices()).filter((s) => s.state === 'up').map((s) => s.host));
        return hosts.every((h) => up.has(h)) ? true : undefined;
      },
      {
        timeoutMs: startTimeoutMs,
        intervalMs: 1_000,
        abort: () => hosts.map((h) => died(`nova-compute-${h}`)()).find((e) => e !== undefined),
      },
    );

  try {
    // ---- phase 1, in parallel: RabbitMQ; Keystone; Placement's DB; Nova's DBs; stand-ins and proxy
    const rabbit = (async () => {
      const t = Date.now();
      const rabbitEnv: NodeJS.ProcessEnv = {
        ...pyEnv,
        HOME: join(dir, 'rabbit/home'),
        ERL_EPMD_PORT: String(ports.epmd),
        RABBITMQ_NODENAME: `${id}@localhost`,
        RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
        RABBITMQ_NODE_PORT: String(ports.rabbit),
        RABBITMQ_DIST_PORT: String(ports.rabbitDist),
        RABBITMQ_MNESIA_BASE: join(dir, 'rabbit/mnesia'),
        RABBITMQ_LOG_BASE: join(dir, 'rabbit/log'),
        RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'rabbit/enabled_plugins'),
        RABBITMQ_PID_FILE: join(dir, 'rabbit/pid'),
        RABBITMQ_CONFIG_FILES: join(dir, 'rabbit/conf.d'),
        RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'rabbit/advanced.config'),
      };
      // epmd in the foreground (no -daemon), so it is ours to stop; sh -c keeps
      // dir in the group leader's command line for the watchdog's check
      launch('epmd', 'sh', ['-c', 'epmd -port "$1"; exit $?', join(dir, 'rabbit'), String(ports.epmd)], rabbitEnv);
      launch('rabbitmq', 'sh', ['-c', '"$1"; exit $?', join(dir, 'rabbit'), rabbitServer], rabbitEnv);
      await waitUntil('RabbitMQ listening', async () => ((await tcpOpen(ports.rabbit)) ? true : undefined), {
        timeoutMs: startTimeoutMs,
        intervalMs: 500,
        abort: () => died('rabbitmq')() ?? died('epmd')(),
      });
      mark('rabbitmq', t);
    })();

    const keystoneUp = (async () => {
      const t = Date.now();
      const url = keystoneUrl(ports);
      launch(
        'keystone',
        bin('gunicorn'),
        gunicornArgs(dir, 'keystone', ports.keystone, 'keystone_api:application', 4),
        {
          ...pyEnv,
          OS_KEYSTONE_CONFIG_DIR: join(dir, 'etc/keystone'),
        },
      );
      await waitUntil('Keystone answering', async () => ((await httpStatus(`${url}/v3`)) === 200 ? true : undefined), {
        timeoutMs: startTimeoutMs,
        intervalMs: 500,
        abort: died('keystone'),
      });
      keystone = await seedKeystone(url, ports);
      mark('keystone', t);
    })();

    const placementUp = (async () => {
      const t = Date.now();
      launch(
        'placement',
        bin('gunicorn'),
        gunicornArgs(dir, 'placement', ports.placement, 'placement.wsgi.api:application'),
        {
          ...pyEnv,
          OS_PLACEMENT_CONFIG_DIR: join(dir, 'etc/placement'),
        },
      );
      await waitUntil(
        'Placement answering',
        async () => ((await httpStatus(`http://127.0.0.1:${ports.placement}/`)) === 200 ? true : undefined),
        { timeoutMs: startTimeoutMs, intervalMs: 500, abort: died('placement') },
      );
      mark('placement', t);
    })();

    [glance, neutron, recorder] = await Promise.all([
      startGlance(ports.glance),
      startNeutron(ports.neutron),
      startNovaRecorder(ports.nova, ports.novaApi),
    ]);
    await Promise.all([rabbit, keystoneUp, placementUp]);
    mark('phase1', tUp);

    // ---- phase 2: Nova's services, all at once
    const tNova = Date.now();
    launch('nova-conductor', bin('nova-conductor'), novaConfArgs);
    launch('nova-scheduler', bin('nova-scheduler'), novaConfArgs);
    launch('nova-api', bin('gunicorn'), gunicornArgs(dir, 'nova-api', ports.novaApi, 'nova_api:application', 4), {
      ...pyEnv,
      OS_NOVA_CONFIG_DIR: join(dir, 'etc/nova'),
      // the paste pipeline is read from the first file (nova/api/openstack/wsgi_app.py)
      OS_NOVA_CONFIG_FILES: 'api-paste.ini;nova.conf',
    });
    for (const host of computes) startComputeProcess(host);
    await waitUntil(
      'nova-api answering',
      async () => ((await httpStatus(`http://127.0.0.1:${ports.novaApi}/`)) === 200 ? true : undefined),
      { timeoutMs: startTimeoutMs, intervalMs: 500, abort: () => died('nova-api')() ?? died('nova-conductor')() },
    );
    await waitComputesUp(computes, `nova-compute up on ${computes.join(', ')}`);
    // nova-scheduler maps new computes to cell1 every discover_hosts_in_cells_interval (2 s);
    // until then the scheduler cannot place a server on them
    await waitUntil(
      'every compute mapped to cell1',
      async () => {
        const rows = JSON.parse(
          await sqlite(venv, join(dir, 'db/nova_api.sqlite'), ['SELECT host FROM host_mappings']),
        ) as string[][];
        const mapped = new Set(rows.map((r) => r[0]));
        return computes.every((h) => mapped.has(h)) ? true : undefined;
      },
      { timeoutMs: startTimeoutMs, intervalMs: 1_000, abort: died('nova-scheduler') },
    );
    await waitUntil(
      'every compute a hypervisor',
      async () => {
        const r = await keystone!.nova('GET', '/os-hypervisors');
        const n = ((r.body as { hypervisors?: unknown[] }).hypervisors ?? []).length;
        return n >= computes.length ? true : undefined;
      },
      { timeoutMs: startTimeoutMs, intervalMs: 1_000 },
    );
    mark('nova', tNova);
    mark('bring-up', tUp);
    log(`up in ${timings['bring-up']} s (${JSON.stringify(timings)}); logs in ${dir}/log`);
  } catch (e) {
    log(`start failed; logs in ${dir}/log`);
    await stop();
    throw e;
  }

  const ks = keystone!;
  const rec = recorder;
  const g = glance;
  const n = neutron;
  return {
    dir,
    authUrl: `${keystoneUrl(ports)}/v3`,
    novaUrl: `${rec.url}/v2.1`,
    adminEnv,
    memberEnv,
    computes,
    recorder: rec,
    glance: g,
    neutron: n,
    keystone: ks,
    timings,
    transportUrl: rabbitUrl(ports),
    setMasakariEndpoint: (url) => ks.setEndpoint('instance-ha', 'masakari', url),
    launch: (name, cmd, args, env) => launch(name, cmd, args, env ?? pyEnv),
    computeRunning: (host) => {
      const p = procs.get(`nova-compute-${host}`);
      return p !== undefined && !p.exit;
    },
    async killCompute(host) {
      const p = procs.get(`nova-compute-${host}`);
      if (!p) throw new Error(`no compute ${host}`);
      if (p.exit) return;
      signalGroup(p.pid, 'SIGKILL');
      await p.exited;
    },
    async startCompute(host, waitUp = true) {
      if (!computes.includes(host)) throw new Error(`no compute ${host}`);
      const p = procs.get(`nova-compute-${host}`);
      if (p && !p.exit) throw new Error(`nova-compute on ${host} is running`);
      startComputeProcess(host);
      if (waitUp) await waitComputesUp([host], `nova-compute up again on ${host}`);
    },
    waitComputesUp: async (hosts) => void (await waitComputesUp(hosts, `nova-compute up on ${hosts.join(', ')}`)),
    stop,
  };
}

/**
 * One gunicorn worker; `threads` > 1 only where SQLite write contention
 * cannot arise (a second thread's write in the same DB fails at once with
 * "database is locked" when its snapshot is stale). gunicorn retitles its processes
 * (setproctitle) to "gunicorn: master [<name>]", so --name carries dir into
 * the command line the watchdog checks.
 */
function gunicornArgs(dir: string, name: string, port: number, app: string, threads = 1): string[] {
  return [
    '--bind',
    `127.0.0.1:${port}`,
    '--workers',
    '1',
    '--threads',
    String(threads),
    '--worker-class',
    'gthread',
    '--timeout',
    '300',
    '--graceful-timeout',
    '5',
    '--name',
    join(dir, name),
    '--pid',
    join(dir, 'run', `${name}.pid`),
    '--pythonpath',
    join(repoRoot(), 'hack/openstack/wsgi'),
    app,
  ];
}
