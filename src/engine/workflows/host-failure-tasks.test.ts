import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RecoveryFailed, SkipRecovery } from './context.ts';
import { FAILED_HOST, scenario } from './testing/evacuation-scenario.ts';
import { novaServerError } from '../../testing/fake-nova.ts';
import { runHostFailure } from './host-failure.ts';
import { isTrueish } from './instance-selection.ts';

async function outcome(p: Promise<void>): Promise<unknown> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err;
  }
}

test('isTrueish: oslo bool_from_string true values, case-insensitive', () => {
  for (const v of ['1', 't', 'True', 'TRUE', 'on', 'y', 'Yes', ' true ']) assert.ok(isTrueish(v), v);
  for (const v of [undefined, '', '0', 'false', 'no', 'enabled']) assert.not.ok(isTrueish(v), String(v));
});

test('DisableComputeServiceTask: no PUT when already disabled with our reason and already down', async () => {
  const { engine, nova } = scenario({
    failedService: { state: 'down', status: 'disabled', disabled_reason: 'Masakari detected host failed.' },
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.not.ok(nova.callLines().some((c) => c.startsWith('updateService')));
  nova.stop();
});

test('DisableComputeServiceTask: disabled for another reason → PUT with our reason', async () => {
  const { engine, nova } = scenario({
    failedService: { state: 'down', status: 'disabled', disabled_reason: 'maintenance' },
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.is(nova.service(FAILED_HOST).disabled_reason, 'Masakari detected host failed.');
  nova.stop();
});

test('DisableComputeServiceTask: waits only until Nova reports the service down (no fixed sleep)', async () => {
  const { engine, nova } = scenario({
    failedService: { state: 'up' },
    configure: (c) => {
      c.DEFAULT.wait_period_after_service_update = 30;
      c.DEFAULT.verify_interval = 0.1;
    },
  });
  setTimeout(() => (nova.service(FAILED_HOST).state = 'down'), 300);
  const started = Date.now();
  await runHostFailure(engine.context(), engine.startFallbackRun);
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 2_000, `took ${elapsed} ms`);
  assert.is(engine.vmoves()[0]!.status, 'succeeded');
  nova.stop();
});

test('DisableComputeServiceTask: forced_down counts as down', async () => {
  const { engine, nova } = scenario({ failedService: { state: 'up' } });
  nova.service(FAILED_HOST).forced_down = true;
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.is(engine.vmoves()[0]!.status, 'succeeded');
  nova.stop();
});

test('DisableComputeServiceTask: still up after wait_period_after_service_update → fails before touching instances', async () => {
  const { engine, nova } = scenario({
    failedService: { state: 'up' },
    configure: (c) => (c.DEFAULT.wait_period_after_service_update = 0.3),
  });
  const err = await outcome(runHostFailure(engine.context(), engine.startFallbackRun));
  assert.instance(err, RecoveryFailed);
  assert.is(
    (err as Error).message,
    `Compute service on host '${FAILED_HOST}' is still reported up by Nova after 0.3 seconds; not evacuating.`,
  );
  assert.not.ok(nova.callLines().some((c) => /^(lockServer|resetState|evacuate|listServersOnHost)/.test(c)));
  assert.equal(engine.vmoves(), []);
  nova.stop();
});

test('Prepare: HA-enabled instances first, then the others, in Nova order (B2)', async () => {
  const { engine, nova, servers } = scenario({
    servers: [
      {},
      { metadata: { HA_Enabled: 'yes' } },
      { metadata: { HA_Enabled: 'False' } },
      { metadata: { HA_Enabled: '1' } },
    ],
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  const [a, b, c, d] = servers.map((s) => s.id);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [b, d, a, c],
  );
  assert.equal(
    nova.evacuations
      .slice(0, 2)
      .map((e) => e.id)
      .sort(),
    [b, d].sort(),
    'HA instances start first',
  );
  nova.stop();
});

test('Prepare: evacuate_all_instances=false keeps only HA-enabled instances, with Masakari messages', async () => {
  const { engine, nova, servers } = scenario({
    servers: [{}, { metadata: { HA_Enabled: 'True' } }],
    configure: (c) => (c.host_failure.evacuate_all_instances = false),
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[1]!.id],
  );
  const prepare = engine.progress().find((e) => e.name === 'PrepareHAEnabledInstancesTask')!;
  assert.equal(
    prepare.progressDetails.map((d) => d.progress),
    ['0.0', '0.3', '0.6', '1.0'],
  );
  nova.stop();
});

test('Prepare: a custom ha_enabled_instance_metadata_key is honoured', async () => {
  const { engine, nova, servers } = scenario({
    servers: [{ metadata: { HA_Enabled: 'True' } }, { metadata: { ha: 'on' } }],
    configure: (c) => {
      c.host_failure.evacuate_all_instances = false;
      c.host_failure.ha_enabled_instance_metadata_key = 'ha';
    },
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[1]!.id],
  );
  nova.stop();
});

test('Prepare: ignore_instances_in_error_state=true skips error instances (message only for HA ones)', async () => {
  const { engine, nova, servers } = scenario({
    servers: [{ vmState: 'error', metadata: { HA_Enabled: 'True' } }, { vmState: 'error' }, {}],
    configure: (c) => (c.host_failure.ignore_instances_in_error_state = true),
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[2]!.id],
  );
  const ignored = engine.messages().filter((m) => m.includes('Ignoring recovery'));
  assert.equal(ignored, [
    `PrepareHAEnabledInstancesTask: Ignoring recovery of HA_Enabled instance '${servers[0]!.id}' as it is in 'error' state.`,
  ]);
  nova.stop();
});

test('Prepare: ignore_instances_in_error_state=false evacuates error instances too', async () => {
  const { engine, nova } = scenario({ servers: [{ vmState: 'error' }, {}] });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.is(engine.vmoves().length, 2);
  assert.ok(engine.vmoves().every((m) => m.status === 'succeeded'));
  nova.stop();
});

test('Prepare: only error instances and ignore on → skip', async () => {
  const { engine, nova } = scenario({
    servers: [{ vmState: 'error' }],
    configure: (c) => (c.host_failure.ignore_instances_in_error_state = true),
  });
  assert.instance(await outcome(runHostFailure(engine.context(), engine.startFallbackRun)), SkipRecovery);
  nova.stop();
});

test('Prepare: tagged_flavors selects an instance whose flavor has the evacuable extra spec set true', async () => {
  const { engine, nova, servers } = scenario({
    servers: [{ metadata: {} }, { metadata: {}, flavorExtraSpecs: { evacuable: 'True' } }, { metadata: {} }],
    configure: (c) => {
      c.host_failure.evacuate_all_instances = false;
      c.host_failure.tagged_flavors = true;
    },
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[1]!.id],
  );
  assert.ok(engine.messages().includes("PrepareHAEnabledInstancesTask: Total HA Enabled instances count: '1'"));
  nova.stop();
});

test('Prepare: with the tag options off (the default) flavors, images and aggregates select nothing', async () => {
  const { engine, nova } = scenario({
    servers: [{ metadata: {}, flavorExtraSpecs: { evacuable: 'true' }, imageId: 'img-1' }],
    configure: (c) => (c.host_failure.evacuate_all_instances = false),
  });
  nova.images.set('img-1', { id: 'img-1', evacuable: 'true' });
  assert.instance(await outcome(runHostFailure(engine.context(), engine.startFallbackRun)), SkipRecovery);
  assert.is(nova.count('getImage'), 0);
  assert.is(nova.count('listAggregates'), 0);
  nova.stop();
});

test('Prepare: tagged_images selects by the Glance image property, reading each image once per recovery', async () => {
  const { engine, nova, servers } = scenario({
    servers: [
      { metadata: {}, imageId: 'img-tagged' },
      { metadata: {}, imageId: 'img-plain' },
      { metadata: {}, imageId: 'img-tagged' },
      { metadata: {} },
      { metadata: {}, imageId: 'img-gone' },
    ],
    configure: (c) => {
      c.host_failure.evacuate_all_instances = false;
      c.host_failure.tagged_images = true;
      c.host_failure.evacuable_tag = 'ha-evacuable';
    },
  });
  nova.images.set('img-tagged', { id: 'img-tagged', 'ha-evacuable': 'yes' });
  nova.images.set('img-plain', { id: 'img-plain', evacuable: 'true' });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[0]!.id, servers[2]!.id],
  );
  assert.equal(
    nova.callLines().filter((l) => l.startsWith('getImage')),
    ['getImage img-tagged', 'getImage img-plain', 'getImage img-gone'],
  );
  nova.stop();
});

test('Prepare: tagged_images fails the recovery, moving nothing, when Glance cannot say whether an image is tagged', async () => {
  const { engine, nova } = scenario({
    servers: [{ metadata: {}, imageId: 'img-1' }],
    configure: (c) => (c.host_failure.tagged_images = true),
  });
  nova.failNext('getImage', novaServerError('Service Unavailable'));
  const err = await outcome(runHostFailure(engine.context(), engine.startFallbackRun));
  assert.instance(err, RecoveryFailed);
  assert.match((err as Error).message, "Could not read image 'img-1' of instance '");
  assert.is(nova.evacuations.length, 0);
  assert.is(engine.vmoves().length, 0);
  nova.stop();
});

test('Prepare: tagged_aggregates skips the recovery of a host in no tagged aggregate', async () => {
  const { engine, nova } = scenario({
    servers: [{}],
    configure: (c) => (c.host_failure.tagged_aggregates = true),
  });
  nova.aggregates.push(
    { id: 1, name: 'agg-untagged', hosts: [FAILED_HOST], metadata: { evacuable: 'false' } },
    { id: 2, name: 'agg-tagged-elsewhere', hosts: ['compute-2'], metadata: { evacuable: 'true' } },
  );
  const err = await outcome(runHostFailure(engine.context(), engine.startFallbackRun));
  assert.instance(err, SkipRecovery);
  assert.is(
    (err as Error).message,
    `Skipped host '${FAILED_HOST}' recovery as it is in no aggregate with metadata 'evacuable' set true (tagged_aggregates)`,
  );
  assert.is(nova.count('listServersOnHost'), 0);
  assert.is(nova.evacuations.length, 0);
  nova.stop();
});

test('Prepare: tagged_aggregates recovers a host in a tagged aggregate with the usual selection', async () => {
  const { engine, nova, servers } = scenario({
    servers: [{ metadata: { HA_Enabled: 'True' } }, { metadata: {} }],
    configure: (c) => {
      c.host_failure.tagged_aggregates = true;
      c.host_failure.evacuate_all_instances = false;
    },
  });
  nova.aggregates.push({ id: 1, name: 'ha-hosts', hosts: [FAILED_HOST], metadata: { evacuable: 'true' } });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[0]!.id],
  );
  assert.ok(
    engine
      .messages()
      .includes(`PrepareHAEnabledInstancesTask: Host '${FAILED_HOST}' is in aggregate 'ha-hosts' tagged 'evacuable'`),
  );
  assert.is(nova.count('listAggregates'), 1);
  nova.stop();
});

test('Prepare: skip_servers_with_name never evacuates a matching instance and names it in the progress', async () => {
  const { engine, nova, servers } = scenario({
    servers: [{ name: 'web-1' }, { name: 'scratch-1' }, { name: 'web-2-tmp' }],
    configure: (c) => (c.host_failure.skip_servers_with_name = [/^scratch-/, /-tmp$/]),
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [servers[0]!.id],
  );
  assert.equal(
    nova.evacuations.map((e) => e.id),
    [servers[0]!.id],
  );
  assert.equal(
    engine.messages().filter((m) => m.includes('skip_servers_with_name')),
    [
      `PrepareHAEnabledInstancesTask: Skipping recovery of instance '${servers[1]!.id}' as its name 'scratch-1' matches skip_servers_with_name pattern '^scratch-'.`,
      `PrepareHAEnabledInstancesTask: Skipping recovery of instance '${servers[2]!.id}' as its name 'web-2-tmp' matches skip_servers_with_name pattern '-tmp$'.`,
    ],
  );
  nova.stop();
});

test('Prepare: priority_metadata_key orders the evacuation queue, higher first, ties in Masakari order', async () => {
  const { engine, nova, servers } = scenario({
    servers: [
      { metadata: {} },
      { metadata: { HA_Priority: '10' } },
      { metadata: { HA_Enabled: 'True', HA_Priority: 'high' } },
      { metadata: { HA_Priority: '-5' } },
      { metadata: { HA_Priority: ' 10 ' } },
      { metadata: { HA_Enabled: 'True' } },
    ],
    configure: (c) => {
      c.host_failure.priority_metadata_key = 'HA_Priority';
      c.DEFAULT.host_failure_recovery_threads = 1;
    },
  });
  await runHostFailure(engine.context(), engine.startFallbackRun);
  const [a, b, c, d, e, f] = servers.map((s) => s.id);
  assert.equal(
    engine.vmoves().map((m) => m.instanceUuid),
    [b, e, c, f, a, d],
  );
  assert.equal(
    nova.evacuations.map((x) => x.id),
    [b, e, c, f, a, d],
  );
  nova.stop();
});

test('Evacuate: at most host_failure_recovery_threads evacuations in flight', async () => {
  const { engine, nova } = scenario({
    servers: Array.from({ length: 7 }, () => ({})),
    configure: (c) => (c.DEFAULT.host_failure_recovery_threads = 2),
  });
  let inFlight = 0;
  let peak = 0;
  const evacuate = nova.evacuate.bind(nova);
  nova.evacuate = async (id, target, o) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await evacuate(id, target, o);
    const s = nova.servers.get(id)!;
    const done = () => new Promise<void>((r) => setTimeout(r, 5));
    while (s.taskState !== null) await done();
    inFlight--;
  };
  await runHostFailure(engine.context(), engine.startFallbackRun);
  assert.is(peak, 2);
  assert.is(nova.evacuations.length, 7);
  nova.stop();
});

test('a failing "Evacuation of instance started" write while Nova is still evacuating is no unhandled rejection', async () => {
  // Hypothesis 1 of the fault review: the status write rode along unawaited and, when it failed
  // before the evacuation returned, Node saw a rejection without a handler and main.ts exited.
  const { engine, nova } = scenario({ servers: [{}, {}], evacuateMs: 60 });
  const ctx = engine.context();
  const update = ctx.progress.update.bind(ctx.progress);
  ctx.progress.update = async (task, message, progress) => {
    if (message.startsWith('Evacuation of instance started')) {
      await new Promise((r) => setTimeout(r, 5));
      throw new Error('status write failed: API server unavailable');
    }
    return update(task, message, progress);
  };
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const err = await outcome(runHostFailure(ctx, engine.startFallbackRun));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(unhandled, []);
    // The failed write still fails the run (Masakari's generic flow failure, with the write as its cause).
    assert.instance(err, Error);
    const chain = `${(err as Error).message} ${String((err as Error).cause)}`;
    assert.match(chain, 'status write failed');
  } finally {
    process.off('unhandledRejection', onUnhandled);
    nova.stop();
  }
});

test.run();
