import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeNova } from '../../testing/fake-nova.ts';
import { notification, testConfig, workflowContext, world } from '../testing/fixtures.ts';
import { RecoveryFailed, SkipRecovery } from './context.ts';
import { runProcessFailure } from './process-failure.ts';
import type { Config } from '../../config/config.ts';

async function setup(processName: string, config?: Config) {
  const w = await world();
  const nova = new FakeNova();
  nova.addService('compute-1');
  const n = notification('p1', 'PROCESS', { event: 'STOPPED', process_name: processName });
  const { ctx } = workflowContext(w, n, nova, config ? { config } : {});
  return { nova, ctx };
}

const details = (ctx: {
  progress: {
    entries(): Array<{ name: string; state: string; progressDetails: Array<{ message: string; progress: string }> }>;
  };
}) => ctx.progress.entries().map((e) => [e.name, e.state, e.progressDetails.map((d) => `${d.progress} ${d.message}`)]);

test('nova-compute: disables the service with the configured reason and confirms it', async () => {
  const { nova, ctx } = await setup('nova-compute');
  await runProcessFailure(ctx);
  assert.equal(nova.calls.find((c) => c.method === 'updateService')!.args, [
    'svc-compute-1-nova-compute',
    { status: 'disabled', disabled_reason: 'Masakari detected process failed.' },
  ]);
  assert.equal(details(ctx), [
    [
      'DisableComputeNodeTask',
      'SUCCESS',
      ["0.0 Disabling compute service on host: 'compute-1'", "1.0 Disabled compute service on host: 'compute-1'"],
    ],
    [
      'ConfirmComputeNodeDisabledTask',
      'SUCCESS',
      [
        "0.0 Confirming compute service is disabled on host: 'compute-1'",
        "1.0 Confirmed compute service is disabled on host: 'compute-1'",
      ],
    ],
  ]);
});

test('an already disabled service is not touched and the task still succeeds', async () => {
  const { nova, ctx } = await setup('nova-compute');
  nova.services[0]!.status = 'disabled';
  await runProcessFailure(ctx);
  assert.is(nova.count('updateService'), 0);
  assert.equal(details(ctx)[0], [
    'DisableComputeNodeTask',
    'SUCCESS',
    [
      "0.0 Disabling compute service on host: 'compute-1'",
      '1.0 Skipping recovery for process nova-compute as it is already disabled',
    ],
  ]);
});

test('any process other than nova-compute is skipped before any Nova call', async () => {
  for (const name of ['libvirtd', 'Nova-Compute', 'nova-compute ']) {
    const { nova, ctx } = await setup(name);
    const err = await runProcessFailure(ctx).catch((e) => e);
    assert.instance(err, SkipRecovery);
    assert.is(err.message, 'Skipping execution of process recovery workflow.');
    assert.is(nova.calls.length, 0);
    assert.equal(ctx.progress.entries(), []);
  }
});

test('confirm times out after wait_period_after_service_update when Nova never shows it disabled', async () => {
  const { nova, ctx } = await setup(
    'nova-compute',
    testConfig((c) => (c.DEFAULT.wait_period_after_service_update = 5)),
  );
  nova.onListServices = () => {
    if (nova.count('updateService') > 0) nova.services[0]!.status = 'enabled';
  };
  const err = await runProcessFailure(ctx).catch((e) => e);
  assert.instance(err, RecoveryFailed);
  assert.is(err.message, 'Failed to disable service nova-compute');
  assert.is(nova.count('listServices'), 1 + 6);
  assert.equal(
    details(ctx).map((d) => d[1]),
    ['REVERTED', 'REVERTED'],
  );
});

test('an empty service reason sends no disabled_reason; a missing service is a clear error', async () => {
  const { nova, ctx } = await setup(
    'nova-compute',
    testConfig((c) => (c.process_failure.service_disable_reason = '')),
  );
  await runProcessFailure(ctx);
  assert.equal(nova.calls.find((c) => c.method === 'updateService')!.args[1], { status: 'disabled' });
  const none = await setup('nova-compute');
  none.nova.services.length = 0;
  const err = await runProcessFailure(none.ctx).catch((e) => e);
  assert.match(err.message, "No Nova service with binary 'nova-compute' on host 'compute-1'");
});

test.run();
