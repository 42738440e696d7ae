// Carries out a run's fault schedule. Faults on the same lane (the engines,
// the api replicas, kube-apiserver, Nova) run one after the other, each no
// earlier than its scheduled time; lanes run side by side. Every fault ends
// by itself (a killed process is restarted, a frozen one continued), so when
// runSchedule resolves the system has everything it needs to finish.
import type { Fleet } from './fleet.ts';
import { LEASE } from './fleet.ts';
import type { SimulatorProcess } from '../../../src/simulator/process.ts';
import type { Fault, FaultKind, Lane } from './schedule.ts';
import { describeFault } from './schedule.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The control plane as far as the faults need it. */
export interface ApiServerHandle {
  pid(): number;
  restart(): Promise<void>;
}

export interface FaultReport {
  /** Faults actually carried out, per kind. */
  injected: Partial<Record<FaultKind, number>>;
  /** One line per fault, with what happened (for the run's log). */
  lines: string[];
}

const ENGINE_LEASE = 'masakari-engine';

async function findLeader(fleet: Fleet, timeoutMs: number): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const [i, e] of fleet.engines.entries()) if (await e.leads(ENGINE_LEASE)) return i;
    await sleep(250);
  }
  return undefined;
}

export async function runSchedule(
  faults: Fault[],
  ctx: { fleet: Fleet; sim: SimulatorProcess; apiserver: ApiServerHandle; t0: number; log: (l: string) => void },
): Promise<FaultReport> {
  const report: FaultReport = { injected: {}, lines: [] };
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
