import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NovaConflict } from '../../openstack/types.ts';
import { FakeNova, makeServer } from '../../testing/fake-nova.ts';
import { notification, testConfig, workflowContext, world } from '../testing/fixtures.ts';
import { IgnoreRecovery, RecoveryFailed, SkipRecovery } from './context.ts';
import { runInstanceFailure, startEffectKey } from './instance-failure.ts';
import { FlowBuildError } from './tasks.ts';
import type { Config } from '../../config/config.ts';

const ID = '3f9c1c1e-0a7b-4b1a-9a57-3d2f5c1e9e01';
const vmNotification = () =>
  notification('n1', 'VM', { event: 'LIFECYCLE', vir_domain_event: 'STOPPED_FAILED', instance_uuid: ID });

async function setup(over: Parameters<typeof makeServer>[1] = {}, config?: Config) {
  const w = await world();
  const nova = new FakeNova({ stopMs: 0 });
  nova.addServer(makeServer(ID, over));
  const { ctx } = workflowContext(w, vmNotification(), nova, config ? { config } : {});
  return { w, nova, ctx };
}

const messages = (ctx: {
  progress: { entries(): Array<{ name: string; progressDetails: Array<{ message: string; progress: string }> }> };
}) =>
  ctx.progress
    .entries()
    .map((e): [string, string[]] => [e.name, e.progressDetails.map((d) => `${d.progress} ${d.message}`)]);

test('happy path: stop, start, confirm active, with Masakari texts and progress values', async () => {
  const { nova, ctx } = await setup();
  await runInstanceFailure(ctx);
  assert.equal(messages(ctx), [
    ['StopInstanceTask', [`0.0 Stopping instance: ${ID}`, `1.0 Stopped instance: '${ID}'`]],
    ['StartInstanceTask', [`0.0 Starting instance: '${ID}'`, `1.0 Instance started: '${ID}'`]],
    [
      'ConfirmInstanceActiveTask',
      [`0.0 Confirming instance '${ID}' vm_state is ACTIVE`, `1.0 Confirmed instance '${ID}' vm_state is ACTIVE`],
    ],
  ]);
  assert.equal(
    ctx.progress.entries().map((e) => [e.state, e.progress, e.run]),
    [
      ['SUCCESS', 1, 0],
      ['SUCCESS', 1, 0],
      ['SUCCESS', 1, 0],
    ],
  );
  assert.is(nova.count('stopServer'), 1);
  assert.is(nova.count('startServer'), 1);
  assert.match(ctx.progress.entries()[0]!.progressDetails[0]!.timestamp, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{6})?$/);
});

test('not HA-enabled: skipped (finished), every executed task reverted, nothing stopped', async () => {
  const { nova, ctx } = await setup({ metadata: {} });
  const err = await runInstanceFailure(ctx).catch((e) => e);
  assert.instance(err, SkipRecovery);
  assert.is(err.message, 'Skipping execution of instance recovery workflow.');
  assert.equal(messages(ctx), [
    ['StopInstanceTask', [`1.0 Skipping recovery for instance: ${ID} as it is not Ha_Enabled`]],
  ]);
  assert.is(ctx.progress.entries()[0]!.state, 'REVERTED');
  assert.is(nova.count('stopServer'), 0);
});

test('HA key gate: falsy values skip, oslo truthy values (any case) recover; process_all_instances recovers all', async () => {
  for (const v of ['False', 'no', '0', 'off', '']) {
    const { ctx } = await setup({ metadata: { HA_Enabled: v } });
    assert.instance(await runInstanceFailure(ctx).catch((e) => e), SkipRecovery, v);
  }
  for (const v of ['YES', 'on', '1', 't', 'y', 'True']) {
    const { ctx } = await setup({ metadata: { HA_Enabled: v } });
    await runInstanceFailure(ctx);
  }
  const { ctx } = await setup(
    { metadata: {} },
    testConfig((c) => (c.instance_failure.process_all_instances = true)),
  );
  await runInstanceFailure(ctx);
  const custom = await setup(
    { metadata: { HA: 'yes' } },
    testConfig((c) => (c.instance_failure.ha_enabled_instance_metadata_key = 'HA')),
  );
  await runInstanceFailure(custom.ctx);
});

test('paused and rescued instances are ignored with the upstream message', async () => {
  for (const state of ['paused', 'rescued']) {
    const { nova, ctx } = await setup({ 'OS-EXT-STS:vm_state': state });
    const err = await runInstanceFailure(ctx).catch((e) => e);
    assert.instance(err, IgnoreRecovery);
    assert.is(err.message, `Recovery of instance '${ID}' is ignored as it is in '${state}' state.`);
    assert.is(nova.count('stopServer'), 0);
  }
});

test('resized instance is reset to active before the stop', async () => {
  const { nova, ctx } = await setup({ 'OS-EXT-STS:vm_state': 'resized' });
  await runInstanceFailure(ctx);
  const order = nova.calls.map((c) => c.method).filter((m) => m === 'resetState' || m === 'stopServer');
  assert.equal(order, ['resetState', 'stopServer']);
  assert.equal(nova.calls.find((c) => c.method === 'resetState')!.args, [ID, 'active']);
});

test('already stopped: no stop call, the poll confirms at once', async () => {
  const { nova, ctx } = await setup({ 'OS-EXT-STS:vm_state': 'stopped' });
  await runInstanceFailure(ctx);
  assert.is(nova.count('stopServer'), 0);
  assert.equal(messages(ctx)[0], ['StopInstanceTask', [`1.0 Stopped instance: '${ID}'`]]);
});

test('409 on stop: continue when Nova says stopped, re-raise when it does not', async () => {
  const ok = await setup();
  ok.nova.failNext('stopServer', new NovaConflict(409, 'Conflict'));
  let flipped = false;
  ok.nova.onGet = (s) => {
    // The stop went through on Nova's side although the API answered 409.
    if (!flipped && ok.nova.count('stopServer') > 0) s['OS-EXT-STS:vm_state'] = 'stopped';
    flipped ||= ok.nova.count('stopServer') > 0;
  };
  await runInstanceFailure(ok.ctx);
  assert.ok(messages(ok.ctx)[0]![1].includes(`0.0 Conflict when stopping instance: ${ID}`));
  assert.is(ok.ctx.progress.entries()[0]!.state, 'SUCCESS');

  const bad = await setup();
  bad.nova.failNext('stopServer', new NovaConflict(409, 'Conflict'));
  const err = await runInstanceFailure(bad.ctx).catch((e) => e);
  assert.instance(err, NovaConflict);
  assert.is(bad.ctx.progress.entries()[0]!.state, 'REVERTED');
});

test('stop timeout: polls immediately, then every verify_interval, until wait_period_after_power_off', async () => {
  const { w, nova, ctx } = await setup();
  nova.onStop = () => {};
  const err = await runInstanceFailure(ctx).catch((e) => e);
  assert.instance(err, RecoveryFailed);
  assert.is(err.message, `Failed to stop instance ${ID}`);
  assert.is(nova.count('getServer'), 1 + 181);
  assert.ok(w.clock.sleeps.slice(0, 180).every((ms) => ms === 1000));
  assert.equal(messages(ctx)[0]![1].slice(-1), [`1.0 Failed to stop instance ${ID}`]);
});

test('start refuses a server that is not stopped; confirm times out after wait_period_after_power_on', async () => {
  const startOnly = testConfig(
    (c) =>
      (c.taskflow_driver_recovery_flows.instance_failure_recovery_tasks = {
        pre: [],
        main: ['start_instance_task'],
        post: [],
      }),
  );
  const a = await setup({}, startOnly);
  const err = await runInstanceFailure(a.ctx).catch((e) => e);
  assert.instance(err, RecoveryFailed);
  assert.is(err.message, `Invalid state for Instance ${ID}. Expected state: 'STOPPED', Actual state: 'active'`);

  const b = await setup();
  b.nova.onStart = () => {};
  const err2 = await runInstanceFailure(b.ctx).catch((e) => e);
  assert.is(err2.message, `Failed to start instance ${ID}`);
  assert.equal(
    b.ctx.progress.entries().map((e) => e.state),
    ['REVERTED', 'REVERTED', 'REVERTED'],
  );
});

test('unknown or misplaced task names fail flow construction with a precise detail', async () => {
  const unknown = await setup(
    {},
    testConfig((c) => (c.taskflow_driver_recovery_flows.instance_failure_recovery_tasks.main = ['start_instance_tsk'])),
  );
  const e1 = await runInstanceFailure(unknown.ctx).catch((e) => e);
  assert.instance(e1, FlowBuildError);
  assert.is(e1.message, "Failed to create instance failure flow for notification 'uuid-n1'.");
  assert.match(e1.detail, "instance_failure_recovery_tasks: unknown recovery task 'start_instance_tsk'");
  const misplaced = await setup(
    {},
    testConfig(
      (c) => (c.taskflow_driver_recovery_flows.instance_failure_recovery_tasks.post = ['evacuate_instances_task']),
    ),
  );
  const e2 = await runInstanceFailure(misplaced.ctx).catch((e) => e);
  assert.match(e2.detail, 'belongs to the host failure workflow');
  assert.is(unknown.nova.calls.length, 0);
});

test('no_op runs without appearing in the details', async () => {
  const { ctx } = await setup(
    {},
    testConfig(
      (c) => (c.taskflow_driver_recovery_flows.instance_failure_recovery_tasks.pre = ['no_op', 'stop_instance_task']),
    ),
  );
  await runInstanceFailure(ctx);
  assert.equal(
    ctx.progress.entries().map((e) => e.name),
    ['StopInstanceTask', 'StartInstanceTask', 'ConfirmInstanceActiveTask'],
  );
});

test('resume: tasks that succeeded in this run are not repeated, and a start already sent is not resent', async () => {
  const { nova, ctx } = await setup({ 'OS-EXT-STS:vm_state': 'active' });
  await ctx.progress.start('StopInstanceTask');
  await ctx.progress.finish('StopInstanceTask', 'SUCCESS');
  await ctx.progress.start('StartInstanceTask');
  await ctx.effects.intend(startEffectKey(0, ID));
  await runInstanceFailure(ctx);
  assert.is(nova.count('stopServer'), 0);
  assert.is(nova.count('startServer'), 0);
  assert.equal(
    ctx.progress.entries().map((e) => e.state),
    ['SUCCESS', 'SUCCESS', 'SUCCESS'],
  );
});

test.run();
