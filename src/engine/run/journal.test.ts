import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification } from '../../model/types.ts';
import { createRunJournal, pythonFloat } from './journal.ts';
import { FakeNova } from '../../testing/fake-nova.ts';
import { counterIds, notification, workflowContext, world } from '../testing/fixtures.ts';

const setup = async (run = 0) => {
  const w = await world();
  const { ctx } = workflowContext(w, notification('n1', 'COMPUTE_HOST', {}), new FakeNova(), { run });
  return { w, ctx, stored: () => w.kube.peek<Notification>(RESOURCES.notifications, 'n1') };
};

test('progress: RUNNING without details, details with Python timestamps and string progress, final states', async () => {
  const { ctx, stored } = await setup(2);
  await ctx.progress.start('DisableComputeServiceTask');
  assert.equal(ctx.progress.entries(), [
    { name: 'DisableComputeServiceTask', progress: 0, progressDetails: [], state: 'RUNNING', run: 2 },
  ]);
  assert.is(stored().status?.recoveryWorkflowDetails, undefined, 'RUNNING is stored with the next write');
  await ctx.progress.update('DisableComputeServiceTask', "Disabling compute service on host: 'h'", 0.0);
  assert.is(stored().status?.recoveryWorkflowDetails?.[0]?.state, 'RUNNING', '... the first progress line');
  await ctx.progress.update('DisableComputeServiceTask', "Disabled compute service on host: 'h'", 1.0);
  await ctx.progress.finish('DisableComputeServiceTask', 'SUCCESS');
  const e = stored().status?.recoveryWorkflowDetails?.[0];
  assert.is(e?.state, 'SUCCESS');
  assert.is(e?.progress, 1);
  assert.equal(
    e?.progressDetails.map((d) => [d.timestamp, d.progress, d.message]),
    [
      ['2026-01-02 03:04:05.678000', '0.0', "Disabling compute service on host: 'h'"],
      ['2026-01-02 03:04:05.678000', '1.0', "Disabled compute service on host: 'h'"],
    ],
  );
  assert.equal(ctx.progress.entries().length, 1);
});

test('vmoves: pending rows with allocated ids, idempotent per instance within a run, updates stamped', async () => {
  const { ctx, stored } = await setup();
  const moves = [
    { instanceUuid: 'i-1', instanceName: 'one', sourceHost: 'h' },
    { instanceUuid: 'i-2', instanceName: 'two', sourceHost: 'h' },
  ];
  const first = await ctx.vmoves.addPending(moves);
  const again = await ctx.vmoves.addPending([...moves, { instanceUuid: 'i-3', instanceName: null, sourceHost: 'h' }]);
  assert.equal(
    again.slice(0, 2).map((m) => m.uuid),
    first.map((m) => m.uuid),
  );
  assert.is(new Set(again.map((m) => m.id)).size, 3);
  assert.equal(
    again.map((m) => [m.status, m.type, m.run, m.createdAt, m.updatedAt]),
    Array(3).fill(['pending', 'evacuation', 0, '2026-01-02T03:04:05Z', null]),
  );
  const updated = await ctx.vmoves.update(first[0]!.uuid, {
    status: 'ongoing',
    startTime: '2026-01-02T03:04:05.678000Z',
  });
  assert.is(updated.status, 'ongoing');
  assert.is(updated.updatedAt, '2026-01-02T03:04:05Z');
  assert.is(stored().status?.vmoves?.length, 3);
  assert.is(ctx.vmoves.list().length, 3);
  assert.instance(await ctx.vmoves.update('nope', { status: 'failed' }).catch((e) => e), Error);
});

test('vmoves of an earlier run are not part of this run (B1 fixed)', async () => {
  const w = await world();
  const old = workflowContext(w, notification('n1', 'COMPUTE_HOST', {}), new FakeNova(), { run: 0 });
  await old.ctx.vmoves.addPending([{ instanceUuid: 'i-1', instanceName: null, sourceHost: 'h' }]);
  await old.ctx.vmoves.update(old.ctx.vmoves.list()[0]!.uuid, { status: 'failed' });
  const next = createRunJournal(old.writer, 1, counterIds, w.clock);
  assert.equal(next.vmoves.list(), []);
  const added = await next.vmoves.addPending([{ instanceUuid: 'i-1', instanceName: null, sourceHost: 'h' }]);
  assert.is(added[0]!.status, 'pending');
  assert.is(added[0]!.run, 1);
});

test('effects: intend then done keeps the data, keys by prefix', async () => {
  const { ctx } = await setup();
  await ctx.effects.intend('evacuate:a', { target: null });
  await ctx.effects.intend('lock:a');
  assert.equal(ctx.effects.get('evacuate:a')?.state, 'intended');
  await ctx.effects.done('evacuate:a');
  assert.equal(ctx.effects.get('evacuate:a')?.data, { target: null });
  assert.is(ctx.effects.get('evacuate:a')?.state, 'done');
  assert.equal(ctx.effects.keys('lock:'), ['lock:a']);
  assert.is(ctx.effects.get('missing'), undefined);
});

test('progress values print like Python floats', () => {
  assert.is(pythonFloat(1), '1.0');
  assert.is(pythonFloat(0), '0.0');
  assert.is(pythonFloat(0.3), '0.3');
});

test.run();
