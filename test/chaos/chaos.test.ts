// The chaos suite (issue 10): seeded runs of host-failure recoveries while
// processes are killed and frozen (the leader also while Nova holds its
// unlock), kube-apiserver stalls and restarts, Nova fails, and one engine runs
// on a skewed wall clock (support/schedule.ts lists the faults); each run must
// end with every invariant in support/invariants.ts and support/process-checks.ts
// holding. docs/operations.md states the failure model.
//   MASAKARI_CHAOS_SEED=N           one run with seed N (reproduces its faults)
//   MASAKARI_CHAOS_RUNS=K           runs in this session (default 20)
//   MASAKARI_CHAOS_BASE_SEED=B      seeds B..B+K-1 (default: a random base, printed)
//   MASAKARI_CHAOS_SHAPE=ha         on three etcd members and two kube-apiservers behind a balancer,
//                                   with their faults too (support/schedule.ts HA_FAULT_KINDS)
//   MASAKARI_CHAOS_QUICK=1          shape ha's quorum losses last 10-20 s, not 10-60 s (make test's seeds)
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chaosShape, sessionSeeds, startSession, type Session } from './support/session.ts';

const say = (line: string) => process.stdout.write(`[chaos] ${line}\n`);
const seeds = sessionSeeds(Number(process.env.MASAKARI_CHAOS_RUNS) || 20);
const reproduce = (seed: number): string =>
  `${chaosShape() === 'ha' ? 'MASAKARI_CHAOS_SHAPE=ha ' : ''}MASAKARI_CHAOS_SEED=${seed}`;
const chaos = suite<{ session?: Session }>('chaos');

chaos.before(async (ctx) => {
  say(`${chaosShape()} control plane, seeds ${seeds.join(', ')} (${reproduce(0).replace('=0', '=N')} reproduces one)`);
  ctx.session = await startSession(say);
});

for (const seed of seeds) {
  chaos(`seed ${seed}: every invariant holds after the faults`, async (ctx) => {
    const session = ctx.session;
    if (!session) throw new Error('no chaos session');
    const result = await session.run(seed);
    say(`seed ${seed}: ${result.violations.length ? 'FAILED' : 'ok'} in ${(result.durationMs / 1000).toFixed(1)} s`);
    for (const v of result.violations.slice(0, 10)) say(`  ${v.slice(0, 800)}`);
    const shown = result.violations.slice(0, 25).map((v) => v.slice(0, 1_500));
    const more = result.violations.length - shown.length;
    assert.ok(
      result.violations.length === 0,
      `seed ${seed} (${reproduce(seed)} reproduces it; logs in ${session.logDir}):\n${shown.join('\n')}${more > 0 ? `\n... and ${more} more` : ''}`,
    );
  });
}

chaos('the replicas stop gracefully at the end, and no log line of theirs is a finding', async (ctx) => {
  const session = ctx.session;
  ctx.session = undefined;
  if (!session) throw new Error('no chaos session');
  const problems = await session.stop();
  assert.ok(problems.length === 0, `logs in ${session.logDir}:\n${problems.slice(0, 25).join('\n')}`);
});

chaos.after(async (ctx) => {
  await ctx.session?.stop(); // only when the last test did not run
});

chaos.run();
