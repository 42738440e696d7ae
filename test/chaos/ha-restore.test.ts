// etcd restored from a snapshot under the running operator, on the
// production-shaped control plane (support/restore-run.ts says what must
// follow; docs/operations.md "Backup and restore" says what the operator does).
// Starts its own session of shape ha whatever MASAKARI_CHAOS_SHAPE says.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { restoreRun } from './support/restore-run.ts';
import { startSession, type Session } from './support/session.ts';

const say = (line: string) => process.stdout.write(`[chaos restore] ${line}\n`);
const SEED = 7_000_001;
const restore = suite<{ session?: Session }>('etcd restore');

restore.before(async (ctx) => {
  ctx.session = await startSession(say, { shape: 'ha' });
});

restore(
  'a restore mid-run: every notification final, none run twice, an Event for each rolled back or lost',
  async (ctx) => {
    const session = ctx.session;
    if (!session) throw new Error('no session');
    const r = await restoreRun(SEED, await session.context());
    say(
      `snapshot at +${r.timeline.snapshotAt}s; restore took ${r.timeline.restoreSeconds}s; every notification final ` +
        `${r.timeline.settledSeconds}s after it began; rolled back: ${r.rolledBack.length}; lost: ${r.lost.length}`,
    );
    if (r.violations.length) session.noteFailure();
    assert.ok(r.violations.length === 0, `logs in ${session.logDir}:\n${r.violations.slice(0, 25).join('\n')}`);
  },
);

restore('the replicas stop gracefully at the end, and no log line of theirs is a finding', async (ctx) => {
  const session = ctx.session;
  ctx.session = undefined;
  if (!session) throw new Error('no session');
  const problems = await session.stop();
  assert.ok(problems.length === 0, `logs in ${session.logDir}:\n${problems.slice(0, 25).join('\n')}`);
});

restore.after(async (ctx) => {
  await ctx.session?.stop();
});

restore.run();
