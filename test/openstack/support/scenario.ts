// Shared pieces of the real-Nova scenarios: the operator (keystone auth, its
// facade registered as the catalog's instance-ha endpoint), the `openstack`
// CLI with the masakari plugin, the servers a failed host carries, and the
// checks made through Nova's own API afterwards.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import path from 'node:path';
import { useNamespace, type TestNamespace } from '../../support/cluster.ts';
import { startOperator, type OperatorProcess } from '../../e2e/support/stack.ts';
import { e2eVenv } from '../../e2e/support/python-env.ts';
import { useCloud, type TestCloud } from './cloud.ts';
import type { ResetReport } from '../../../tools/openstack-cloud/reset.ts';
import {
  bootServer,
  ensureFlavor,
  getServer,
  serverAction,
  waitServers,
  type NovaServer,
} from '../../../tools/openstack-cloud/servers.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const HOST_DOWN_PAYLOAD = { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' };
export const HOST_DISABLE_REASON = 'Masakari detected host failed.';

export interface Env {
  cloud: TestCloud;
  ns: TestNamespace;
  operator: OperatorProcess;
  venv: string;
  flavor: string;
}

/** Operator options the scenarios share: evacuate only HA_Enabled servers; fast polling. */
export const OPERATOR_ENV: Record<string, string> = {
  MASAKARI__HOST_FAILURE__EVACUATE_ALL_INSTANCES: 'false',
  // off by default, as in Masakari; the reserved_host scenario checks that the reserved host joins the failed host's aggregate
  MASAKARI__HOST_FAILURE__ADD_RESERVED_HOST_TO_AGGREGATE: 'true',
  // the tests notify only once Nova itself reports the compute down, as a host monitor would
  MASAKARI__DEFAULT__WAIT_PERIOD_AFTER_SERVICE_UPDATE: '0',
  MASAKARI__DEFAULT__WAIT_PERIOD_AFTER_POWER_OFF: '60',
  MASAKARI__DEFAULT__WAIT_PERIOD_AFTER_POWER_ON: '60',
};

/** Operators alive now: the runner stops a test process that runs past its timeout with SIGTERM. */
const liveOperators = new Set<OperatorProcess>();
const killLiveOperators = (): void => {
  for (const o of liveOperators) o.child.kill('SIGKILL');
};
process.on('exit', killLiveOperators);
/** Operators still starting (spawned, not yet ready). */
const startingOperators = new Set<Promise<OperatorProcess>>();
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    // without this, a stopped test process would leave its operators running, reparented to init;
    // one still starting is killed once it is ready (the runner's SIGKILL follows 10 s after SIGTERM)
    killLiveOperators();
    const late = [...startingOperators].map((p) => p.then((o) => o.child.kill('SIGKILL')).catch(() => undefined));
    void Promise.race([Promise.allSettled(late), sleep(8_000)]).then(() => process.exit(130));
  });
}

export async function startEngineProcess(
  cloud: TestCloud,
  ns: TestNamespace,
  apiPort?: number,
  env: Record<string, string> = {},
  components = 'api,engine',
): Promise<OperatorProcess> {
  const starting = startOperator({
    kubeconfigPath: ns.kubeconfigPath,
    namespace: ns.namespace,
    components,
    auth: 'keystone',
    openstack: cloud.desc.adminEnv,
    env: { ...OPERATOR_ENV, ...env },
    apiPort,
  });
  startingOperators.add(starting);
  const operator = await starting.finally(() => startingOperators.delete(starting));
  liveOperators.add(operator);
  operator.child.once('exit', () => liveOperators.delete(operator));
  return operator;
}

let flavor: Promise<string> | undefined;

/**
 * Runs one scenario from a clean state of the shared cloud: the cloud reset
 * (every compute up and enabled, no servers, no aggregates; whatever an
 * earlier scenario left behind, even after a failed assertion), a fresh
 * namespace (so no segment or host survives either) and a fresh operator
 * registered as the catalog's instance-ha endpoint. On failure the
 * operator's last output is printed next to the assertion.
 */
export async function withScenario(
  prefix: string,
  fn: (e: Env) => Promise<void>,
  opts: {
    /** Operator options on top of OPERATOR_ENV. */ env?: Record<string, string>;
    /** MASAKARI_COMPONENTS; default api,engine. */ components?: string;
  } = {},
): Promise<void> {
  const cloud = await useCloud();
  // the operator starts while the cloud resets (a compute restart alone takes tens of seconds)
  const starting = useNamespace(prefix).then(async (ns) => ({
    ns,
    operator: await startEngineProcess(cloud, ns, undefined, opts.env, opts.components),
  }));
  const setup = await Promise.allSettled([e2eVenv(), (flavor ??= ensureFlavor(cloud.admin)), cloud.reset(), starting]);
  const failed = setup.find((r) => r.status === 'rejected');
  if (failed) {
    const started = await starting.catch(() => undefined);
    await started?.operator.stop();
    await started?.ns.cleanup();
    throw failed.reason;
  }
  const [venv, flavorId, undone, { ns, operator }] = setup.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
    string,
    string,
    ResetReport,
    { ns: TestNamespace; operator: OperatorProcess },
  ];
  const left = [
    undone.computesStarted.length && `started ${undone.computesStarted.join(', ')}`,
    undone.servicesEnabled.length && `enabled ${undone.servicesEnabled.join(', ')}`,
    undone.serversDeleted && `deleted ${undone.serversDeleted} servers`,
    undone.aggregatesDeleted && `deleted ${undone.aggregatesDeleted} aggregates`,
    ...(undone.bmcsReset ?? []),
  ].filter(Boolean);
  if (left.length) process.stdout.write(`\n[${prefix}] reset the cloud: ${left.join('; ')}\n`);
  const e: Env = { cloud, ns, venv, flavor: flavorId, operator };
  try {
    await cloud.setMasakariEndpoint(`${e.operator.apiUrl}/v1`);
    await fn(e);
  } catch (err) {
    // uvu reports a file's failures only once all its tests have run: say it now, with the operator's side
    const what = err instanceof Error ? err.message : String(err);
    process.stderr.write(
      `\n[${prefix}] FAILED: ${what}\n[${prefix}] the operator's last output:\n${e.operator.output().slice(-6_000)}\n`,
    );
    throw err;
  } finally {
    await e.operator.stop();
    await ns.cleanup();
  }
}

/** Our facade's REST API as the cloud admin (setup and polling; the CLI drives the steps that matter). */
export async function facade(e: Env, method: string, urlPath: string, body?: unknown): Promise<unknown> {
  const r = await fetch(`${e.operator.apiUrl}/v1${urlPath}`, {
    method,
    headers: {
      'x-auth-token': await e.cloud.adminToken(),
      'openstack-api-version': 'instance-ha 1.3',
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`facade ${method} ${urlPath}: HTTP ${r.status} ${text}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

/**
 * The real `openstack` CLI (python-masakariclient plugin) as the cloud admin;
 * JSON output parsed. Each run costs seconds of CPU (15 s of wall time at a
 * load average of 20), so the scenarios use it for the steps that matter.
 */
export async function openstack(e: Env, args: string[]): Promise<unknown> {
  const childEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...e.cloud.desc.adminEnv };
  try {
    const r = await run(path.join(e.venv, 'bin/openstack'), [...args, '-f', 'json'], {
      env: childEnv,
      timeout: 120_000,
    });
    return r.stdout.trim() === '' ? null : JSON.parse(r.stdout);
  } catch (err) {
    const x = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`openstack ${args.join(' ')} failed: ${x.stderr || x.stdout || x.message}`);
  }
}

export const uniq = (p: string) => `${p}-${randomBytes(3).toString('hex')}`;

export interface Segment {
  id: string;
  name: string;
}

/** The segment through the CLI, its hosts through the facade's REST API. */
export async function createSegment(
  e: Env,
  method: string,
  hosts: { name: string; reserved?: boolean }[],
): Promise<Segment> {
  const name = uniq(`seg-${method}`);
  const seg = (await openstack(e, ['segment', 'create', name, method, 'COMPUTE'])) as { uuid: string };
  for (const h of hosts) {
    await facade(e, 'POST', `/segments/${seg.uuid}/hosts`, {
      host: { name: h.name, type: 'COMPUTE', control_attributes: 'SSH', reserved: h.reserved ?? false },
    });
  }
  return { id: seg.uuid, name };
}

/** The servers a failed host carries, by role. */
export interface Fleet {
  active: string[];
  shutoff: string;
  error: string;
  /** Locked by its owner (project admin) before the failure. */
  ownerLocked: string;
  /** Without HA_Enabled: stays where it is (evacuate_all_instances = false). */
  nonHa: string;
  all: string[];
  /** The servers that must move, with the status each must end in. */
  expected: Map<string, string>;
}

/** Boots the 8 servers of a failed host and brings each to its starting state. */
export async function bootFleet(e: Env, host: string, activeCount = 4): Promise<Fleet> {
  const { admin } = e.cloud;
  const tag = uniq(host);
  const activeIds = await Promise.all(
    Array.from({ length: activeCount }, (_, i) => bootServer(admin, e.flavor, { name: `${tag}-active-${i}`, host })),
  );
  const [shutoff, error, ownerLocked, nonHa] = await Promise.all([
    bootServer(admin, e.flavor, { name: `${tag}-shutoff`, host }),
    bootServer(admin, e.flavor, { name: `${tag}-error`, host }),
    // pinning a server to a host ("host", 2.74) is admin-only in Nova's default policy,
    // so this server's owner is project admin; it locks the server itself (locked_by "owner")
    bootServer(admin, e.flavor, { name: `${tag}-owner-locked`, host }),
    bootServer(admin, e.flavor, { name: `${tag}-non-ha`, host, haEnabled: false }),
  ]);
  const all = [...activeIds, shutoff, error, ownerLocked, nonHa];
  await waitServers(admin, all, 'ACTIVE');
  await serverAction(admin, shutoff, { 'os-stop': null });
  await serverAction(admin, error, { 'os-resetState': { state: 'error' } });
  await serverAction(admin, ownerLocked, { lock: { locked_reason: 'owner maintenance' } });
  await waitServers(admin, [shutoff], 'SHUTOFF');
  await waitServers(admin, [error], 'ERROR');
  const expected = new Map<string, string>([
    ...activeIds.map((id) => [id, 'ACTIVE'] as [string, string]),
    [shutoff, 'SHUTOFF'],
    [error, 'ERROR'],
    [ownerLocked, 'ACTIVE'],
  ]);
  return { active: activeIds, shutoff, error, ownerLocked, nonHa, all, expected };
}

export async function computeService(
  e: Env,
  host: string,
): Promise<{ id: string; state: string; status: string; disabled_reason: string | null; forced_down: boolean }> {
  const r = await e.cloud.admin('GET', `/os-services?binary=nova-compute&host=${host}`);
  const svc = (
    r.body as {
      services: { id: string; state: string; status: string; disabled_reason: string | null; forced_down: boolean }[];
    }
  ).services[0];
  if (!svc) throw new Error(`no nova-compute service on ${host}`);
  return svc;
}

/** SIGKILLs the host's nova-compute and waits until Nova reports the service down (service_down_time). */
export async function failHost(e: Env, host: string, timeoutMs = 90_000): Promise<void> {
  await e.cloud.killCompute(host);
  const deadline = Date.now() + timeoutMs;
  while ((await computeService(e, host)).state !== 'down') {
    if (Date.now() > deadline) throw new Error(`Nova still reports ${host} up ${timeoutMs} ms after its compute died`);
    await sleep(1_000);
  }
}

export interface NotificationView {
  notification_uuid: string;
  status: string;
  recovery_workflow_details?: unknown;
}

export async function notify(e: Env, type: string, host: string, payload: unknown): Promise<NotificationView> {
  return (await openstack(e, [
    'notification',
    'create',
    type,
    host,
    new Date().toISOString().replace(/\.\d+Z$/, ''),
    JSON.stringify(payload),
  ])) as NotificationView;
}

/** Polls the facade until the notification is done, then reads it once more through the CLI. */
export async function waitNotification(e: Env, id: string, timeoutMs = 300_000): Promise<NotificationView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { notification: n } = (await facade(e, 'GET', `/notifications/${id}`)) as { notification: NotificationView };
    if (['finished', 'error', 'failed', 'ignored'].includes(n.status)) break;
    if (Date.now() > deadline) {
      throw new Error(`notification ${id} still ${n.status} after ${timeoutMs} ms: ${JSON.stringify(n)}`);
    }
    await sleep(1_000);
  }
  return (await openstack(e, ['notification', 'show', id])) as NotificationView;
}

export interface Migration {
  id: number;
  instance_uuid: string;
  migration_type: string;
  status: string;
  source_compute: string;
  dest_compute: string | null;
}

export async function evacuations(e: Env, serverId: string): Promise<Migration[]> {
  const r = await e.cloud.admin(
    'GET',
    `/os-migrations?instance_uuid=${serverId}&migration_type=evacuation`,
    undefined,
    '2.80',
  );
  return (r.body as { migrations: Migration[] }).migrations;
}

export async function servers(e: Env, ids: string[]): Promise<NovaServer[]> {
  return Promise.all(ids.map((id) => getServer(e.cloud.admin, id)));
}

/** The state of the servers and services a recorded scenario starts from, for the replay against the simulator. */
export interface World {
  failedHost: string | null;
  hosts: string[];
  services: { uuid: string; host: string }[];
  /** Host aggregates (the reserved_host flow may add the reserved host to the failed host's). */
  aggregates: { id: number; name: string; hosts: string[] }[];
  servers: {
    id: string;
    name: string;
    host: string;
    vm_state: string;
    task_state: string | null;
    locked: boolean;
    metadata: Record<string, string>;
    project_id: string;
  }[];
}

export async function captureWorld(e: Env, failedHost: string | null, ids: string[]): Promise<World> {
  const svc = await e.cloud.admin('GET', '/os-services?binary=nova-compute');
  const services = (svc.body as { services: { id: string; host: string }[] }).services.map((s) => ({
    uuid: s.id,
    host: s.host,
  }));
  const list = await servers(e, ids);
  const aggs = await e.cloud.admin('GET', '/os-aggregates');
  const aggregates = (aggs.body as { aggregates: { id: number; name: string; hosts: string[] }[] }).aggregates.map(
    ({ id, name, hosts }) => ({ id, name, hosts }),
  );
  return {
    failedHost,
    hosts: services.map((s) => s.host),
    services,
    aggregates,
    servers: list.map((s) => ({
      id: s.id,
      name: s.name,
      host: s['OS-EXT-SRV-ATTR:host'] ?? '',
      vm_state: s['OS-EXT-STS:vm_state'] ?? 'active',
      task_state: s['OS-EXT-STS:task_state'] ?? null,
      locked: Boolean(s.locked),
      metadata: s.metadata ?? {},
      project_id: s.tenant_id ?? '',
    })),
  };
}

/** Clients whose Nova calls are not the engine's: the harness, the CLI, keystoneauth/openstacksdk. */
const NOT_THE_ENGINE = /masakari-openstack-cloud|openstacksdk|keystoneauth|python-requests|osc-lib|novaclient/i;

/**
 * With MASAKARI_RECORD_NOVA_TRANSCRIPT_DIR set, writes <dir>/<name>.json: the
 * world before the notification and every Nova exchange the operator made
 * since seq `since` (real Nova's answers), for tools/simulator's replay test.
 */
export async function saveTranscript(e: Env, name: string, world: World, since: number): Promise<void> {
  const dir = process.env.MASAKARI_RECORD_NOVA_TRANSCRIPT_DIR;
  if (!dir) return;
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { exchanges } = await e.cloud.exchanges(since);
  const engine = exchanges
    .filter((x) => !NOT_THE_ENGINE.test(x.userAgent))
    .map(({ method, url, microversion, requestBody, status, responseBody }) => ({
      method,
      url,
      microversion: microversion ?? null,
      requestBody: requestBody ?? null,
      status,
      responseBody: responseBody ?? null,
    }));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `${name}.json`),
    `${JSON.stringify({ nova: '34.0.0', scenario: name, world, exchanges: engine }, null, 1)}\n`,
  );
}
