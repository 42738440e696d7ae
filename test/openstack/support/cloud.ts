// The mini OpenStack for the test files in test/openstack. Under the test
// runner (`scripts/run-tests.mjs openstack`) one cloud serves the whole suite
// and MASAKARI_TEST_OPENSTACK_CONTROL names its control API
// (tools/openstack-cloud/control.ts). A file run on its own starts a private
// cloud that stops when the process exits.
import { startOpenStackCloud } from '../../../tools/openstack-cloud/cloud.ts';
import { startCloudControl, type CloudDescription } from '../../../tools/openstack-cloud/control.ts';
import { novaCaller, passwordToken } from '../../../tools/openstack-cloud/keystone-seed.ts';
import type { ResetReport } from '../../../tools/openstack-cloud/reset.ts';
import type { BmcDescription, BmcKind, PowerEvent } from '../../../tools/openstack-cloud/bmc/emulated-bmcs.ts';
import type { NovaExchange } from '../../../tools/openstack-cloud/recorder.ts';
import type { NovaCall } from '../../../tools/openstack-cloud/servers.ts';

export interface TestCloud {
  desc: CloudDescription;
  /** Nova as the cloud admin (project admin). */
  admin: NovaCall;
  /** Nova as user member of project demo. */
  member: NovaCall;
  /** A token of the cloud admin (project admin), for our facade; renewed every 30 min. */
  adminToken(): Promise<string>;
  /** Back to the just-started state: computes up and enabled, no servers, no aggregates. */
  reset(): Promise<ResetReport>;
  killCompute(host: string): Promise<void>;
  /** Starts the host's nova-compute; unless waitUp is false, resolves once Nova lists it up. */
  startCompute(host: string, waitUp?: boolean): Promise<void>;
  setMasakariEndpoint(url: string): Promise<void>;
  /** Exchanges through the nova-api proxy after seq `since`, and the last seq. */
  exchanges(since: number): Promise<{ last: number; exchanges: NovaExchange[] }>;
  /** While down, Nova cannot be reached through the catalog (the proxy closes every connection). */
  setNovaDown(down: boolean): Promise<void>;
  /** The emulated BMCs (started on first use; tools/openstack-cloud/bmc/). */
  bmcs(): Promise<BmcDescription>;
  /** Power changes at the emulated BMCs after seq `since`, with their times. */
  powerEvents(since: number): Promise<{ last: number; events: PowerEvent[] }>;
  /** Stops (unreachable) or starts a BMC: the one Redfish emulator, or a host's IPMI BMC. */
  bmcLife(kind: BmcKind, action: 'stop' | 'start', host?: string): Promise<BmcDescription>;
  /** A power request at a host's BMC, through its protocol; resolves once the BMC reads the new state. */
  bmcPower(kind: BmcKind, host: string, to: 'on' | 'off'): Promise<void>;
}

let shared: Promise<TestCloud> | undefined;

async function controlUrl(): Promise<string> {
  const given = process.env.MASAKARI_TEST_OPENSTACK_CONTROL;
  if (given) return given;
  const cloud = await startOpenStackCloud();
  const control = await startCloudControl(cloud);
  let stopping = false;
  process.on('beforeExit', () => {
    if (stopping) return;
    stopping = true;
    void control.close().then(() => cloud.stop());
  });
  return control.url;
}

async function call(url: string, method = 'GET', body?: unknown): Promise<unknown> {
  const r = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(300_000),
  });
  const parsed = (await r.json()) as unknown;
  if (r.status !== 200) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

export function useCloud(): Promise<TestCloud> {
  shared ??= (async () => {
    const url = await controlUrl();
    const desc = (await call(`${url}/cloud`)) as CloudDescription;
    const env = desc.adminEnv;
    const keystone = desc.authUrl.replace(/\/v3$/, '');
    let token: { value: Promise<string>; at: number } | undefined;
    return {
      adminToken: () => {
        if (!token || Date.now() - token.at > 30 * 60_000) {
          token = {
            value: passwordToken(keystone, env.OS_USERNAME ?? 'admin', env.OS_PASSWORD ?? '', 'admin'),
            at: Date.now(),
          };
        }
        return token.value;
      },
      reset: async () => (await call(`${url}/reset`, 'POST')) as ResetReport,
      desc,
      admin: novaCaller(keystone, desc.novaUrl, env.OS_USERNAME ?? 'admin', env.OS_PASSWORD ?? '', 'admin'),
      member: novaCaller(keystone, desc.novaUrl, 'member', desc.memberEnv.OS_PASSWORD ?? '', 'demo'),
      killCompute: async (host) => void (await call(`${url}/computes/${host}/kill`, 'POST')),
      startCompute: async (host, waitUp = true) =>
        void (await call(`${url}/computes/${host}/start${waitUp ? '' : '?wait=false'}`, 'POST')),
      setMasakariEndpoint: async (u) => void (await call(`${url}/endpoints/instance-ha`, 'PUT', { url: u })),
      exchanges: async (since) =>
        (await call(`${url}/nova/exchanges?since=${since}`)) as { last: number; exchanges: NovaExchange[] },
      setNovaDown: async (down) => void (await call(`${url}/nova/down`, 'PUT', { down })),
      bmcs: async () => (await call(`${url}/bmcs`, 'POST')) as BmcDescription,
      powerEvents: async (since) =>
        (await call(`${url}/bmcs/events?since=${since}`)) as { last: number; events: PowerEvent[] },
      bmcLife: async (kind, action, host) =>
        (await call(`${url}/bmcs/${kind}${host ? `/${host}` : ''}/${action}`, 'POST')) as BmcDescription,
      bmcPower: async (kind, host, to) => void (await call(`${url}/bmcs/${kind}/${host}/power/${to}`, 'POST')),
    };
  })();
  return shared;
}
