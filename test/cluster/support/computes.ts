// The Nova side of test/cluster/remediation-nhc.test.ts: the mini OpenStack of `make openstack` (tools/openstack-cloud:
// Keystone, Placement and real Nova with fake computes; test/openstack/support/cloud.ts, a private cloud
// unless MASAKARI_TEST_OPENSTACK_CONTROL names a running one), or with MASAKARI_TEST_NHC_NOVA=simulator
// the Nova simulator (faster, but it does not refuse a force-up while evacuation records remain).
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
  /**
   * The repaired host's nova-compute runs again, as on a host brought back after its repair, and has
   * done what it does at start: on real Nova, init_host destroys the instances evacuated away from
   * it and marks their 'done' evacuation migrations 'completed' (nova/compute/manager.py
   * _destroy_evacuated_instances). Until then Nova refuses to clear forced_down (nova/api/openstack/
   * compute/services.py: "Unable to force up host ... as `done` evacuation migration records remain
   * associated with the host"), so this resolves only once none is left.
   */
  restartCompute(): Promise<void>;
  stop(): Promise<void>;
}

const SERVERS = ['vm-1', 'vm-2'];

export async function startComputes(): Promise<Computes> {
  return process.env.MASAKARI_TEST_NHC_NOVA === 'simulator' ? simulatorComputes() : miniCloudComputes();
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
    restartCompute: async () => {
      // forced down, it never reads up: what shows it has started is its records cleaned up
      await cloud.startCompute(failed!, false);
      const deadline = Date.now() + 180_000;
      for (;;) {
        const r = await cloud.admin('GET', `/os-migrations?source_compute=${failed}&migration_type=evacuation`);
        const left = ((r.body as { migrations?: { status: string }[] }).migrations ?? []).filter(
          (m) => m.status === 'done' || m.status === 'accepted' || m.status === 'pre-migrating',
        );
        if (r.status === 200 && left.length === 0) return;
        if (Date.now() > deadline) {
          throw new Error(`${failed}'s nova-compute left evacuation records uncleaned: ${JSON.stringify(r.body)}`);
        }
        await new Promise((res) => setTimeout(res, 1_000));
      }
    },
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
