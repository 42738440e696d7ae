// The Nova side of test/cluster/nhc.test.ts: the Nova simulator, or with MASAKARI_TEST_NHC_NOVA=openstack
// the mini OpenStack of `make openstack` (tools/openstack-cloud: Keystone, Placement and Nova with fake
// computes; test/openstack/support/cloud.ts, a private cloud unless MASAKARI_TEST_OPENSTACK_CONTROL
// names a running one, which adds its bring-up of a minute or more).
// Either way one compute host stands for the cluster's node, and servers run on it.
import { createNovaClient } from '../../../src/openstack/index.ts';
import type { HttpNovaClient, PasswordCredentials } from '../../../src/openstack/index.ts';
import { startOpenStackCloud } from '../../../tools/openstack-cloud/cloud.ts';
import { startCloudControl } from '../../../tools/openstack-cloud/control.ts';
import {
  bootServer,
  deleteServers,
  ensureFlavor,
  getServer,
  waitServers,
} from '../../../tools/openstack-cloud/servers.ts';
import type { NovaCall } from '../../../tools/openstack-cloud/servers.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import { useCloud } from '../../openstack/support/cloud.ts';

export interface Computes {
  /** What the servers run on: "mini OpenStack (Nova 34)" or "Nova simulator". */
  kind: string;
  /** The compute host that stands for the node, and the others (evacuation targets). */
  failed: string;
  others: string[];
  nova: HttpNovaClient;
  /** The host dies: its nova-compute is killed (or marked down). */
  fail(): Promise<void>;
  /** Where each server runs now (server name → compute host). */
  placement(): Promise<Map<string, string>>;
  /** The compute service of the failed host as Nova lists it. */
  service(): Promise<{ status: string; state: string; forced_down: boolean }>;
  /** The repaired host's nova-compute runs again (once the operator has cleared forced_down). */
  restartCompute(): Promise<void>;
  stop(): Promise<void>;
}

const SERVERS = ['vm-1', 'vm-2'];

export async function startComputes(): Promise<Computes> {
  return process.env.MASAKARI_TEST_NHC_NOVA === 'openstack' ? miniCloudComputes() : simulatorComputes();
}

async function simulatorComputes(): Promise<Computes> {
  const [failed, ...others] = ['cpu1', 'cpu2'];
  const sim = await startSimulator({
    hosts: [failed!, ...others],
    servers: SERVERS.map((name) => ({ name, host: failed!, metadata: { HA_Enabled: 'True' } })),
  });
  const nova = createNovaClient(sim.clientCredentials, { timeoutMs: 5_000, maxRetries: 1 });
  return {
    kind: 'Nova simulator',
    failed: failed!,
    others,
    nova,
    fail: async () => void sim.state.failHost(failed!),
    placement: async () => new Map([...sim.state.servers.values()].map((s) => [s.name, s.host ?? ''])),
    service: async () => serviceOf(nova, failed!),
    restartCompute: async () => void sim.state.recoverHost(failed!),
    stop: async () => {
      await nova.session.close();
      sim.state.clearTimers();
      await sim.stop();
    },
  };
}

/**
 * Boots a server on the host; a NoValidHost right after the cloud's bring-up (the compute has not
 * reported its inventory to Placement yet) is retried a few times.
 */
async function bootOn(admin: NovaCall, flavor: string, name: string, host: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const id = await bootServer(admin, flavor, { name, host });
    try {
      await waitServers(admin, [id], 'ACTIVE');
      return id;
    } catch (err) {
      if (attempt >= 5 || !/No valid host/i.test(String(err))) throw err;
      await deleteServers(admin, [id]);
      await new Promise((r) => setTimeout(r, 5_000));
    }
  }
}

async function miniCloudComputes(): Promise<Computes> {
  // A private cloud (unless the runner's is named), stopped with the computes: a cloud left to
  // useCloud's beforeExit would keep this process alive.
  let own: { stop(): Promise<void> } | undefined;
  if (!process.env.MASAKARI_TEST_OPENSTACK_CONTROL) {
    const started = await startOpenStackCloud();
    const control = await startCloudControl(started);
    own = { stop: () => control.close().then(() => started.stop()) };
    process.env.MASAKARI_TEST_OPENSTACK_CONTROL = control.url;
  }
  try {
    return await onMiniCloud(own);
  } catch (err) {
    await own?.stop();
    throw err;
  }
}

async function onMiniCloud(own: { stop(): Promise<void> } | undefined): Promise<Computes> {
  const cloud = await useCloud();
  await cloud.reset();
  const [failed, ...others] = cloud.desc.computes;
  const flavor = await ensureFlavor(cloud.admin);
  const ids: string[] = [];
  for (const name of SERVERS) ids.push(await bootOn(cloud.admin, flavor, name, failed!));
  const env = cloud.desc.adminEnv;
  const creds: PasswordCredentials = {
    auth_url: env.OS_AUTH_URL!,
    username: env.OS_USERNAME!,
    password: env.OS_PASSWORD!,
    project_name: env.OS_PROJECT_NAME ?? null,
    user_domain_name: env.OS_USER_DOMAIN_NAME ?? null,
    project_domain_name: env.OS_PROJECT_DOMAIN_NAME ?? null,
    region_name: env.OS_REGION_NAME ?? null,
    interface: env.OS_INTERFACE ?? null,
  };
  const nova = createNovaClient(creds, { timeoutMs: 30_000, maxRetries: 2 });
  return {
    kind: 'mini OpenStack (real Nova)',
    failed: failed!,
    others,
    nova,
    fail: () => cloud.killCompute(failed!),
    placement: async () =>
      new Map(
        await Promise.all(
          ids.map(async (id) => {
            const s = await getServer(cloud.admin, id);
            return [s.name, s['OS-EXT-SRV-ATTR:host'] ?? ''] as [string, string];
          }),
        ),
      ),
    service: async () => serviceOf(nova, failed!),
    restartCompute: () => cloud.startCompute(failed!),
    stop: async () => {
      await nova.session.close();
      if (own) await own.stop();
      else await cloud.reset().catch(() => undefined);
    },
  };
}

async function serviceOf(nova: HttpNovaClient, host: string) {
  const [svc] = (await nova.listServices({ binary: 'nova-compute', host })).filter((s) => s.host === host);
  if (!svc) throw new Error(`Nova lists no nova-compute on ${host}`);
  return { status: svc.status, state: svc.state, forced_down: svc.forced_down };
}
