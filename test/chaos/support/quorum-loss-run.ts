// Quorum lost during a host recovery (issue 35): one failed host with 20
// servers; once Nova has evacuated the first of them, two of the three etcd
// members are killed for outageMs, then started again. Sampled every second
// throughout: servers evacuated (Nova's own count), the notification's phase,
// which engine leads, each replica's readiness and its
// masakari_kube_writes_failing_seconds. Must hold: no server evacuated twice,
// every server evacuated, the notification finished at most 20 s after quorum
// is back (docs/benchmarks.md, "Quorum loss during a host recovery").
import { checkInvariants } from './invariants.ts';
import { MasakariRest } from './rest.ts';
import { registerHosts, seedNova, sendNotifications, waitTerminal, type RunContext } from './scenario.ts';
import type { Topology } from './topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bound of the issue: finished at most this long after quorum is back (ms). */
export const FINISH_AFTER_QUORUM_MS = 20_000;

export interface Sample {
  /** Seconds since the notification was sent. */
  at: number;
  evacuated: number;
  phase: string;
  leader: string;
  /** Replicas answering /readyz 503, with kube-writes among the reasons. */
  unreadyForWrites: string[];
  /** The highest masakari_kube_writes_failing_seconds of the replicas. */
  writesFailingSeconds: number;
}

export interface QuorumLossResult {
  violations: string[];
  samples: Sample[];
  /** Seconds since the notification was sent. */
  quorumLostAt: number;
  quorumBackAt: number;
  finishedAt: number | undefined;
  /** Servers evacuated when quorum was lost. */
  evacuatedBefore: number;
}

async function replicaState(
  ctx: RunContext,
): Promise<Pick<Sample, 'leader' | 'unreadyForWrites' | 'writesFailingSeconds'>> {
  let leader = '-';
  const unreadyForWrites: string[] = [];
  let writesFailingSeconds = 0;
  for (const slot of ctx.fleet.all()) {
    try {
      const ready = await fetch(`${slot.metricsUrl}/readyz`, { signal: AbortSignal.timeout(1_000) });
      const body = (await ready.json()) as { not_ready?: string[] };
      if (body.not_ready?.includes('kube-writes')) unreadyForWrites.push(slot.name);
      const metrics = await (await fetch(`${slot.metricsUrl}/metrics`, { signal: AbortSignal.timeout(1_000) })).text();
      const failing = /^masakari_kube_writes_failing_seconds (\S+)$/m.exec(metrics);
      if (failing) writesFailingSeconds = Math.max(writesFailingSeconds, Number(failing[1]));
      if (/^leader_election_master_status\{name="masakari-engine"\} 1$/m.test(metrics)) leader = slot.name;
    } catch {
      // a replica that does not answer within a second is sampled as it was (not ready, not leading)
    }
  }
  return { leader, unreadyForWrites, writesFailingSeconds: Math.round(writesFailingSeconds) };
}

export async function quorumLossRun(seed: number, outageMs: number, ctx: RunContext): Promise<QuorumLossResult> {
  const ha = ctx.apiserver.ha;
  if (!ha) throw new Error('quorum loss needs the control plane of shape ha');
  const t: Topology = {
    segment: `quorum-${seed}`,
    failed: [`s${seed}-failed-0`],
    spare: Array.from({ length: 5 }, (_, i) => `s${seed}-spare-${i}`),
  };
  const rest = new MasakariRest(ctx.fleet.apiUrls);
  const violations: string[] = [];
  const samples: Sample[] = [];
  await seedNova(ctx.sim, t);
  await registerHosts(rest, t);
  await ctx.sim.call('POST', `/hosts/${t.failed[0]}/fail`);
  const t0 = Date.now();
  const at = () => Math.round((Date.now() - t0) / 100) / 10;
  const evacuated = async () => {
    const c = await ctx.sim.call<{ actions: Record<string, Record<string, number>> }>('GET', '/counters');
    return Object.keys(c.actions.evacuate ?? {}).length;
  };
  let phase: string;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const started = Date.now();
      // a read needs quorum too: '?' while none answers within a second
      const crs = await ctx.kube.listOnce(ctx.namespace, 'notifications', 1_000);
      const mine = crs?.find((n) => n.spec.hostname === t.failed[0]);
      phase = crs ? (mine?.status?.phase ?? 'new') : '?';
      samples.push({ at: at(), evacuated: await evacuated(), phase, ...(await replicaState(ctx)) });
      await sleep(Math.max(0, 1_000 - (Date.now() - started)));
    }
  })();
  let quorumLostAt = 0;
  let quorumBackAt = 0;
  let finishedAt: number | undefined;
  let evacuatedBefore = 0;
  try {
    await sendNotifications(rest, t);
    while ((evacuatedBefore = await evacuated()) < 1 && at() < 120) await sleep(50);
    const leader = (await ha.etcdLeader()) ?? 0;
    const down = [0, 1, 2].filter((i) => i !== leader);
    for (const i of down) await ha.killEtcdMember(i);
    quorumLostAt = at();
    ctx.log(`  quorum lost at +${quorumLostAt}s with ${evacuatedBefore} of 20 servers evacuated`);
    await sleep(outageMs);
    for (const i of down) await ha.startEtcdMember(i);
    quorumBackAt = at();
    ctx.log(`  quorum back at +${quorumBackAt}s`);
    const phases = await waitTerminal(ctx, t, 180_000);
    // waitTerminal polls every half second: that is the resolution of finishedAt
    if (phases.finished === 1) finishedAt = at();
    ctx.log(`  notification ${JSON.stringify(phases)} at +${at()}s`);
    if (finishedAt === undefined) violations.push(`the notification did not finish: ${JSON.stringify(phases)}`);
    else if ((finishedAt - quorumBackAt) * 1000 > FINISH_AFTER_QUORUM_MS)
      violations.push(`finished ${(finishedAt - quorumBackAt).toFixed(1)} s after quorum was back, more than 20 s`);
    const checked = await checkInvariants({
      ...ctx,
      rest,
      topology: t,
      heldUnlocks: [],
      faultsSeen: `seed ${seed}: quorum lost for ${outageMs / 1000} s during the recovery`,
    });
    violations.push(...checked.violations);
  } finally {
    sampling = false;
    await sampler;
  }
  return { violations, samples, quorumLostAt, quorumBackAt, finishedAt, evacuatedBefore };
}
