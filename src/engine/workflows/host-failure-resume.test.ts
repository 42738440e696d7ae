// Crash safety: the workflow is killed after every possible durable step (a
// journal write or a mutating Nova call that reached Nova), the engine is
// "restarted" on the same run with the same journal, and the result must be
// the same as without a crash: the same outcome, every instance evacuated as
// many times as in the crash-free run (exactly once when all succeed), every
// move of the final run terminal and no server left locked. Between the crash
// and the resumption the engine core's real lock sweep runs, as it does.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sweepLeftoverServerLocks } from '../nova/server-locks.ts';
import { novaServerError } from '../../testing/fake-nova.ts';
import type { Scenario } from './testing/evacuation-scenario.ts';
import { scenario } from './testing/evacuation-scenario.ts';
import { runHostFailure } from './host-failure.ts';
import type { MemoryEngine } from './testing/memory-context.ts';

interface Result {
  outcome: string;
  run: number;
  evacuations: Record<string, number>;
  steps: number;
}

async function runOnce(engine: MemoryEngine): Promise<string> {
  try {
    await runHostFailure(engine.context(), engine.startFallbackRun);
    return 'resolved';
  } catch (err) {
    // A dead process reports nothing: whatever it threw after the crash is not an outcome.
    if (engine.crashed) return 'crashed';
    return `${(err as Error).constructor.name}: ${(err as Error).message}`;
  }
}

async function sweep(s: Scenario): Promise<void> {
  const ctx = s.engine.context();
  await sweepLeftoverServerLocks(
    s.engine.notification,
    s.nova,
    (server) => ctx.effects.done(`unlock:${server}`),
    ctx.log,
    { requestId: 'sweep', signal: new AbortController().signal, clock: ctx.clock },
  );
}

/** Runs the scenario, crashing once after `crashAt` steps (undefined: never) and resuming. */
async function play(make: () => Scenario, crashAt: number | undefined): Promise<Result & { s: Scenario }> {
  const s = make();
  if (crashAt !== undefined) s.engine.crashAfterSteps(crashAt);
  let outcome = await runOnce(s.engine);
  if (outcome === 'crashed') {
    await new Promise((r) => setTimeout(r, 5));
    s.engine.restart();
    await sweep(s);
    outcome = await runOnce(s.engine);
  }
  await sweep(s);
  const evacuations: Record<string, number> = {};
  for (const server of s.servers) evacuations[server.name] = s.nova.evacuationsOf(server.id);
  return { s, outcome, run: s.engine.run, evacuations, steps: s.engine.steps };
}

async function crashEverywhere(name: string, make: () => Scenario): Promise<number> {
  const baseline = await play(make, undefined);
  baseline.s.nova.stop();
  assert.not.equal(baseline.outcome, 'crashed');
  let points = 0;
  for (let k = 1; k < baseline.steps; k++) {
    const r = await play(make, k);
    const where = `${name}, crash after step ${k}`;
    assert.is(r.outcome, baseline.outcome, where);
    assert.is(r.run, baseline.run, where);
    assert.equal(r.evacuations, baseline.evacuations, where);
    for (const server of r.s.servers)
      assert.is(r.s.nova.servers.get(server.id)!.locked, false, `${where}: ${server.name} locked`);
    for (const m of r.s.engine.vmoves())
      assert.ok(['succeeded', 'failed'].includes(m.status), `${where}: move ${m.status}`);
    r.s.nova.stop();
    points++;
  }
  return points;
}

test('auto: crash at every step, resume → each instance evacuated exactly once, nothing left locked', async () => {
  const make = () =>
    scenario({
      servers: [
        { metadata: { HA_Enabled: 'True' } },
        { vmState: 'stopped' },
        { vmState: 'error' },
        { vmState: 'paused' },
      ],
      configure: (c) => (c.DEFAULT.host_failure_recovery_threads = 2),
    });
  const baseline = await play(make, undefined);
  baseline.s.nova.stop();
  assert.is(baseline.outcome, 'resolved');
  assert.equal(Object.values(baseline.evacuations), [1, 1, 1, 1]);
  const points = await crashEverywhere('auto', make);
  assert.ok(points > 30, `only ${points} crash points`);
});

test('reserved_host with the first reserved host failing: crash at every step', async () => {
  await crashEverywhere('reserved_host', () => {
    const s = scenario({ method: 'reserved_host', reserved: ['rh-b', 'rh-a'], servers: [{}, {}] });
    const bad = s.servers[1]!.id;
    s.nova.fault = (method, args) =>
      method === 'evacuate' && args[0] === bad && args[1] === 'rh-a' ? novaServerError('rh-a refused') : undefined;
    return s;
  });
});

test('auto_priority falling back to reserved_host: crash at every step', async () => {
  await crashEverywhere('auto_priority', () => {
    const s = scenario({ method: 'auto_priority', reserved: ['rh-a'], servers: [{}, {}] });
    const bad = s.servers[0]!.id;
    s.nova.fault = (method, args) =>
      method === 'evacuate' && args[0] === bad && args[1] === undefined ? novaServerError('auto refused') : undefined;
    return s;
  });
});

test('a rebuild still running when the engine restarts is waited for, not re-issued', async () => {
  const s = scenario({ servers: [{}], evacuateMs: 300 });
  const id = s.servers[0]!.id;
  // Crash right after the evacuate call reached Nova.
  const evacuate = s.nova.evacuate.bind(s.nova);
  s.nova.evacuate = async (...args) => {
    await evacuate(...args);
    s.engine.crashAfterSteps(0);
  };
  assert.is(await runOnce(s.engine), 'crashed');
  s.nova.evacuate = evacuate;
  assert.is(s.nova.servers.get(id)!.taskState, 'rebuilding');
  s.engine.restart();
  assert.is(await runOnce(s.engine), 'resolved');
  assert.is(s.nova.evacuationsOf(id), 1);
  assert.is(s.engine.vmoves()[0]!.status, 'succeeded');
  // The resumed run picks the evacuation up without announcing it a second time.
  const started = s.engine.messages().filter((m) => m.includes('Evacuation of instance started'));
  assert.equal(started, [`EvacuateInstancesTask: Evacuation of instance started: '${id}'`]);
  s.nova.stop();
});

/** Crashes the run as its evacuate is about to leave (never sent) and resumes; resolves with the resumed run's outcome. */
async function resumeAfterEvacuateUnsent(s: Scenario): Promise<string> {
  const evacuate = s.nova.evacuate.bind(s.nova);
  s.nova.evacuate = async () => {
    s.engine.crashNow();
    throw new Error('process died before the request left');
  };
  assert.is(await runOnce(s.engine), 'crashed');
  s.nova.evacuate = evacuate;
  s.engine.restart();
  return runOnce(s.engine);
}

test('an evacuate intended but never sent is sent on resumption', async () => {
  const s = scenario({ servers: [{}] });
  const id = s.servers[0]!.id;
  assert.is(await resumeAfterEvacuateUnsent(s), 'resolved');
  assert.is(s.nova.evacuationsOf(id), 1);
  s.nova.stop();
});

/**
 * Crashes the run right after its evacuate reached Nova, gives Nova `settleMs`
 * to finish with it, and resumes; resolves with the resumed run's outcome.
 */
async function resumeAfterEvacuateSent(s: Scenario, settleMs: number, beforeResume = (): void => {}): Promise<string> {
  const evacuate = s.nova.evacuate.bind(s.nova);
  s.nova.evacuate = async (...args) => {
    await evacuate(...args);
    s.engine.crashAfterSteps(0);
  };
  assert.is(await runOnce(s.engine), 'crashed');
  s.nova.evacuate = evacuate;
  await new Promise((r) => setTimeout(r, settleMs));
  beforeResume();
  s.engine.restart();
  return runOnce(s.engine);
}

test('an evacuation migration that failed after the intent fails the move instead of evacuating again', async () => {
  const s = scenario({ servers: [{}], evacuateMs: 30 });
  const id = s.servers[0]!.id;
  s.nova.failingRebuilds.add(id);
  const outcome = await resumeAfterEvacuateSent(s, 60, () => {
    // Nova rolled the server back to the failed host in error, as a failed rebuild can leave it.
    s.nova.servers.get(id)!.host = 'compute-1';
  });
  assert.match(outcome, /^RecoveryFailed: Failed to evacuate instances/);
  assert.is(s.nova.evacuationsOf(id), 1);
  assert.is(s.engine.vmoves()[0]!.message, `Failed to evacuate instance ${id}`);
  s.nova.stop();
});

for (const [nova, offsetMs] of [
  ['behind', -10_000],
  ['ahead of', 10_000],
] as const) {
  test(`clock skew: with Nova's clock 10 s ${nova} the engine's, a failed evacuation migration is detected and evacuate not re-sent`, async () => {
    const s = scenario({ servers: [{}], evacuateMs: 20 });
    s.nova.clockOffsetMs = offsetMs;
    const id = s.servers[0]!.id;
    s.nova.unscheduledEvacuations.add(id);
    const outcome = await resumeAfterEvacuateSent(s, 50, () => assert.is(s.nova.migrations[0]!.status, 'error'));
    assert.match(outcome, /^RecoveryFailed: Failed to evacuate instances/);
    assert.is(s.nova.evacuationsOf(id), 1, 'evacuate sent once');
    assert.is(s.engine.vmoves()[0]!.message, `Failed to evacuate instance ${id}`);
    s.nova.stop();
  });
}

test("clock skew: with Nova's clock 10 s ahead, a failed evacuation from before the intent is not taken for ours", async () => {
  const s = scenario({ servers: [{}] });
  s.nova.clockOffsetMs = 10_000;
  const id = s.servers[0]!.id;
  // An operator's evacuation of the server failed in the scheduler a few seconds before this recovery.
  s.nova.migrations.push({
    id: 0,
    uuid: 'earlier-migration',
    instance_uuid: id,
    migration_type: 'evacuation',
    source_compute: 'compute-1',
    dest_compute: null,
    status: 'error',
    created_at: new Date(Date.now() - 3_000 + 10_000).toISOString().replace('Z', '000'),
    updated_at: null,
  });
  assert.is(await resumeAfterEvacuateUnsent(s), 'resolved');
  assert.is(s.nova.evacuationsOf(id), 1);
  assert.is(s.engine.vmoves()[0]!.status, 'succeeded');
  s.nova.stop();
});

test.run();
