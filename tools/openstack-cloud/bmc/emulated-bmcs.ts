// Emulated BMCs for the mini cloud's compute hosts, two per host: a Redfish
// ComputerSystem in one sushy-emulator (redfish.ts) and an ipmi_sim of its
// own (ipmi.ts). Both are linked to the host's power (power-link.ts): a power
// off at either BMC kills that host's nova-compute, a power on starts it.
// Started on demand (the control API's POST /bmcs), so a cloud whose tests
// fence nothing never installs or runs them.
import { randomBytes } from 'node:crypto';
import { freePort } from '../../controlplane/ports.ts';
import type { ManagedProcess } from '../../controlplane/processes.ts';
import { ensureOpenIpmi, ensureSushyVenv } from '../install.ts';
import { prepareIpmiBmc, type IpmiBmc } from './ipmi.ts';
import { startPowerLink, type BmcKind, type LinkedCloud, type PowerEvent } from './power-link.ts';
import { prepareRedfishEmulator, systemId } from './redfish.ts';

export type { BmcKind, PowerEvent };

/** What a test needs to point HaHost spec.fencing at a host's BMCs. */
export interface BmcDescription {
  /** The one user of every emulated BMC (Redfish basic auth, IPMI user 2, admin privilege). */
  username: string;
  password: string;
  redfish: { url: string; running: boolean; systems: Record<string, string> };
  /** Per host: host:port of its IPMI BMC (lanplus). */
  ipmi: Record<string, { address: string; running: boolean }>;
}

export interface EmulatedBmcs {
  describe(): BmcDescription;
  events(since: number): { last: number; events: PowerEvent[] };
  /** Stops a BMC (its port goes silent: connection refused for Redfish, no answer for IPMI). */
  stop(kind: BmcKind, host?: string): Promise<void>;
  start(kind: BmcKind, host?: string): Promise<void>;
  /** A power request at the BMC, through its own protocol (Redfish Reset, ipmitool chassis power). */
  power(kind: BmcKind, host: string, to: 'on' | 'off'): Promise<void>;
  /** Every BMC running and every host powered on (with its nova-compute started); what was undone. */
  reset(): Promise<string[]>;
  close(): Promise<void>;
}

export interface BmcCloud extends LinkedCloud {
  dir: string;
  launch(name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): ManagedProcess;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startEmulatedBmcs(
  cloud: BmcCloud,
  log: (line: string) => void,
  startTimeoutMs = 120_000,
): Promise<EmulatedBmcs> {
  const [venv, ipmiSim] = await Promise.all([ensureSushyVenv(), ensureOpenIpmi()]);
  const username = 'admin';
  const password = randomBytes(9).toString('base64url');
  const linkPort = await freePort();
  const rf = await prepareRedfishEmulator({
    dir: cloud.dir,
    venv,
    port: await freePort(),
    linkPort,
    hosts: cloud.computes,
    username,
    password,
    launch: cloud.launch,
    startTimeoutMs,
  });
  const timers = new Set<NodeJS.Timeout>();
  const link = await startPowerLink(
    cloud,
    linkPort,
    (host, applyAtMs) => {
      // the fake driver applies a request only on a read; a BMC's power changes by itself, so read then
      const t = setTimeout(
        () => {
          timers.delete(t);
          void rf.powerState(host).catch(() => undefined);
        },
        Math.max(0, applyAtMs - Date.now()) + 200,
      );
      timers.add(t);
    },
    log,
  );
  const ipmi = new Map<string, IpmiBmc>();
  for (const host of cloud.computes) {
    ipmi.set(
      host,
      prepareIpmiBmc({
        dir: cloud.dir,
        ipmiSim,
        host,
        port: await freePort(),
        backendPort: await freePort(),
        linkPort: link.port,
        username,
        password,
        launch: cloud.launch,
        startTimeoutMs,
      }),
    );
  }
  const ipmiOf = (host: string): IpmiBmc => {
    const b = ipmi.get(host);
    if (!b) throw new Error(`no compute ${host}`);
    return b;
  };
  await Promise.all([rf.start(), ...[...ipmi.values()].map((b) => b.start())]);
  log(
    `emulated BMCs up: Redfish ${rf.url}, IPMI ${[...ipmi.values()].map((b) => `${b.host} ${b.address}`).join(', ')}`,
  );

  /** Polls the Redfish system until it reads `want` (each read applies a pending request whose time came). */
  const redfishReaches = async (host: string, want: string) => {
    const deadline = Date.now() + 30_000;
    while ((await rf.powerState(host)) !== want) {
      if (Date.now() > deadline) throw new Error(`the Redfish BMC of ${host} is not ${want} after 30 s`);
      await sleep(500);
    }
  };

  return {
    describe: () => ({
      username,
      password,
      redfish: {
        url: rf.url,
        running: rf.running(),
        systems: Object.fromEntries(cloud.computes.map((h) => [h, systemId(h)])),
      },
      ipmi: Object.fromEntries([...ipmi.values()].map((b) => [b.host, { address: b.address, running: b.running() }])),
    }),
    events: (since) => ({ last: link.lastSeq(), events: link.events(since) }),
    async stop(kind, host) {
      if (kind === 'redfish') await rf.stop();
      else await Promise.all((host ? [ipmiOf(host)] : [...ipmi.values()]).map((b) => b.stop()));
    },
    async start(kind, host) {
      if (kind === 'redfish') await rf.start();
      else await Promise.all((host ? [ipmiOf(host)] : [...ipmi.values()]).map((b) => b.start()));
    },
    async power(kind, host, to) {
      if (kind === 'redfish') {
        await rf.reset(host, to === 'on' ? 'On' : 'ForceOff');
        await redfishReaches(host, to === 'on' ? 'On' : 'Off');
      } else {
        await ipmiOf(host).chassis(to);
      }
      await link.settled();
    },
    async reset() {
      const undone: string[] = [];
      if (!rf.running()) {
        await rf.start();
        undone.push('started the Redfish BMC');
      }
      for (const b of ipmi.values()) {
        if (b.running()) continue;
        await b.start();
        undone.push(`started the IPMI BMC of ${b.host}`);
      }
      await Promise.all(
        cloud.computes.map(async (host) => {
          if ((await rf.powerState(host)) !== 'On') {
            await rf.reset(host, 'On');
            await redfishReaches(host, 'On');
            undone.push(`powered ${host} on at its Redfish BMC`);
          }
          if (link.ipmiPower(host) !== 1) {
            await ipmiOf(host).chassis('on');
            undone.push(`powered ${host} on at its IPMI BMC`);
          }
        }),
      );
      await link.settled();
      return undone;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      await Promise.all([rf.stop(), ...[...ipmi.values()].map((b) => b.stop())]);
      await link.close();
    },
  };
}
