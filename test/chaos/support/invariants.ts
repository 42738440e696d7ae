// What must hold after every chaos run, checked against Nova (the
// simulator's own record), the custom resources and the REST API.
import type { Fleet } from './fleet.ts';
import type { Cr, Kube } from './kube.ts';
import type { MasakariRest } from './rest.ts';
import type { SimServer, SimState, SimulatorProcess } from '../../../tools/simulator/process.ts';
import { SERVERS_PER_HOST, serverShape, type Topology } from './topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the api replicas' caches may take to show the final state (a replica may just have restarted). */
const CONVERGE_MS = 30_000;

interface Ctx {
  kube: Kube;
  namespace: string;
  rest: MasakariRest;
  sim: SimulatorProcess;
  fleet: Fleet;
  topology: Topology;
  /** Servers whose unlock Nova held while their engine was frozen (FaultReport.heldUnlocks). */
  heldUnlocks: string[];
  /** The run's faults and clock skew in one line, for the messages that must name them. */
  faultsSeen: string;
}

/** Every failed host's notification finished; no notification twice. */
function checkNotifications(crs: Cr[], t: Topology): string[] {
  const out: string[] = [];
  for (const host of t.failed) {
    const mine = crs.filter((n) => n.spec.hostname === host);
    if (mine.length !== 1) out.push(`${mine.length} notifications for ${host}, expected 1`);
    for (const n of mine)
      if (n.status?.phase !== 'finished')
        out.push(`notification ${n.status?.uuid} (${host}) is ${n.status?.phase ?? 'new'}, not finished`);
  }
  return out;
}

/** Each server evacuated exactly once, now on a spare host, idle, in its power state (locks: checkLocks). */
function checkServers(state: SimState, evacuations: Record<string, number>, t: Topology): string[] {
  const out: string[] = [];
  if (state.servers.length !== t.failed.length * SERVERS_PER_HOST) out.push(`${state.servers.length} servers in Nova`);
  for (const s of state.servers) {
    const n = evacuations[s.id] ?? 0;
    if (n !== 1) out.push(`${s.name} evacuated ${n} times`);
    if (!s.host || !t.spare.includes(s.host)) out.push(`${s.name} is on ${s.host}, not on a spare host`);
    if (s.taskState !== null) out.push(`${s.name} has task_state ${s.taskState}`);
    const { stopped } = serverShape(Number(/-(\d+)$/.exec(s.name)?.[1]));
    if (s.vmState !== (stopped ? 'stopped' : 'active')) out.push(`${s.name} is ${s.vmState}`);
  }
  for (const h of state.hosts) {
    // Masakari disables the failed host's compute service and leaves it so; the spares stay in service
    const want = t.failed.includes(h.host) ? 'disabled' : 'enabled';
    if (h.status !== want) out.push(`compute service ${h.host} is ${h.status}, expected ${want}`);
  }
  return out;
}

/** Where a chaos server was created: `<host>-vm-<i>`. */
const sourceHostOf = (s: SimServer): string => s.name.replace(/-vm-\d+$/, '');

/**
 * No server is left locked in Nova, unless its notification ended error or failed naming it (in
 * what GET /v1/notifications/{id} shows), as an unlock that never succeeds ends. Nova keeps one
 * flag per server (`locked`, with who locked it), no count: whichever lock or unlock lands last wins,
 * so a late lock from a deposed leader leaves the server locked however many unlocks came before.
 */
export async function checkLocks(
  state: Pick<SimState, 'servers'>,
  crs: Cr[],
  ctx: Pick<Ctx, 'rest' | 'heldUnlocks' | 'faultsSeen'>,
): Promise<string[]> {
  const out: string[] = [];
  for (const s of state.servers.filter((x) => x.locked)) {
    const host = sourceHostOf(s);
    const n = crs.find((x) => x.spec.hostname === host);
    const phase = n?.status?.phase ?? (n ? 'new' : 'missing');
    let named = false;
    if (n?.status?.uuid && (phase === 'error' || phase === 'failed')) {
      const r = await ctx.rest.call<unknown>('GET', `/notifications/${n.status.uuid}`);
      named = r.status === 200 && JSON.stringify(r.json).includes(s.id);
      if (named) continue;
    }
    const held = ctx.heldUnlocks.includes(s.id)
      ? '; Nova held its unlock while the engine that sent it was frozen (freeze-leader-mid-unlock)'
      : '';
    out.push(
      `server ${s.name} (${s.id}) is left locked in Nova (locked_by ${s.lockedBy ?? 'unknown'}); ` +
        `its notification ${n?.status?.uuid ?? '(none)'} (${host}) ended ${phase}` +
        `${phase === 'error' || phase === 'failed' ? ' without naming the server' : ''}${held}; run: ${ctx.faultsSeen}`,
    );
  }
  return out;
}

/** on_maintenance as the CR says it (status flags count only for the spec generation they were latched for). */
export function crMaintenance(h: Cr): boolean {
  const st = h.status as { onMaintenance?: boolean; flagsGeneration?: number } | undefined;
  if (st?.flagsGeneration !== undefined && st.flagsGeneration === h.metadata.generation) return !!st.onMaintenance;
  return !!h.spec.onMaintenance;
}

/** What each api replica answers equals the CRs: notification statuses, host maintenance flags. */
async function restMismatches(ctx: Ctx): Promise<string[]> {
  const out: string[] = [];
  const notifications = await ctx.kube.list(ctx.namespace, 'notifications');
  const hosts = await ctx.kube.list(ctx.namespace, 'hahosts');
  const segments = await ctx.kube.list(ctx.namespace, 'failoversegments');
  const wantN = new Map(notifications.map((n) => [n.status?.uuid, n.status?.phase ?? 'new']));
  const wantH = new Map(hosts.map((h) => [h.spec.name as string, crMaintenance(h)]));
  for (const host of [...ctx.topology.failed, ...ctx.topology.spare]) {
    const want = ctx.topology.failed.includes(host);
    if (wantH.get(host) !== want) out.push(`HaHost ${host} on_maintenance ${wantH.get(host)}, Masakari leaves ${want}`);
  }
  for (const [i] of ctx.fleet.apis.entries()) {
    try {
      const got = await ctx.rest.list<{ id: number; notification_uuid: string; status: string }>(
        i,
        '/notifications',
        'notifications',
      );
      if (got.length !== wantN.size) out.push(`api-${i} lists ${got.length} notifications, CRs ${wantN.size}`);
      for (const n of got)
        if (wantN.get(n.notification_uuid) !== n.status)
          out.push(`api-${i}: notification ${n.notification_uuid} ${n.status}, CR ${wantN.get(n.notification_uuid)}`);
      const rhTotal = { n: 0 };
      for (const seg of segments) {
        const rh = await ctx.rest.list<{ id: number; name: string; on_maintenance: boolean }>(
          i,
          `/segments/${seg.status?.uuid}/hosts`,
          'hosts',
        );
        rhTotal.n += rh.length;
        for (const h of rh)
          if (wantH.get(h.name) !== h.on_maintenance)
            out.push(`api-${i}: host ${h.name} on_maintenance ${h.on_maintenance}, CR ${wantH.get(h.name)}`);
      }
      if (rhTotal.n !== wantH.size) out.push(`api-${i} lists ${rhTotal.n} hosts in all segments, CRs ${wantH.size}`);
    } catch (e) {
      out.push(`api-${i}: ${(e as Error).message}`);
    }
  }
  return out;
}

/** Servers Nova never evacuated (lost) and servers it evacuated more than once (duplicate). */
export interface EvacuationTally {
  lost: number;
  duplicate: number;
}

export async function checkInvariants(ctx: Ctx): Promise<{ violations: string[]; tally: EvacuationTally }> {
  const crs = await ctx.kube.list(ctx.namespace, 'notifications');
  const out = checkNotifications(crs, ctx.topology);
  const state = await ctx.sim.call<SimState>('GET', '/state');
  const counters = await ctx.sim.call<{ actions: Record<string, Record<string, number>> }>('GET', '/counters');
  const evacuations = counters.actions.evacuate ?? {};
  const tally = {
    lost: state.servers.filter((s) => !evacuations[s.id]).length,
    duplicate: state.servers.filter((s) => (evacuations[s.id] ?? 0) > 1).length,
  };
  out.push(...checkServers(state, evacuations, ctx.topology));
  out.push(...(await checkLocks(state, crs, ctx)));
  // the replicas' caches converge after the last write; compare until they agree or the bound passes
  const deadline = Date.now() + CONVERGE_MS;
  let rest = await restMismatches(ctx);
  while (rest.length && Date.now() < deadline) {
    await sleep(500);
    rest = await restMismatches(ctx);
  }
  out.push(...rest);
  return { violations: out, tally };
}
