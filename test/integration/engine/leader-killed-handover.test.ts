// Leader election across two engine PROCESSES, the way two engine pods run:
// the leader is SIGKILLed in the middle of a host recovery, so it releases
// nothing, neither the Lease nor the servers it locked. The other process must
// hold the Lease within the hand-over bound below (measured from the kill),
// resume the run and finish it with each instance evacuated exactly once and
// no server left locked.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_LEASE_NAME } from '../../../src/engine/engine.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import { killEngineProcess, startEngineProcess } from './engine-process.ts';
import type { EngineProcess } from './engine-process.ts';
import { assertEvacuatedOnce, engineEnv, eventually, HOST_DOWN, waitPhase } from './support.ts';
import type { EngineEnv } from './support.ts';

/** Short leader-election timings ([operator] options, in seconds) so the test takes seconds. */
const LEASE = { lease_duration: 4, renew_deadline: 3, retry_period: 1 };
/** leaderelection.ts spreads a candidate's attempts over [retry_period, retry_period × (1 + 1.2)]. */
const JITTER_FACTOR = 1.2;
/** Lease reads and writes of a loaded test machine. */
const SLACK_MS = 1_000;
/**
 * Worst case from the kill: the candidate first sees the dead leader's last
 * renewal up to one attempt interval after it was written, waits a full
 * lease_duration from then by its own clock (it never trusts renewTime), and
 * takes the Lease at its next attempt, at most one more interval later.
 */
const HANDOVER_BOUND_MS = (LEASE.lease_duration + 2 * LEASE.retry_period * (1 + JITTER_FACTOR)) * 1000 + SLACK_MS;
const INSTANCES = 9;

interface Lease {
  spec?: { holderIdentity?: string | null; leaseTransitions?: number };
}

let env: EngineEnv | undefined;
const started: EngineProcess[] = [];

test.after(async () => {
  await Promise.allSettled(started.map((p) => killEngineProcess(p)));
  if (env) env.sim.state.latencies.evacuate = 0;
  await env?.close();
});

test('SIGKILL of the leading engine process mid-recovery: the other holds the Lease within the bound and completes the run exactly once', async () => {
  env = await engineEnv('engine-leader-kill', ['compute-1', 'compute-2', 'compute-3']);
  const e = env;
  const logPath = join(tmpdir(), `engine-leader-kill-${e.namespace}.log`);
  const leaseEnv = Object.fromEntries(
    Object.entries(LEASE).map(([option, seconds]) => [`MASAKARI__OPERATOR__${option.toUpperCase()}`, String(seconds)]),
  );
  const seg = await e.segment('seg');
  await e.host('compute-1', seg);
  const ids = Array.from(
    { length: INSTANCES },
    (_, i) => e.sim.state.addServer({ name: `vm-${i}`, host: 'compute-1', metadata: { HA_Enabled: 'True' } }).id,
  );
  // Three evacuations at a time (the child's host_failure_recovery_threads), 2 s each: a run of several rounds.
  e.sim.state.latencies.evacuate = 2_000;

  for (const identity of ['engine-a', 'engine-b'])
    started.push(await startEngineProcess(e, identity, logPath, leaseEnv));
  const lease = () => e.kube.get<Lease>(RESOURCES.leases, e.namespace, ENGINE_LEASE_NAME);
  // A ready engine has synced its caches; its first campaign, which creates the Lease, may come a moment later.
  const holder = async () =>
    (await lease().catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err))))?.spec?.holderIdentity;
  const first = await eventually('a lease holder', holder, (h) => started.some((p) => p.identity === h));
  const leader = started.find((p) => p.identity === first) as EngineProcess;
  const other = started.find((p) => p !== leader) as EngineProcess;

  e.sim.state.failHost('compute-1');
  const name = await e.notify('COMPUTE_HOST', 'compute-1', HOST_DOWN);
  await eventually(
    'an evacuation in flight with its server locked',
    async () => (await e.get(name)).status?.vmoves?.some((m) => m.status === 'ongoing'),
    (ongoing) => ongoing === true && ids.some((id) => e.sim.state.servers.get(id)?.locked),
    30_000,
  );
  const owner = async () => String(((await e.get(name)).status?.engine as { owner?: string } | undefined)?.owner);
  assert.ok((await owner()).startsWith(`${leader.identity}#`), 'the Lease holder runs the recovery');
  const transitions = (await lease()).spec?.leaseTransitions ?? 0;

  const killedAt = Date.now();
  await killEngineProcess(leader);
  assert.is(await holder(), leader.identity, 'a killed leader cannot release the Lease');
  await eventually(
    'the other engine holds the lease',
    holder,
    (h) => h === other.identity,
    HANDOVER_BOUND_MS + 10_000,
    50,
  );
  const handover = Date.now() - killedAt;
  assert.ok(handover <= HANDOVER_BOUND_MS, `hand-over took ${handover} ms, bound ${HANDOVER_BOUND_MS} ms`);
  assert.is((await lease()).spec?.leaseTransitions, transitions + 1);

  const done = await waitPhase(e, name, ['finished', 'error', 'failed'], 60_000);
  assert.is(done.status?.phase, 'finished', `${JSON.stringify(done.status?.engine)} (log: ${logPath})`);
  assert.is(done.status?.runs, 1);
  assert.ok((await owner()).startsWith(`${other.identity}#`), 'the new leader finished the run');
  assert.ok(
    (done.status?.vmoves ?? []).every((m) => m.status === 'succeeded'),
    JSON.stringify(done.status?.vmoves),
  );
  assertEvacuatedOnce(e.sim, ids, 'compute-1');
  const events = await e.kube.list<{ reason?: string; reportingInstance?: string; regarding?: { name?: string } }>(
    RESOURCES.events,
    e.namespace,
  );
  const mine = events.items.filter((ev) => ev.regarding?.name === name);
  assert.ok(mine.some((ev) => ev.reason === 'RecoveryResumed' && ev.reportingInstance === other.identity));
  rmSync(logPath, { force: true });
});

test.run();
