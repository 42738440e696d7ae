// BMC fencing in every chaos run: each failed host gets spec.fencing on the
// simulator's fake Redfish BMC (one per run, in this process, linked to the
// simulator process: a power-off kills that host's nova-compute), and the
// BMC misbehaves by the seed: 500s, requests it never answers (the engine's
// per-call timeout), a power state that still says On for a while after the
// power-off, credentials refused for a few seconds. All of it ends by itself,
// so every recovery must still finish, and the invariant is that nothing is
// evacuated before proof: at the moment the BMC first reports a host Off (and
// at each power-off it receives), none of that host's servers has been
// evacuated, and every evacuated host was powered off and reported Off.
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { loadKubeConfig } from '../../../src/k8s/kubeconfig.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { HaHost, HostFencing, Notification } from '../../../src/model/types.ts';
import { startFakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import type { FakeBmcRequest, FakeRedfish } from '../../../tools/simulator/redfish-bmc.ts';
import type { SimServer, SimulatorProcess } from '../../../tools/simulator/process.ts';
import type { Kube } from './kube.ts';
import { seededRandom } from './schedule.ts';
import type { Topology } from './topology.ts';

const SECRET = 'chaos-bmc-credentials';
const PASSWORD = 'chaos-bmc-password';

export interface ChaosBmc {
  /** The seed's BMC faults, for the run's log. */
  describe: string;
  /** Violations of "nothing evacuated before proof" (after the run's notifications are terminal). */
  check(): Promise<string[]>;
  stop(): Promise<void>;
}

/** The BMC faults of a seed: each is on or off, sized by the seed. */
export function bmcFaultsFor(seed: number, hosts: readonly string[]) {
  const random = seededRandom(seed ^ 0x5eed_b3c);
  const pick = (n: number) => Math.floor(random() * n);
  return {
    errors: random() < 0.5 ? 1 + pick(3) : 0,
    hangs: random() < 0.4 ? 1 : 0,
    lie: random() < 0.5 ? { host: hosts[pick(hosts.length)] ?? '', reads: 2 + pick(7) } : undefined,
    refuseMs: random() < 0.4 ? 2_000 + pick(4_000) : 0,
  };
}

const serverHost = (s: SimServer): string => s.name.replace(/-vm-\d+$/, '');

export async function armBmc(
  seed: number,
  t: Topology,
  ctx: { kube: Kube; namespace: string; sim: SimulatorProcess; log: (line: string) => void },
): Promise<ChaosBmc> {
  const bmc: FakeRedfish = await startFakeRedfish({ systems: t.failed, username: 'chaos', password: PASSWORD });
  const early: string[] = [];
  const reportedOff = new Set<string>();
  // A power-off kills that host's nova-compute in the simulator process, as a power cut would.
  bmc.onPower((id, power) => {
    if (power === 'Off') void ctx.sim.call('POST', `/hosts/${id}/fail`).catch(() => undefined);
  });
  /** Evacuations so far of the servers created on `host`. */
  const evacuated = async (host: string): Promise<string[]> => {
    const state = await ctx.sim.call<{ servers: SimServer[] }>('GET', '/state');
    const counters = await ctx.sim.call<{ actions: Record<string, Record<string, number>> }>('GET', '/counters');
    const evacuations = counters.actions.evacuate ?? {};
    return state.servers.filter((s) => serverHost(s) === host && (evacuations[s.id] ?? 0) > 0).map((s) => s.name);
  };
  bmc.beforeAnswer = async (r: FakeBmcRequest) => {
    const host = /\/Systems\/([^/]+)/.exec(r.path)?.[1];
    if (!host) return;
    const first = r.power === 'Off' && !reportedOff.has(host);
    if (!first && r.resetType !== 'ForceOff') return;
    if (first) reportedOff.add(host);
    const moved = await evacuated(host).catch(() => []);
    if (moved.length) {
      const when = first ? 'the BMC first reported it Off' : 'it received a power-off';
      early.push(`servers of ${host} were evacuated before ${when}: ${moved.slice(0, 5).join(', ')}`);
    }
  };

  const kube = createKubeClient(loadKubeConfig({ path: ctx.kube.kubeconfigPath }));
  const faults = bmcFaultsFor(seed, t.failed);
  try {
    await kube
      .create(RESOURCES.secrets, ctx.namespace, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SECRET },
        stringData: { username: 'chaos', password: PASSWORD },
      })
      .catch((e: unknown) => {
        if ((e as { code?: number }).code !== 409) throw e;
      });
    const hosts = await kube.list<HaHost>(RESOURCES.hosts, ctx.namespace);
    for (const name of t.failed) {
      const h = hosts.items.find((x) => x.spec.name === name);
      if (!h?.metadata.name) throw new Error(`no HaHost ${name}`);
      const fencing: HostFencing = {
        driver: 'redfish',
        address: bmc.url,
        systemId: name,
        credentialsSecretRef: { name: SECRET },
        timeoutSeconds: 2,
        powerOffTimeoutSeconds: 5,
      };
      await kube.mergePatch(RESOURCES.hosts, ctx.namespace, h.metadata.name, { spec: { fencing } });
    }
  } finally {
    await kube.close();
  }
  if (faults.errors) bmc.fault({ kind: 500, count: faults.errors });
  if (faults.hangs) bmc.fault({ kind: 'hang', count: faults.hangs });
  if (faults.lie) bmc.lie(faults.lie.host, faults.lie.reads, 'On');
  let restore: NodeJS.Timeout | undefined;
  if (faults.refuseMs) {
    bmc.password = 'not-yet';
    restore = setTimeout(() => (bmc.password = PASSWORD), faults.refuseMs);
  }
  const describe =
    [
      faults.errors && `${faults.errors}×500`,
      faults.hangs && `${faults.hangs} unanswered`,
      faults.lie && `${faults.lie.host} lies On for ${faults.lie.reads} reads`,
      faults.refuseMs && `credentials refused for ${(faults.refuseMs / 1000).toFixed(1)} s`,
    ]
      .filter(Boolean)
      .join(', ') || 'no BMC fault';
  ctx.log(`  BMC: ${describe}`);

  return {
    describe,
    async check() {
      const out = [...early];
      const reader = createKubeClient(loadKubeConfig({ path: ctx.kube.kubeconfigPath }));
      try {
        const notifications = (await reader.list<Notification>(RESOURCES.notifications, ctx.namespace)).items;
        for (const host of t.failed) {
          const moved = await evacuated(host);
          if (moved.length && !reportedOff.has(host)) {
            out.push(
              `servers of ${host} were evacuated, but its BMC never reported it Off: ${moved.slice(0, 5).join(', ')}`,
            );
          }
          if (moved.length && !bmc.systems.get(host)?.resets.ForceOff) {
            out.push(`servers of ${host} were evacuated, but its BMC never received a power-off`);
          }
          const n = notifications.find((x) => x.spec.hostname === host);
          if (n?.status?.phase === 'finished' && n.status.fencing?.powerState !== 'Off') {
            out.push(`notification ${n.status.uuid} (${host}) finished without status.fencing`);
          }
        }
      } finally {
        await reader.close();
      }
      return out.map((v) => `BMC (${describe}): ${v}`);
    },
    async stop() {
      if (restore) clearTimeout(restore);
      bmc.clearFaults();
      await bmc.stop();
    },
  };
}
