// Puts a running mini cloud back into its just-started state, so each
// scenario on a shared cloud starts clean whatever the previous one left
// behind (a failed assertion skips its own cleanup): every nova-compute
// running and up, every compute service enabled and not forced down, no
// servers, no host aggregates. Keystone, the flavor and the catalog stay.
import type { ApiResult } from './keystone-seed.ts';
import { deleteServers, type NovaCall } from './servers.ts';

export interface ResettableCloud {
  computes: string[];
  computeRunning(host: string): boolean;
  startCompute(host: string): Promise<void>;
}

function expect(what: string, r: ApiResult, ...statuses: number[]): ApiResult {
  if (!statuses.includes(r.status)) throw new Error(`reset: ${what}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

/** What reset found and undid, for the log. */
export interface ResetReport {
  computesStarted: string[];
  servicesEnabled: string[];
  serversDeleted: number;
  aggregatesDeleted: number;
  /** What the control API undid at the emulated BMCs first (control.ts), when they run. */
  bmcsReset?: string[];
}

export async function resetCloud(cloud: ResettableCloud, admin: NovaCall): Promise<ResetReport> {
  // computes first: deleting a server whose host is down is a local delete that leaves the
  // hypervisor's copy behind, which the compute would clean up only at its next start anyway
  const computesStarted = cloud.computes.filter((h) => !cloud.computeRunning(h));
  await Promise.all(computesStarted.map((h) => cloud.startCompute(h)));

  const list = expect('list servers', await admin('GET', '/servers?all_tenants=1&deleted=false&limit=1000'), 200)
    .body as { servers: { id: string }[] };
  const ids = list.servers.map((s) => s.id);
  if (ids.length) await deleteServers(admin, ids);

  const aggs = expect('list aggregates', await admin('GET', '/os-aggregates'), 200).body as {
    aggregates: { id: number; hosts: string[] }[];
  };
  for (const a of aggs.aggregates) {
    for (const h of a.hosts) {
      expect(
        `remove ${h} from aggregate ${a.id}`,
        await admin('POST', `/os-aggregates/${a.id}/action`, { remove_host: { host: h } }),
        200,
      );
    }
    expect(`delete aggregate ${a.id}`, await admin('DELETE', `/os-aggregates/${a.id}`), 200);
  }

  const services = expect(
    'list services',
    await admin('GET', '/os-services?binary=nova-compute', undefined, '2.53'),
    200,
  ).body as { services: { id: string; host: string; status: string; forced_down: boolean }[] };
  const servicesEnabled: string[] = [];
  for (const s of services.services) {
    if (s.status === 'enabled' && !s.forced_down) continue;
    expect(
      `enable nova-compute on ${s.host}`,
      await admin('PUT', `/os-services/${s.id}`, { status: 'enabled', forced_down: false }, '2.53'),
      200,
    );
    servicesEnabled.push(s.host);
  }
  return { computesStarted, servicesEnabled, serversDeleted: ids.length, aggregatesDeleted: aggs.aggregates.length };
}
