// The Nova side of test/cluster/nhc.test.ts: the Nova simulator, or with MASAKARI_TEST_NHC_NOVA=openstack
// the mini OpenStack of `make openstack` (src/openstack-cloud: Keystone, Placement and Nova with fake
// computes; test/openstack/support/cloud.ts, a private cloud unless MASAKARI_TEST_OPENSTACK_CONTROL
// names a running one, which adds its bring-up of a minute or more).
// Either way one compute host stands for the cluster's node, and servers run on it.
import { createNovaClient } from '../../../src/openstack/index.ts';
import type { HttpNovaClient, PasswordCredentials } from '../../../src/openstack/index.ts';
import { bootServer, ensureFlavor, getServer, waitServers } from '../../../src/openstack-cloud/servers.ts';
import { startSimulator } from '../../../src/simulator/server.ts';
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
  /** The repaired host back: nova-compute running, the service up and enabled again. */
  recover(): Promise<void>;
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
    recover: async () => void sim.state.recoverHost(failed!, { forcedDown: false, enable: true }),
    stop: async () => {
      await nova.session.close();
      sim.state.clearTimers();
      await sim.stop();
    },
  };
}

async function miniCloudComputes(): Promise<Computes> {
  const cloud = await useCloud();
  await cloud.reset();
  const [failed, ...others] = cloud.desc.computes;
  const flavor = await ensureFlavor(cloud.admin);
  const ids = await Promise.all(SERVERS.map((name) => bootServer(cloud.admin, flavor, { name, host: failed! })));
  await waitServers(cloud.admin, ids, 'ACTIVE');
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
  const service = async () => {
    const r = await cloud.admin('GET', `/os-services?binary=nova-compute&host=${failed}`);
    const svc = (r.body as { services: { id: string; state: string }[] }).services[0];
    if (!svc) throw new Error(`no nova-compute service on ${failed}`);
    return svc;
  };
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
    recover: async () => {
      // the operator's steps once the host is repaired (docs/medik8s.md, "Delete"): forced_down
      // first, or Nova keeps reporting the restarted service down
      const { id } = await service();
      const put = async (body: object) => {
        const r = await cloud.admin('PUT', `/os-services/${id}`, body, '2.53');
        if (r.status !== 200)
          throw new Error(`PUT os-services ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`);
      };
      await put({ forced_down: false });
      await cloud.startCompute(failed!);
      await put({ status: 'enabled' });
    },
    stop: async () => {
      await nova.session.close();
      await cloud.reset().catch(() => undefined);
    },
  };
}
