// Carries out a run's fault schedule. Faults on the same lane (the engines,
// the api replicas, kube-apiserver, Nova) run one after the other, each no
// earlier than its scheduled time; lanes run side by side. Every fault ends
// by itself (a killed process is restarted, a frozen one continued), so when
// runSchedule resolves the system has everything it needs to finish.
import type { Fleet } from './fleet.ts';
import { LEASE } from './fleet.ts';
import type { SimulatorProcess } from '../../../tools/simulator/process.ts';
import type { HaControls } from '../../../tools/controlplane/index.ts';
import type { ClockSkew, Fault, FaultKind, Lane } from './schedule.ts';
import { describeFault, describeSkew } from './schedule.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The control plane as far as the faults need it. */
export interface ApiServerHandle {
  pid(): number;
  restart(): Promise<void>;
  /** The production-shaped control plane's faults (etcd members, the second API server, the balancer). */
  ha?: HaControls;
}

export interface FaultReport {
  /** Faults actually carried out, per kind. */
  injected: Partial<Record<FaultKind, number>>;
  /** One line per fault, with what happened (for the run's log). */
  lines: string[];
  /** Servers whose unlock Nova held while the engine that sent it was frozen (freeze-leader-mid-unlock). */
  heldUnlocks: string[];
}

/** How long freeze-leader-mid-unlock waits for the leader to unlock a server before it gives up (ms). */
const UNLOCK_WAIT_MS = 20_000;
/** How long the leader stays frozen at most, waiting for the other engine to lead (ms). */
const TAKEOVER_WAIT_MS = (LEASE.duration + 15) * 1000;

const ENGINE_LEASE = 'masakari-engine';

export async function findLeader(fleet: Fleet, timeoutMs: number): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const [i, e] of fleet.engines.entries()) if (await e.leads(ENGINE_LEASE)) return i;
    await sleep(250);
  }
  return undefined;
}

/** The first request the simulator holds, within timeoutMs. */
async function heldRequest(sim: SimulatorProcess, timeoutMs: number): Promise<{ path: string } | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { held } = await sim.call<{ held: { path: string }[] }>('GET', '/holds');
    if (held[0]) return held[0];
    await sleep(50);
  }
  return undefined;
}

async function waitLeads(slot: Fleet['engines'][number], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await slot.leads(ENGINE_LEASE)) return true;
    await sleep(250);
  }
  return false;
}

/**
 * Skews the wall clock of one engine for a run (the seed's ClockSkew) and puts the other back on
 * true time; returns what it did, for the run's log.
 */
export async function skewEngineClock(fleet: Fleet, skew: ClockSkew): Promise<string> {
  const leader = (await findLeader(fleet, (LEASE.duration + 4) * 1000)) ?? 0;
  const target = skew.engine === 'leader' ? leader : 1 - leader;
  for (const [i, slot] of fleet.engines.entries()) await slot.setClockOffset(i === target ? skew.offsetMs : 0);
  return describeSkew(skew, fleet.engines[target]?.name ?? `engine-${target}`);
}

export async function runSchedule(
  faults: Fault[],
  ctx: { fleet: Fleet; sim: SimulatorProcess; apiserver: ApiServerHandle; t0: number; log: (l: string) => void },
): Promise<FaultReport> {
  const report: FaultReport = { injected: {}, lines: [], heldUnlocks: [] };
  const note = (f: Fault, what: string, done = true) => {
    const line = `${describeFault(f)}: ${what} (at +${((Date.now() - ctx.t0) / 1000).toFixed(1)}s)`;
    report.lines.push(line);
    ctx.log(line);
    if (done) report.injected[f.kind] = (report.injected[f.kind] ?? 0) + 1;
  };

  const apply = async (f: Fault): Promise<void> => {
    switch (f.kind) {
      case 'kill-engine':
      case 'kill-api': {
        const slot = (f.kind === 'kill-engine' ? ctx.fleet.engines : ctx.fleet.apis)[f.target ?? 0];
        if (!slot) throw new Error(`no slot ${f.target}`);
        const pid = slot.current?.pid;
        await slot.kill();
        note(f, `SIGKILL ${slot.name} pid ${pid}`);
        await sleep(f.durationMs ?? 0);
        await slot.start();
        ctx.log(`  ${slot.name} restarted, ready at +${((Date.now() - ctx.t0) / 1000).toFixed(1)}s`);
        return;
      }
      case 'freeze-leader': {
        const leader = await findLeader(ctx.fleet, (LEASE.duration + 4) * 1000);
        const slot = leader === undefined ? undefined : ctx.fleet.engines[leader];
        if (!slot) return note(f, 'no engine leads: nothing to freeze', false);
        slot.signal('SIGSTOP');
        note(f, `SIGSTOP ${slot.name} (the leader)`);
        try {
          await sleep(f.durationMs ?? 0);
        } finally {
          slot.signal('SIGCONT');
        }
        return;
      }
      case 'freeze-leader-mid-unlock': {
        if ((await findLeader(ctx.fleet, (LEASE.duration + 4) * 1000)) === undefined)
          return note(f, 'no engine leads: nothing to freeze', false);
        // only engines call Nova's unlock, and only the leader runs recoveries: the held one is the leader's
        await ctx.sim.call('POST', '/holds', {
          method: 'POST',
          path: '/compute/v2.1/servers/',
          action: 'unlock',
          count: 1,
        });
        const held = await heldRequest(ctx.sim, UNLOCK_WAIT_MS);
        // the leader when the unlock came (leadership may have moved while we waited for one)
        const leader = held ? await findLeader(ctx.fleet, 2_000) : undefined;
        const slot = leader === undefined ? undefined : ctx.fleet.engines[leader];
        const other = leader === undefined ? undefined : ctx.fleet.engines[1 - leader];
        if (!held || !slot || !other) {
          await ctx.sim.call('DELETE', '/holds');
          const why = held ? 'no engine leads' : `no server unlocked within ${UNLOCK_WAIT_MS / 1000} s`;
          return note(f, `${why}: nothing to freeze`, false);
        }
        slot.signal('SIGSTOP');
        const server = /\/servers\/([^/]+)\/action$/.exec(held.path)?.[1] ?? held.path;
        report.heldUnlocks.push(server);
        note(f, `SIGSTOP ${slot.name} (the leader) while Nova holds its unlock of server ${server}`);
        const frozenAt = Date.now();
        try {
          const tookOver = await waitLeads(other, TAKEOVER_WAIT_MS);
          ctx.log(
            tookOver
              ? `  ${other.name} leads after ${((Date.now() - frozenAt) / 1000).toFixed(1)} s`
              : `  ${other.name} did not lead within ${TAKEOVER_WAIT_MS / 1000} s of the freeze`,
          );
        } finally {
          slot.signal('SIGCONT');
          await ctx.sim.call('POST', '/holds/release', {});
        }
        ctx.log(`  SIGCONT ${slot.name}; its held unlock of ${server} let through`);
        return;
      }
      case 'freeze-apiserver': {
        const pid = ctx.apiserver.pid();
        process.kill(pid, 'SIGSTOP');
        note(f, `SIGSTOP kube-apiserver pid ${pid}`);
        try {
          await sleep(f.durationMs ?? 0);
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        return;
      }
      case 'restart-apiserver': {
        note(f, 'restarting kube-apiserver');
        await ctx.apiserver.restart();
        ctx.log(`  kube-apiserver ready again at +${((Date.now() - ctx.t0) / 1000).toFixed(1)}s`);
        return;
      }
      case 'kill-etcd-member':
      case 'kill-etcd-leader':
      case 'lose-quorum':
      case 'kill-apiserver':
      case 'reset-balancer':
      case 'degrade-etcd-link':
        return applyHa(f, ctx.apiserver.ha);
      case 'nova-500':
      case 'nova-timeout':
      case 'nova-lost-response': {
        const kind = f.kind === 'nova-500' ? 500 : f.kind === 'nova-timeout' ? 'hang' : f.lostAs;
        const when = f.kind === 'nova-lost-response' ? 'after' : 'before';
        const target =
          f.novaTarget === 'any' ? { path: '/compute/v2.1/' } : { method: 'POST', path: '/compute/v2.1/servers/' };
        await ctx.sim.call('POST', '/faults', { ...target, kind, when, count: f.count ?? 1 });
        note(f, `simulator fault ${JSON.stringify({ ...target, kind, when, count: f.count })}`);
        return;
      }
    }
  };

  const since = () => `+${((Date.now() - ctx.t0) / 1000).toFixed(1)}s`;
  const applyHa = async (f: Fault, ha: HaControls | undefined): Promise<void> => {
    if (!ha) throw new Error(`${f.kind} needs the control plane of shape 'ha' (MASAKARI_CHAOS_SHAPE=ha)`);
    switch (f.kind) {
      case 'kill-etcd-member':
      case 'kill-etcd-leader': {
        const member = f.kind === 'kill-etcd-leader' ? await ha.etcdLeader() : (f.target ?? 0);
        if (member === undefined) return note(f, 'no etcd member leads: nothing to kill', false);
        await ha.killEtcdMember(member);
        note(f, `SIGKILL etcd member ${member}${f.kind === 'kill-etcd-leader' ? ' (the leader)' : ''}`);
        await sleep(f.durationMs ?? 0);
        await ha.startEtcdMember(member);
        ctx.log(`  etcd member ${member} restarted at ${since()}`);
        return;
      }
      case 'lose-quorum': {
        // keep the leader, so the one member left is the one that led
        const leader = (await ha.etcdLeader()) ?? 0;
        const down = [0, 1, 2].filter((i) => i !== leader);
        for (const i of down) await ha.killEtcdMember(i);
        note(f, `SIGKILL etcd members ${down.join(' and ')}: no quorum`);
        await sleep(f.durationMs ?? 0);
        for (const i of down) await ha.startEtcdMember(i);
        ctx.log(`  etcd members ${down.join(' and ')} restarted at ${since()}`);
        return;
      }
      case 'kill-apiserver': {
        const i = f.target ?? 0;
        await ha.killApiServer(i);
        note(f, `SIGKILL kube-apiserver ${i} (its watches end)`);
        await sleep(f.durationMs ?? 0);
        await ha.startApiServer(i);
        ctx.log(`  kube-apiserver ${i} ready again at ${since()}`);
        return;
      }
      case 'reset-balancer':
        return note(f, `the balancer reset ${ha.resetBalancer()} connections`);
      case 'degrade-etcd-link': {
        ha.setEtcdLink(f.delayMs === undefined ? { mode: 'partitioned' } : { mode: 'delayed', ms: f.delayMs });
        note(
          f,
          f.delayMs === undefined
            ? 'kube-apiserver 1 cut off from etcd'
            : `kube-apiserver 1's traffic with etcd delayed ${f.delayMs} ms`,
        );
        try {
          await sleep(f.durationMs ?? 0);
        } finally {
          ha.setEtcdLink({ mode: 'open' });
        }
        ctx.log(`  kube-apiserver 1's link to etcd healed at ${since()}`);
        return;
      }
      default:
        throw new Error(`not a fault of shape ha: ${f.kind}`);
    }
  };

  const lanes = new Map<Lane, Promise<void>>();
  const all = faults.map((f) => {
    const prev = lanes.get(f.lane) ?? Promise.resolve();
    const next = prev.then(async () => {
      const wait = ctx.t0 + f.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      await apply(f);
    });
    lanes.set(f.lane, next);
    return next;
  });
  const settled = await Promise.allSettled(all);
  const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed.length)
    throw new Error(`faults could not be carried out: ${failed.map((f) => String(f.reason)).join('; ')}`);
  return report;
}
