// Acceptance: the real OpenStack clients from PyPI work against the facade,
// unchanged. The facade runs with keystone auth against the simulator's
// Keystone, whose catalog points `instance-ha` at the facade — exactly how a
// cloud is wired. Covers the openstack CLI (python-masakariclient plugin) and
// openstacksdk's instance_ha proxy.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack, type Stack } from './support/stack.ts';
import { e2eVenv } from './support/python-env.ts';

const run = promisify(execFile);

/** What test/e2e/python/sdk_flow.py prints. */
interface SdkOut {
  segment_create: { name: string };
  segment_list: string[];
  segment_update: string;
  host_create: { name: string };
  host_list: string[];
  host_update_reserved: boolean;
  notification_create: { id: string; status: string };
  notification_list: string[];
  notification_get: { status: string; has_details: boolean };
  vmoves: string[];
  host_delete: { id: string | null; left: string[] };
  segment_delete: { id: string | null; uuid: string; host_uuid: string; listed: string[]; get_after: number | null };
}
const here = path.dirname(fileURLToPath(import.meta.url));

const cli = suite<{ stack?: Stack; venv?: string }>('openstack CLI and openstacksdk');

// uvu swallows errors thrown by hooks, so the stack starts lazily inside the
// first test and a failure to start is reported as that test's failure.
let starting: Promise<{ stack: Stack; venv: string }> | undefined;
async function ensureStack(ctx: { stack?: Stack; venv?: string }): Promise<void> {
  starting ??= (async () => {
    const venv = await e2eVenv();
    const stack = await startStack({
      prefix: 'clients',
      components: 'api,engine',
      auth: 'keystone',
      sim: {
        hosts: ['cli-host-1', 'cli-host-2', 'cli-host-3', 'sdk-host-1', 'sdk-host-2'],
        servers: [
          { name: 'vm-a', host: 'cli-host-1', metadata: { HA_Enabled: 'True' } },
          { name: 'vm-b', host: 'cli-host-1', metadata: {} },
        ],
        latencyMs: { evacuate: 200 },
      },
    });
    return { stack, venv };
  })();
  Object.assign(ctx, await starting);
}

cli.after(async (ctx) => {
  if (process.env.MASAKARI_E2E_KEEP_LOGS) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(process.env.MASAKARI_E2E_KEEP_LOGS, ctx.stack?.operator.output() ?? '');
  }
  await ctx.stack?.stop();
});

async function openstack(ctx: { stack?: Stack; venv?: string }, args: string[]): Promise<unknown> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...(ctx.stack?.sim.credentials ?? {}) };
  try {
    const r = await run(path.join(ctx.venv as string, 'bin/openstack'), [...args, '-f', 'json'], {
      env,
      timeout: 60_000,
    });
    return r.stdout.trim() === '' ? null : JSON.parse(r.stdout);
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message: string };
    throw new Error(`openstack ${args.join(' ')} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

/** For commands without a table to format (delete): their plain stdout. */
async function openstackText(ctx: { stack?: Stack; venv?: string }, args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...(ctx.stack?.sim.credentials ?? {}) };
  const r = await run(path.join(ctx.venv as string, 'bin/openstack'), args, { env, timeout: 60_000 }).catch(
    (e: { stderr?: string; message: string }) => {
      throw new Error(`openstack ${args.join(' ')} failed: ${e.stderr || e.message}`);
    },
  );
  return r.stdout;
}

async function simControl(ctx: { stack?: Stack }, method: string, route: string, body?: unknown): Promise<void> {
  const r = await fetch(`${ctx.stack?.sim.url}/_sim/${route}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  assert.ok(r.ok, `${method} /_sim/${route}: ${r.status} ${await r.text()}`);
}

const segmentNames = async (ctx: { stack?: Stack; venv?: string }): Promise<string[]> =>
  ((await openstack(ctx, ['segment', 'list'])) as Array<Record<string, unknown>>).map((x) => x.name as string);

cli('segment, host, notification and vmove commands succeed', async (ctx) => {
  await ensureStack(ctx);
  const seg = (await openstack(ctx, [
    'segment',
    'create',
    'cli-seg',
    'auto',
    'COMPUTE',
    '--description',
    'from the CLI',
  ])) as Record<string, unknown>;
  assert.is(seg.name, 'cli-seg');
  const segId = seg.uuid as string;
  const list = (await openstack(ctx, ['segment', 'list'])) as Array<Record<string, unknown>>;
  assert.ok(list.some((s) => s.name === 'cli-seg'));
  const segShown = (await openstack(ctx, ['segment', 'show', segId])) as Record<string, unknown>;
  assert.is(segShown.description, 'from the CLI');
  const upd = (await openstack(ctx, [
    'segment',
    'update',
    segId,
    '--recovery_method',
    'rh_priority',
    '--is_enabled',
    'False',
  ])) as Record<string, unknown>;
  assert.is(upd.recovery_method, 'rh_priority');
  assert.is(upd.is_enabled, false);
  const reenabled = (await openstack(ctx, [
    'segment',
    'update',
    segId,
    '--recovery_method',
    'auto',
    '--is_enabled',
    'True',
  ])) as Record<string, unknown>;
  assert.is(reenabled.is_enabled, true);

  const host = (await openstack(ctx, ['segment', 'host', 'create', 'cli-host-1', 'COMPUTE', 'SSH', segId])) as Record<
    string,
    unknown
  >;
  assert.is(host.name, 'cli-host-1');
  const hostId = host.uuid as string;
  await openstack(ctx, ['segment', 'host', 'create', 'cli-host-2', 'COMPUTE', 'SSH', segId, '--reserved', 'True']);
  const hosts = (await openstack(ctx, ['segment', 'host', 'list', segId])) as Array<Record<string, unknown>>;
  assert.equal(hosts.map((h) => h.name).sort(), ['cli-host-1', 'cli-host-2']);
  const hshow = (await openstack(ctx, ['segment', 'host', 'show', segId, hostId])) as Record<string, unknown>;
  assert.is(hshow.name, 'cli-host-1');
  const hupd = (await openstack(ctx, [
    'segment',
    'host',
    'update',
    segId,
    hostId,
    '--control_attributes',
    'IPMI',
  ])) as Record<string, unknown>;
  assert.is(hupd.control_attributes, 'IPMI');

  // The compute dies (Nova sees its service down); a monitor reports it.
  await fetch(`${ctx.stack?.sim.url}/_sim/hosts/cli-host-1/fail`, { method: 'POST' });
  const n = (await openstack(ctx, [
    'notification',
    'create',
    'COMPUTE_HOST',
    'cli-host-1',
    new Date().toISOString().slice(0, 19),
    '{"event": "STOPPED", "host_status": "NORMAL", "cluster_status": "OFFLINE"}',
  ])) as Record<string, unknown>;
  // The CLI shows the notification with a GET after the POST; the engine may have picked it up already.
  assert.ok(['new', 'running', 'finished'].includes(n.status as string), String(n.status));
  const nid = n.notification_uuid as string;
  const nlist = (await openstack(ctx, ['notification', 'list'])) as Array<Record<string, unknown>>;
  assert.ok(nlist.some((x) => x.notification_uuid === nid));

  // The engine recovers the host; the CLI (microversion 1.3) shows progress and VM moves.
  let shown: Record<string, unknown> = {};
  for (let i = 0; i < 120; i++) {
    shown = (await openstack(ctx, ['notification', 'show', nid])) as Record<string, unknown>;
    if (['finished', 'error', 'failed', 'ignored'].includes(shown.status as string)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.is(
    shown.status,
    'finished',
    `${JSON.stringify(shown)}\n${ctx.stack?.operator
      .output()
      .split('\n')
      .filter((l) => l.includes(nid))
      .join('\n')}`,
  );
  const details = shown.recovery_workflow_details as Array<{ name: string }>;
  assert.equal(
    details.map((d) => d.name),
    ['DisableComputeServiceTask', 'PrepareHAEnabledInstancesTask', 'EvacuateInstancesTask'],
  );
  const vmoves = (await openstack(ctx, ['notification', 'vmove', 'list', nid])) as Array<Record<string, unknown>>;
  assert.is(vmoves.length, 2);
  assert.ok(
    vmoves.every((v) => v.status === 'succeeded'),
    JSON.stringify(vmoves),
  );
  const one = (await openstack(ctx, ['notification', 'vmove', 'show', nid, vmoves[0]?.uuid as string])) as Record<
    string,
    unknown
  >;
  assert.is(one.source_host, 'cli-host-1');

  // Masakari's latch: the failed host is on maintenance now, until an operator clears it.
  const after = (await openstack(ctx, ['segment', 'host', 'show', segId, hostId])) as Record<string, unknown>;
  assert.is(after.on_maintenance, true);
  await openstack(ctx, ['segment', 'host', 'update', segId, hostId, '--on_maintenance', 'False']);
  assert.match(await openstackText(ctx, ['segment', 'host', 'delete', segId, hostId]), 'Host deleted: ');
  const left = (await openstack(ctx, ['segment', 'host', 'list', segId])) as Array<Record<string, unknown>>;
  assert.equal(
    left.map((h) => h.name),
    ['cli-host-2'],
  );
});

cli('segment delete: a segment without notifications goes, one under recovery answers 409', async (ctx) => {
  await ensureStack(ctx);
  // A small segment with no notification: its host, then the segment itself, can be deleted.
  const spare = (await openstack(ctx, ['segment', 'create', 'cli-seg-spare', 'auto', 'COMPUTE'])) as Record<
    string,
    unknown
  >;
  const spareId = spare.uuid as string;
  await openstack(ctx, ['segment', 'host', 'create', 'cli-host-3', 'COMPUTE', 'SSH', spareId]);
  assert.match(
    await openstackText(ctx, ['segment', 'host', 'delete', spareId, 'cli-host-3']),
    'Host deleted: cli-host-3',
  );
  assert.equal(await openstack(ctx, ['segment', 'host', 'list', spareId]), []);
  assert.match(await openstackText(ctx, ['segment', 'delete', spareId]), `Segment deleted: ${spareId}`);
  assert.not.ok((await segmentNames(ctx)).includes('cli-seg-spare'));

  // A segment whose host has a notification still new, running or in error is in use (Masakari's
  // FailoverSegmentInUse, 409). This host's nova-compute keeps reporting up, so the recovery waits
  // in DisableComputeServiceTask (up to wait_period_after_service_update, 180 s) until Nova sees it down.
  await simControl(ctx, 'POST', 'hosts', { name: 'cli-host-busy' });
  const busy = (await openstack(ctx, ['segment', 'create', 'cli-seg-busy', 'auto', 'COMPUTE'])) as Record<
    string,
    unknown
  >;
  const busyId = busy.uuid as string;
  const busyHost = (await openstack(ctx, [
    'segment',
    'host',
    'create',
    'cli-host-busy',
    'COMPUTE',
    'SSH',
    busyId,
  ])) as Record<string, unknown>;
  const n = (await openstack(ctx, [
    'notification',
    'create',
    'COMPUTE_HOST',
    'cli-host-busy',
    new Date().toISOString().slice(0, 19),
    '{"event": "STOPPED", "host_status": "NORMAL", "cluster_status": "OFFLINE"}',
  ])) as Record<string, unknown>;
  assert.ok(['new', 'running'].includes(n.status as string), String(n.status));
  // masakariclient's DeleteSegment prints the error and still exits 0.
  const refused = await openstackText(ctx, ['segment', 'delete', busyId]);
  assert.match(refused, '409');
  assert.match(refused, `Failover segment (${busyId}) can't be deleted as it is in-use to process notifications.`);
  // DeleteHost lets the error through: a non-zero exit.
  const hostRefused = await openstackText(ctx, ['segment', 'host', 'delete', busyId, 'cli-host-busy']).then(
    (out) => `exit 0: ${out}`,
    (e: Error) => e.message,
  );
  assert.match(
    hostRefused,
    `Host ${busyHost.uuid as string} can't be deleted as it is in-use to process notifications.`,
  );
  assert.ok((await segmentNames(ctx)).includes('cli-seg-busy'));

  // Once Nova reports the compute down, the recovery finishes (no servers there). A segment whose
  // notifications are all finished is no longer in use: it goes, its host with it.
  await simControl(ctx, 'POST', 'hosts/cli-host-busy/fail');
  let status = '';
  for (let i = 0; i < 120 && status !== 'finished'; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 500));
    status = ((await openstack(ctx, ['notification', 'show', n.notification_uuid as string])) as { status: string })
      .status;
    assert.ok(['new', 'running', 'finished'].includes(status), status);
  }
  assert.is(status, 'finished');
  assert.match(await openstackText(ctx, ['segment', 'delete', busyId]), `Segment deleted: ${busyId}`);
  assert.not.ok((await segmentNames(ctx)).includes('cli-seg-busy'));
});

cli('openstacksdk instance_ha proxy round trip', async (ctx) => {
  await ensureStack(ctx);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...(ctx.stack?.sim.credentials ?? {}) };
  const r = await run(
    path.join(ctx.venv as string, 'bin/python'),
    [path.join(here, 'python/sdk_flow.py'), 'sdk-host-1', 'sdk-host-2'],
    {
      env,
      timeout: 120_000,
    },
  ).catch((e: { stderr?: string; message: string }) => {
    throw new Error(`sdk_flow.py failed: ${e.stderr || e.message}`);
  });
  const out = JSON.parse(r.stdout.trim().split('\n').pop() as string) as SdkOut;
  assert.is(out.segment_create.name, 'sdk-seg');
  assert.ok(out.segment_list.includes('sdk-seg'));
  assert.is(out.segment_update, 'from sdk');
  assert.is(out.host_create.name, 'sdk-host-1');
  assert.equal(out.host_list, ['sdk-host-1']);
  assert.is(out.host_update_reserved, true);
  assert.is(out.notification_create.status, 'new');
  assert.ok(out.notification_list.includes(out.notification_create.id));
  assert.is(out.notification_get.has_details, true);
  assert.equal(out.vmoves, []);
  assert.equal(out.host_delete, { id: out.segment_delete.host_uuid, left: [] });
  assert.is(out.segment_delete.id, out.segment_delete.uuid);
  assert.not.ok(out.segment_delete.listed.includes('sdk-seg-spare'));
  assert.ok(out.segment_delete.listed.includes('sdk-seg'));
  assert.is(out.segment_delete.get_after, 404);
});

cli.run();
