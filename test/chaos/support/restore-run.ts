// A restore of etcd from a snapshot under the running operator (issue 35):
// 5 host recoveries start; while Nova holds their first step, `etcdctl
// snapshot save`; the holds let go and every recovery finishes; one more
// host and its notification are created after the snapshot and finish too;
// then the snapshot is restored into a fresh three-member cluster (both API
// servers stopped and restarted around it, as Kubernetes says). The restored
// notifications are mid-recovery again and the late one is gone. What must
// follow (src/engine/gates/restore-guard.ts): each restored notification gets
// RolledBackByRestore and is finished again without running (no
// RecoveryStarted or RecoveryResumed after the restore, each server still
// evacuated exactly once, each failed host on maintenance again, whether or
// not its recovery had set it by the snapshot), the late one gets
// LostInRestore and is not re-created, and every invariant of a chaos run
// holds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkInvariants, crMaintenance } from './invariants.ts';
import { MasakariRest } from './rest.ts';
import { registerHosts, seedNova, sendNotifications, waitTerminal, type RunContext } from './scenario.ts';
import { topologyFor } from './topology.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RestoreResult {
  violations: string[];
  /** Seconds: snapshot taken, restore done, every notification final again (from the restore's start). */
  timeline: { snapshotAt: number; restoreSeconds: number; settledSeconds: number };
  rolledBack: string[];
  lost: string[];
}

export async function restoreRun(seed: number, ctx: RunContext): Promise<RestoreResult> {
  const ha = ctx.apiserver.ha;
  if (!ha) throw new Error('the restore needs the control plane of shape ha');
  const t = topologyFor(seed);
  const late = `s${seed}-late`;
  const rest = new MasakariRest(ctx.fleet.apiUrls);
  const violations: string[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'masakari-snapshot-'));
  const file = path.join(dir, 'etcd.db');
  const started = Date.now();
  const since = () => Math.round((Date.now() - started) / 100) / 10;
  try {
    await seedNova(ctx.sim, t);
    await registerHosts(rest, t);
    for (const h of t.failed) await ctx.sim.call('POST', `/hosts/${h}/fail`);
    // The late host exists in Nova from the start, already failed: created later, it was up for a moment
    // and Nova (auto) could land an evacuation on it, which its own recovery then rightly evacuated again.
    await ctx.sim.call('POST', '/hosts', { name: late });
    await ctx.sim.call('POST', `/hosts/${late}/fail`);
    // mid-run for certain: Nova holds the first step of each recovery (disabling the host's compute
    // service, which is idempotent when the engine repeats it) until the snapshot is taken
    await ctx.sim.call('POST', '/holds', { method: 'PUT', path: '/compute/v2.1/os-services/', count: 5 });
    await sendNotifications(rest, t);
    for (let i = 0; i < 200; i++) {
      const { held } = await ctx.sim.call<{ held: unknown[] }>('GET', '/holds');
      if (held.length) break;
      await sleep(100);
    }
    const { revision } = await ha.snapshot(file);
    const snapshotAt = since();
    // flags only go on in this window: a failed host off maintenance now was off in the snapshot, and the
    // restore takes its flag back (src/engine/gates/restored-host-flags.ts writes it again)
    const offMaintenance = (await ctx.kube.list(ctx.namespace, 'hahosts')).filter(
      (h) => t.failed.includes(h.spec.name as string) && !crMaintenance(h),
    ).length;
    ctx.log(
      `  snapshot at revision ${revision}, +${snapshotAt}s; failed hosts not yet on maintenance in it: ${offMaintenance} at least`,
    );
    await ctx.sim.call('POST', '/holds/release', {});
    await ctx.sim.call('DELETE', '/holds');

    // created after the snapshot: a host with no servers and its notification, a second later at least
    // (the engine tells lost from purged by creationTimestamp, which has whole seconds)
    await sleep(1_100);
    const segs = await rest.call<{ segments: { uuid: string; name: string }[] }>('GET', '/segments');
    const seg = segs.json.segments.find((s) => s.name === t.segment);
    const host = await rest.call('POST', `/segments/${seg?.uuid}/hosts`, {
      host: { name: late, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    if (host.status !== 201) violations.push(`POST host ${late}: ${host.status}`);
    const lateN = await rest.call<{ notification: { notification_uuid: string } }>('POST', '/notifications', {
      notification: {
        type: 'COMPUTE_HOST',
        hostname: late,
        generated_time: new Date().toISOString().slice(0, 19),
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
    });
    if (lateN.status !== 202) violations.push(`POST notification ${late}: ${lateN.status}`);
    const withLate = { ...t, failed: [...t.failed, late] };
    const before = await waitTerminal(ctx, withLate, 180_000);
    ctx.log(`  before the restore: ${JSON.stringify(before)} at +${since()}s`);
    const lateName = (await ctx.kube.list(ctx.namespace, 'notifications')).find((n) => n.spec.hostname === late)
      ?.metadata.name;

    const restoreStart = Date.now();
    await ha.restore(file);
    const restoreSeconds = Math.round((Date.now() - restoreStart) / 100) / 10;
    ctx.log(`  restored in ${restoreSeconds}s`);
    const after = await waitTerminal(ctx, t, 180_000);
    const settledSeconds = Math.round((Date.now() - restoreStart) / 100) / 10;
    ctx.log(`  after the restore: ${JSON.stringify(after)}, ${settledSeconds}s after it began`);
    // the late host's compute service is disabled in Nova, its records gone: not part of the checks below
    await ctx.sim.call('DELETE', `/hosts/${late}`);

    const crs = await ctx.kube.list(ctx.namespace, 'notifications');
    if (crs.some((n) => n.spec.hostname === late)) violations.push(`the notification of ${late} was re-created`);
    let events = await ctx.kube.events(ctx.namespace);
    const deadline = Date.now() + 30_000;
    const names = crs.map((n) => n.metadata.name);
    const has = (reason: string, name: string) => events.some((e) => e.reason === reason && e.name === name);
    while (
      Date.now() < deadline &&
      !(names.every((n) => has('RolledBackByRestore', n)) && lateName && has('LostInRestore', lateName))
    ) {
      await sleep(1_000);
      events = await ctx.kube.events(ctx.namespace);
    }
    const rolledBack = names.filter((n) => has('RolledBackByRestore', n));
    const lost = events.filter((e) => e.reason === 'LostInRestore').map((e) => e.name);
    for (const n of names) if (!has('RolledBackByRestore', n)) violations.push(`no RolledBackByRestore Event for ${n}`);
    if (!lateName || !has('LostInRestore', lateName))
      violations.push(`no LostInRestore Event for the late notification ${lateName ?? '(never seen)'}`);
    for (const e of events)
      if ((e.reason === 'RecoveryStarted' || e.reason === 'RecoveryResumed') && e.at >= restoreStart)
        violations.push(`${e.name} ran again after the restore (${e.reason}: ${e.note})`);
    const checked = await checkInvariants({
      ...ctx,
      rest,
      topology: t,
      heldUnlocks: [],
      faultsSeen: `seed ${seed}: snapshot mid-run, restore after every recovery finished`,
    });
    violations.push(...checked.violations);
    return { violations, timeline: { snapshotAt, restoreSeconds, settledSeconds }, rolledBack, lost };
  } finally {
    await ctx.sim.call('DELETE', '/holds').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
