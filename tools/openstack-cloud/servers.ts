// Test servers on the mini cloud, through Nova's API: one flavor, servers
// pinned to a host (microversion 2.74 "host", admin only), booted without
// networks (2.37 "networks": "none") from the Glance stand-in's image.
import { IMAGE_ID } from './standins.ts';
import type { ApiResult } from './keystone-seed.ts';

export const FLAVOR_NAME = 'm1.fake';

/** A Nova caller: the harness admin (KeystoneAdmin.nova) or a member with its own token. */
export type NovaCall = (method: string, path: string, body?: unknown, microversion?: string) => Promise<ApiResult>;

export interface NovaServer {
  id: string;
  name: string;
  status: string;
  'OS-EXT-SRV-ATTR:host'?: string | null;
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-STS:vm_state'?: string;
  'OS-EXT-STS:power_state'?: number;
  locked?: boolean;
  locked_reason?: string | null;
  metadata?: Record<string, string>;
  tenant_id?: string;
  fault?: { message: string };
}

function expect(what: string, r: ApiResult, ...statuses: number[]): ApiResult {
  if (!statuses.includes(r.status)) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The test flavor (1 vCPU, 128 MiB, 1 GiB disk: a non-zero disk avoids the zero-disk policy); created once. */
export async function ensureFlavor(admin: NovaCall): Promise<string> {
  const list = expect('flavors', await admin('GET', '/flavors'), 200).body as {
    flavors: { id: string; name: string }[];
  };
  const found = list.flavors.find((f) => f.name === FLAVOR_NAME);
  if (found) return found.id;
  const r = expect(
    'create flavor',
    await admin('POST', '/flavors', { flavor: { name: FLAVOR_NAME, vcpus: 1, ram: 128, disk: 1 } }),
    200,
  );
  return (r.body as { flavor: { id: string } }).flavor.id;
}

export interface BootRequest {
  name: string;
  host: string;
  haEnabled?: boolean;
  /** Default IMAGE_ID. */
  imageId?: string;
  /** Metadata besides HA_Enabled. */
  metadata?: Record<string, string>;
}

/** Boots a server on host; `caller` owns it (admin by default). Returns its id once Nova accepted it. */
export async function bootServer(caller: NovaCall, flavorId: string, req: BootRequest): Promise<string> {
  const body = {
    server: {
      name: req.name,
      imageRef: req.imageId ?? IMAGE_ID,
      flavorRef: flavorId,
      networks: 'none',
      host: req.host,
      metadata: { ...(req.haEnabled === false ? {} : { HA_Enabled: 'True' }), ...req.metadata },
    },
  };
  const r = expect(`boot ${req.name}`, await caller('POST', '/servers', body, '2.74'), 202);
  return (r.body as { server: { id: string } }).server.id;
}

export async function getServer(admin: NovaCall, id: string): Promise<NovaServer> {
  const r = expect(`server ${id}`, await admin('GET', `/servers/${id}`), 200);
  return (r.body as { server: NovaServer }).server;
}

/** Polls until every server reaches status with no task (ERROR fails fast unless wanted). */
export async function waitServers(
  admin: NovaCall,
  ids: string[],
  status: string,
  timeoutMs = 180_000,
): Promise<NovaServer[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const servers = await Promise.all(ids.map((id) => getServer(admin, id)));
    const bad = servers.find((s) => s.status === 'ERROR' && status !== 'ERROR');
    if (bad) throw new Error(`server ${bad.name} went to ERROR: ${bad.fault?.message ?? 'no fault'}`);
    if (servers.every((s) => s.status === status && !s['OS-EXT-STS:task_state'])) return servers;
    if (Date.now() > deadline) {
      throw new Error(
        `servers not ${status} after ${timeoutMs} ms: ${servers.map((s) => `${s.name}=${s.status}/${s['OS-EXT-STS:task_state']}`).join(', ')}`,
      );
    }
    await sleep(1_000);
  }
}

export async function serverAction(
  caller: NovaCall,
  id: string,
  action: Record<string, unknown>,
  microversion = '2.73',
): Promise<void> {
  expect(
    `action ${Object.keys(action)[0]} on ${id}`,
    await caller('POST', `/servers/${id}/action`, action, microversion),
    202,
  );
}

/** Deletes servers and waits until Nova no longer lists them. */
export async function deleteServers(admin: NovaCall, ids: string[], timeoutMs = 120_000): Promise<void> {
  for (const id of ids) {
    const r = await admin('DELETE', `/servers/${id}`);
    if (r.status === 409) {
      // locked (by its owner or by a recovery): an admin may unlock
      await admin('POST', `/servers/${id}/action`, { unlock: null });
      await admin('DELETE', `/servers/${id}`);
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await Promise.all(ids.map((id) => admin('GET', `/servers/${id}`)))).filter((r) => r.status === 200);
    if (!left.length) return;
    if (Date.now() > deadline) throw new Error(`${left.length} servers still there after delete`);
    await sleep(1_000);
  }
}
