// One chaos run: a fresh segment of 5 failed hosts with 20 servers each and 5
// spares; one engine's wall clock skewed by the seed; COMPUTE_HOST
// notifications sent through the REST API while the seed's faults are
// injected; then the invariants (invariants.ts, process-checks.ts). The
// replicas and the namespace are the session's.
import { armBmc, type ChaosBmc } from './bmc.ts';
import type { Fleet } from './fleet.ts';
import { LEASE } from './fleet.ts';
import { runSchedule, skewEngineClock, type ApiServerHandle, type FaultReport } from './faults.ts';
import { checkInvariants, type EvacuationTally } from './invariants.ts';
import { checkProcesses } from './process-checks.ts';
import type { Kube } from './kube.ts';
import { MasakariRest } from './rest.ts';
import { clockSkewFor, describeFault, faultKindsFor, scheduleFor, type Fault } from './schedule.ts';
import type { SimulatorProcess } from '../../../tools/simulator/process.ts';
import { SERVERS_PER_HOST, serverShape, topologyFor, type Topology } from './topology.ts';

const TERMINAL = new Set(['finished', 'failed', 'ignored']);

/** Bounds of one run (ms). */
export const BOUNDS = {
  /** A (re)started replica answers /readyz 200 within this. */
  ready: 120_000,
  /** After the last fault, every notification is terminal within this. */
  settle: 180_000,
};

export interface RunContext {
  kube: Kube;
  namespace: string;
  fleet: Fleet;
  apiserver: ApiServerHandle;
  sim: SimulatorProcess;
  log: (line: string) => void;
}

export interface RunResult {
  seed: number;
  faults: Fault[];
  report: FaultReport;
  violations: string[];
  durationMs: number;
  /** Notifications of this run per final status. */
  notifications: Record<string, number>;
  /** Undefined when the run did not get as far as counting. */
  tally?: EvacuationTally;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh Nova: this run's hosts and servers only (the reset also revokes every token, as Keystone may). */
export async function seedNova(sim: SimulatorProcess, t: Topology): Promise<void> {
  await sim.call('POST', '/reset');
  // only this run's hosts may receive evacuated servers (Nova's scheduler picks the target)
  const { hosts } = await sim.call<{ hosts: { host: string }[] }>('GET', '/state');
  for (const h of hosts) await sim.call('DELETE', `/hosts/${h.host}`);
  for (const name of [...t.failed, ...t.spare]) await sim.call('POST', '/hosts', { name });
  await Promise.all(
    t.failed.map(async (host) => {
      for (let i = 0; i < SERVERS_PER_HOST; i++) {
        const shape = serverShape(i);
        await sim.call('POST', '/servers', {
          name: `${host}-vm-${i}`,
          host,
          metadata: shape.ha ? { HA_Enabled: 'True' } : {},
          vm_state: shape.stopped ? 'stopped' : 'active',
        });
      }
    }),
  );
}

/** Segment and hosts through the REST API; a 409 after a retried create means it exists. */
export async function registerHosts(rest: MasakariRest, t: Topology): Promise<void> {
  const seg = await rest.call<{ segment: { uuid: string } }>('POST', '/segments', {
    segment: { name: t.segment, recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  if (seg.status !== 201) throw new Error(`POST /segments: ${seg.status} ${JSON.stringify(seg.json)}`);
  const uuid = seg.json.segment.uuid;
  // one by one, alternating replicas: each create must see the segment the other replica just created
  for (const name of [...t.failed, ...t.spare]) {
    const r = await rest.call('POST', `/segments/${uuid}/hosts`, {
      host: { name, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    if (r.status !== 201 && r.status !== 409)
      throw new Error(`POST host ${name}: ${r.status} ${JSON.stringify(r.json)}`);
  }
}

export async function sendNotifications(rest: MasakariRest, t: Topology): Promise<void> {
  const generated = new Date().toISOString().slice(0, 19);
  await Promise.all(
    t.failed.map(async (hostname) => {
      const r = await rest.call('POST', '/notifications', {
        notification: {
          type: 'COMPUTE_HOST',
          hostname,
          generated_time: generated,
          payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
        },
      });
      // 409: the retry of a create whose answer was lost finds it stored (duplicate detection)
      if (r.status !== 202 && r.status !== 409)
        throw new Error(`POST notification ${hostname}: ${r.status} ${JSON.stringify(r.json)}`);
    }),
  );
}

/** Until every notification of this run's hosts is terminal (read from the CRs); returns them per status. */
export async function waitTerminal(ctx: RunContext, t: Topology, timeoutMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let phases: Record<string, number> = {};
  while (Date.now() < deadline) {
    const mine = (await ctx.kube.list(ctx.namespace, 'notifications')).filter((n) =>
      t.failed.includes(n.spec.hostname as string),
    );
    phases = {};
    for (const n of mine) phases[n.status?.phase ?? 'new'] = (phases[n.status?.phase ?? 'new'] ?? 0) + 1;
    if (mine.length >= t.failed.length && mine.every((n) => TERMINAL.has(n.status?.phase ?? 'new'))) return phases;
    await sleep(500);
  }
  return phases;
}

export async function runOnce(seed: number, ctx: RunContext): Promise<RunResult> {
  const started = Date.now();
  const since = (t: number) => `+${((Date.now() - t) / 1000).toFixed(1)}s`;
  const faults = scheduleFor(seed, {
    leaseMs: LEASE.duration * 1000,
    windowMs: 8_000,
    minFaults: 2,
    maxFaults: 4,
    kinds: faultKindsFor(ctx.apiserver.ha ? 'ha' : 'single'),
    quick: process.env.MASAKARI_CHAOS_QUICK === '1',
  });
  ctx.log(`seed ${seed}: ${faults.map(describeFault).join(', ')}`);
  const t = topologyFor(seed);
  const violations: string[] = [];
  let report: FaultReport = { injected: {}, lines: [], heldUnlocks: [] };
  let clock = 'no engine clock skewed';
  const faultsSeen = () => `seed ${seed}: ${report.lines.join('; ') || 'no fault carried out'}; ${clock}`;
  let notifications: Record<string, number> = {};
  let tally: EvacuationTally | undefined;
  const rest = new MasakariRest(ctx.fleet.apiUrls);
  let faultsDone: Promise<{ report?: FaultReport; error?: unknown }> | undefined;
  let bmc: ChaosBmc | undefined;
  try {
    await seedNova(ctx.sim, t);
    await registerHosts(rest, t);
    // every failed host is fenced through a misbehaving BMC first (bmc.ts)
    bmc = await armBmc(seed, t, ctx);
    for (const h of t.failed) await ctx.sim.call('POST', `/hosts/${h}/fail`);
    clock = await skewEngineClock(ctx.fleet, clockSkewFor(seed));
    ctx.log(`  registered ${since(started)}; ${clock}`);

    const t0 = Date.now();
    faultsDone = runSchedule(faults, { ...ctx, t0 }).then(
      (r) => ({ report: r }),
      (error: unknown) => ({ error }),
    );
    await sendNotifications(rest, t);
    const done = await faultsDone;
    if (!done.report) throw done.error;
    report = done.report;
    ctx.log(`  faults over at ${since(t0)}`);
    notifications = await waitTerminal(ctx, t, BOUNDS.settle);
    ctx.log(`  notifications ${JSON.stringify(notifications)} at ${since(t0)}`);
    await ctx.sim.call('DELETE', '/faults');
    const checked = await checkInvariants({
      ...ctx,
      rest,
      topology: t,
      heldUnlocks: report.heldUnlocks,
      faultsSeen: faultsSeen(),
    });
    violations.push(...checked.violations);
    violations.push(...(await bmc.check()));
    tally = checked.tally;
  } catch (e) {
    violations.push(`run aborted: ${(e as Error).message}`);
  } finally {
    await faultsDone; // never leave a fault running into the next run
    await bmc?.stop().catch(() => undefined);
    await ctx.sim.call('DELETE', '/faults').catch(() => undefined);
    await ctx.sim.call('DELETE', '/holds').catch(() => undefined);
    violations.push(...checkProcesses(ctx.fleet));
  }
  // what was done to the run comes first, so a failure names its faults and its skewed engine
  if (violations.length) violations.unshift(`faults of ${faultsSeen()}`);
  return { seed, faults, report, violations, durationMs: Date.now() - started, notifications, tally };
}
