// One host failure on the mini cloud, the same for every side: a segment with
// the three computes (cpu3 reserved unless the method is `auto`), five servers
// booted on cpu1 (2 ACTIVE, 1 SHUTOFF, 1 ERROR, 1 ACTIVE locked by its
// owner), cpu1's nova-compute SIGKILLed, and a COMPUTE_HOST notification
// POSTed once Nova itself reports the service down (as a host monitor would).
// Measured: from just before the POST until GET /v1/notifications/{id} first
// shows a final status. Then the end state is read through both APIs, and
// the cloud is put back: servers deleted, cpu1's compute restarted and its
// service re-enabled.
import { randomBytes } from 'node:crypto';
import type { OpenStackCloud } from '../../tools/openstack-cloud/cloud.ts';
import {
  bootServer,
  deleteServers,
  getServer,
  serverAction,
  waitServers,
  type NovaCall,
} from '../../tools/openstack-cloud/servers.ts';
import { createSegment, masakariCaller, notifyHostDown, waitFinal, type MasakariCall } from './masakari-api.ts';
import type { RunningSide } from './sides.ts';

export const METHODS = ['auto', 'reserved_host', 'auto_priority', 'rh_priority'] as const;
export type Method = (typeof METHODS)[number];

export const FAILED_HOST = 'cpu1';
export const RESERVED_HOST = 'cpu3';
const OWNER_LOCK_REASON = 'owner maintenance';

/** The servers of the failed host, by role (the role names the end-state rows). */
export type Fleet = Record<string, string>;

export interface ServerEnd {
  role: string;
  host: string | null;
  status: string;
  vm_state: string | null;
  task_state: string | null;
  power_state: number | null;
  locked: boolean;
  locked_reason: string | null;
  /** Nova's evacuation migrations of this server: status source→dest, oldest first. */
  evacuations: string[];
}

export interface ServiceEnd {
  status: string;
  state: string;
  forced_down: boolean;
  disabled_reason: string | null;
}

export interface HostFlags {
  name: string;
  reserved: unknown;
  on_maintenance: unknown;
}

export interface RunResult {
  side: string;
  method: Method;
  /** POST → first GET showing a final status. */
  seconds: number;
  /** The POST alone (masakari-api's random pause is in it). */
  postSeconds: number;
  timedOut: boolean;
  /** Server id → role, for reading the raw notification. */
  fleet: Fleet;
  notification: Record<string, unknown>;
  vmoves: unknown;
  hosts: HostFlags[];
  servers: ServerEnd[];
  service: ServiceEnd;
  /** `uptime` load averages (1, 5, 15 min) at the POST. */
  load: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tag = () => randomBytes(3).toString('hex');

/** Boots the failed host's servers and brings each to its starting state. */
export async function bootFleet(admin: NovaCall, flavor: string, host: string): Promise<Fleet> {
  const t = tag();
  const roles = ['active-0', 'active-1', 'shutoff', 'error', 'owner-locked'];
  const ids = await Promise.all(roles.map((role) => bootServer(admin, flavor, { name: `sbs-${t}-${role}`, host })));
  const fleet: Fleet = Object.fromEntries(ids.map((id, i) => [id, roles[i] as string]));
  const byRole = (role: string) => ids[roles.indexOf(role)] as string;
  await waitServers(admin, ids, 'ACTIVE');
  await serverAction(admin, byRole('shutoff'), { 'os-stop': null });
  await serverAction(admin, byRole('error'), { 'os-resetState': { state: 'error' } });
  await serverAction(admin, byRole('owner-locked'), { lock: { locked_reason: OWNER_LOCK_REASON } });
  await waitServers(admin, [byRole('shutoff')], 'SHUTOFF');
  await waitServers(admin, [byRole('error')], 'ERROR');
  return fleet;
}

async function computeService(admin: NovaCall, host: string): Promise<ServiceEnd & { id: string }> {
  const r = await admin('GET', `/os-services?binary=nova-compute&host=${host}`);
  const svc = (r.body as { services?: (ServiceEnd & { id: string })[] }).services?.[0];
  if (!svc) throw new Error(`no nova-compute service on ${host}: HTTP ${r.status}`);
  return svc;
}

async function failHost(cloud: OpenStackCloud, host: string): Promise<void> {
  await cloud.killCompute(host);
  const deadline = Date.now() + 120_000;
  while ((await computeService(cloud.keystone.nova, host)).state !== 'down') {
    if (Date.now() > deadline) throw new Error(`Nova still reports ${host} up 120 s after its compute died`);
    await sleep(1_000);
  }
}

async function evacuations(admin: NovaCall, id: string): Promise<string[]> {
  const r = await admin('GET', `/os-migrations?instance_uuid=${id}&migration_type=evacuation`, undefined, '2.80');
  const list = (
    r.body as { migrations?: { id: number; status: string; source_compute: string; dest_compute: string }[] }
  ).migrations;
  return (list ?? []).sort((a, b) => a.id - b.id).map((m) => `${m.status} ${m.source_compute}→${m.dest_compute}`);
}

async function readEnd(
  api: MasakariCall,
  admin: NovaCall,
  id: string,
  segment: string,
  fleet: Fleet,
): Promise<Pick<RunResult, 'notification' | 'vmoves' | 'hosts' | 'servers' | 'service'>> {
  const n = await api('GET', `/notifications/${id}`, undefined, '1.3');
  const v = await api('GET', `/notifications/${id}/vmoves`, undefined, '1.3');
  const h = await api('GET', `/segments/${segment}/hosts`, undefined, '1.3');
  const servers: ServerEnd[] = [];
  for (const [sid, role] of Object.entries(fleet)) {
    const s = await getServer(admin, sid);
    servers.push({
      role,
      host: s['OS-EXT-SRV-ATTR:host'] ?? null,
      status: s.status,
      vm_state: s['OS-EXT-STS:vm_state'] ?? null,
      task_state: s['OS-EXT-STS:task_state'] ?? null,
      power_state: s['OS-EXT-STS:power_state'] ?? null,
      locked: Boolean(s.locked),
      locked_reason: s.locked_reason ?? null,
      evacuations: await evacuations(admin, sid),
    });
  }
  const { status, state, forced_down, disabled_reason } = await computeService(admin, FAILED_HOST);
  return {
    notification: (n.body as { notification: Record<string, unknown> }).notification,
    vmoves: v.status === 200 ? (v.body as { vmoves: unknown[] }).vmoves : `${v.status} ${JSON.stringify(v.body)}`,
    hosts: ((h.body as { hosts?: HostFlags[] }).hosts ?? [])
      .map(({ name, reserved, on_maintenance }) => ({ name, reserved, on_maintenance }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    servers,
    service: { status, state, forced_down, disabled_reason },
  };
}

/** Puts the cloud back: the servers deleted, the failed compute running and its service enabled. */
async function restore(cloud: OpenStackCloud, ids: string[]): Promise<void> {
  const admin = cloud.keystone.nova;
  await deleteServers(admin, ids).catch(() => undefined);
  if (!cloud.computeRunning(FAILED_HOST)) await cloud.startCompute(FAILED_HOST);
  const svc = await computeService(admin, FAILED_HOST);
  await admin('PUT', `/os-services/${svc.id}`, { status: 'enabled', forced_down: false }, '2.53');
  // the reserved host: Masakari's reserved_host flow enables it; start every run with all three enabled
  for (const host of cloud.computes) {
    const s = await computeService(admin, host);
    if (s.status !== 'enabled') await admin('PUT', `/os-services/${s.id}`, { status: 'enabled' }, '2.53');
  }
}

export async function runScenario(
  cloud: OpenStackCloud,
  side: RunningSide,
  method: Method,
  flavor: string,
  load: () => number[],
  timeoutMs: number,
): Promise<RunResult> {
  const admin = cloud.keystone.nova;
  const api = masakariCaller(side.url, () => cloud.keystone.token());
  await cloud.setMasakariEndpoint(`${side.url}/v1`);
  const segment = await createSegment(api, `sbs-${method}-${tag()}`, method, [
    { name: 'cpu1' },
    { name: 'cpu2' },
    { name: RESERVED_HOST, reserved: method !== 'auto' },
  ]);
  let fleet: Fleet = {};
  try {
    fleet = await bootFleet(admin, flavor, FAILED_HOST);
    await failHost(cloud, FAILED_HOST);
    // the token is cached before the clock starts: a running client holds one already
    await cloud.keystone.token();
    const loadAtPost = load();
    const t0 = performance.now();
    const id = await notifyHostDown(api, FAILED_HOST);
    const postSeconds = (performance.now() - t0) / 1000;
    const final = await waitFinal(api, id, timeoutMs);
    const seconds = (final.at - t0) / 1000;
    const end = await readEnd(api, admin, id, segment, fleet);
    return {
      side: side.name,
      method,
      seconds,
      postSeconds,
      timedOut: final.timedOut,
      fleet,
      ...end,
      load: loadAtPost,
    };
  } finally {
    await restore(cloud, Object.keys(fleet));
  }
}
