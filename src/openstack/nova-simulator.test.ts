// The OpenStack client end to end against the in-process Keystone + Nova
// simulator: real HTTP, real paging, real faults.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import type { Simulator } from '../../tools/simulator/server.ts';
import { startSimulator } from '../../tools/simulator/server.ts';
import type { CallRecord } from './http.ts';
import { createNovaClient, createOpenStackSession, createTokenValidator } from './index.ts';
import type { HttpNovaClient } from './nova.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaNotFound } from './types.ts';

interface Ctx {
  sim: Simulator;
  nova: HttpNovaClient;
  calls: CallRecord[];
}

const s = suite<Ctx>('nova client against the simulator');

s.before.each(async (ctx) => {
  ctx.sim = await startSimulator({
    hosts: ['cpu1', 'cpu2', 'cpu3'],
    maxLimit: 2,
    latencyMs: { evacuate: 30, stop: 10, start: 10 },
  });
  for (let i = 0; i < 5; i++) {
    ctx.sim.state.addServer({ name: `vm${i}`, host: 'cpu1', metadata: i % 2 ? {} : { HA_Enabled: 'True' } });
  }
  ctx.sim.state.addServer({ name: 'elsewhere', host: 'cpu2' });
  ctx.calls = [];
  ctx.nova = createNovaClient(ctx.sim.clientCredentials, {
    catalogInfo: 'compute:nova:publicURL',
    region: 'RegionOne',
    timeoutMs: 300,
    maxRetries: 2,
    onCall: (r) => ctx.calls.push(r),
  });
});
s.after.each(async (ctx) => {
  await ctx.nova.session.close();
  await ctx.sim.stop();
});

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

s('the host-failure sequence Masakari runs (N3, N4, N1, N11, N7, N2, migrations)', async ({ sim, nova }) => {
  const [svc] = await nova.listServices({ host: 'cpu1', binary: 'nova-compute' });
  assert.ok(svc);
  const disabled = await nova.updateService(svc.id, {
    status: 'disabled',
    disabled_reason: 'Masakari detected host failed.',
  });
  assert.is(disabled.status, 'disabled');
  sim.state.failHost('cpu1');

  const servers = await nova.listServersOnHost('cpu1');
  assert.is(servers.length, 5, 'all pages of max_limit=2 were followed');
  assert.ok(servers.every((x) => x['OS-EXT-SRV-ATTR:host'] === 'cpu1'));

  for (const server of servers) {
    await nova.lockServer(server.id);
    await nova.evacuate(server.id, undefined);
  }
  for (const server of servers) {
    const moved = await until(
      () => nova.getServer(server.id),
      (x) => x['OS-EXT-SRV-ATTR:hypervisor_hostname'] !== 'cpu1' && x['OS-EXT-STS:task_state'] === null,
    );
    assert.is(moved['OS-EXT-STS:vm_state'], 'active');
    assert.is(moved.locked, true);
    await nova.unlockServer(server.id);
  }
  const migrations = await nova.listMigrations({ migrationType: 'evacuation', sourceCompute: 'cpu1' });
  assert.is(migrations.length, 5, 'all pages of os-migrations at 2.59');
  assert.ok(migrations.every((m) => m.status === 'done' && typeof m.uuid === 'string'));
  const one = await nova.listMigrations({ instanceUuid: servers[0]?.id as string, migrationType: 'evacuation' });
  assert.is(one.length, 1);
  for (const server of servers) assert.is(sim.state.actionCounts.evacuate?.[server.id], 1);
});

s(
  'configured at 2.95 or later, an evacuated active server still comes back active (evacuate is sent at 2.94)',
  async ({ sim }) => {
    const nova = createNovaClient(sim.clientCredentials, { microversion: '2.96', timeoutMs: 300, maxRetries: 0 });
    try {
      sim.state.failHost('cpu1');
      const [server] = await nova.listServersOnHost('cpu1');
      await nova.evacuate(server?.id as string, undefined);
      const moved = await until(
        () => nova.getServer(server?.id as string),
        (x) => x['OS-EXT-SRV-ATTR:host'] !== 'cpu1' && x['OS-EXT-STS:task_state'] === null,
      );
      assert.is(moved['OS-EXT-STS:vm_state'], 'active');
      const evacuation = sim.state.requestLog.filter((e) => e.method === 'POST' && e.path.endsWith('/action')).at(-1);
      assert.is(evacuation?.microversion, 'compute 2.94');
      const show = sim.state.requestLog.filter((e) => e.method === 'GET' && e.path.startsWith('/compute')).at(-1);
      assert.is(show?.microversion, 'compute 2.96');
    } finally {
      await nova.session.close();
    }
  },
);

s('evacuating while the source is up is NovaBadRequest with Nova’s message', async ({ sim, nova }) => {
  const id = [...sim.state.servers.values()][0]?.id as string;
  const err = await rejection(nova.evacuate(id, undefined), NovaBadRequest);
  assert.is(err.message, 'Compute service of cpu1 is still in use.');
});

s('reserved-host aggregate: add_host then 409 NovaConflict', async ({ sim, nova }) => {
  sim.state.addAggregate({ name: 'ha-agg', hosts: ['cpu1'] });
  const [agg] = await nova.listAggregates();
  assert.is(agg?.name, 'ha-agg');
  await nova.addHostToAggregate(agg?.id as number, 'cpu3');
  await rejection(nova.addHostToAggregate(agg?.id as number, 'cpu3'), NovaConflict);
});

s(
  'selector reads: flavor extra_specs and image id on the server, aggregate metadata, Glance image properties',
  async ({ sim, nova, calls }) => {
    const image = sim.state.addImage({ name: 'ha-image', properties: { evacuable: 'true', os_distro: 'fedora' } });
    sim.state.addServer({
      name: 'tagged',
      host: 'cpu3',
      image_id: image.id,
      flavor_extra_specs: { evacuable: 'True', 'hw:cpu_policy': 'shared' },
    });
    sim.state.addAggregate({ name: 'ha-hosts', hosts: ['cpu3'], metadata: { evacuable: 'true' } });
    const [server] = await nova.listServersOnHost('cpu3');
    assert.equal(server?.flavor?.extra_specs, { evacuable: 'True', 'hw:cpu_policy': 'shared' });
    assert.equal(server?.image && server.image.id, image.id);
    const [volumeBacked] = await nova.listServersOnHost('cpu2');
    assert.is(volumeBacked?.image, '');
    const aggregate = (await nova.listAggregates()).find((a) => a.name === 'ha-hosts');
    assert.equal(aggregate?.metadata, { evacuable: 'true' });
    const shown = await nova.getImage(image.id);
    assert.equal([shown.id, shown.name, shown.evacuable, shown.os_distro], [image.id, 'ha-image', 'true', 'fedora']);
    assert.ok(calls.some((c) => c.service === 'image' && c.path === '/v2/images/{id}' && c.status === 200));
    const err = await rejection(nova.getImage('no-such-image'), NovaNotFound);
    assert.is(err.message, 'No image found with ID no-such-image');
  },
);

s('a Glance GET survives an injected 503 (same timeout and retries as Nova reads)', async ({ sim, nova, calls }) => {
  const image = sim.state.addImage({ name: 'img' });
  sim.state.faults.push({ path: `/image/v2/images/${image.id}`, count: 1, kind: 503 });
  assert.is((await nova.getImage(image.id)).id, image.id);
  assert.equal(
    calls.filter((c) => c.service === 'image').map((c) => c.status),
    [503, 200],
  );
});

s('GET survives two injected 503s; the third attempt answers', async ({ sim, nova, calls }) => {
  sim.state.faults.push({ path: '/compute/v2.1/os-services', count: 2, kind: 503 });
  const services = await nova.listServices({ binary: 'nova-compute' });
  assert.is(services.length, 3);
  assert.equal(
    calls.filter((c) => c.path === '/os-services').map((c) => c.status),
    [503, 503, 200],
  );
});

s('a hung GET times out and is retried', async ({ sim, nova, calls }) => {
  sim.state.faults.push({ path: '/compute/v2.1/os-aggregates', count: 1, kind: 'hang' });
  assert.equal(await nova.listAggregates(), []);
  assert.equal(
    calls.filter((c) => c.path === '/os-aggregates').map((c) => c.error ?? c.status),
    ['timeout', 200],
  );
});

s('a POST whose answer is lost is not re-sent: Nova evacuated exactly once', async ({ sim, nova }) => {
  sim.state.failHost('cpu1');
  const id = [...sim.state.servers.values()][0]?.id as string;
  sim.state.faults.push({
    method: 'POST',
    path: `/compute/v2.1/servers/${id}/action`,
    count: 1,
    kind: 'hang',
    when: 'after',
  });
  const err = await rejection(nova.evacuate(id, undefined), NovaError);
  assert.is(err.status, 0);
  assert.is(sim.state.actionCalls.evacuate?.[id], 1);
  assert.is(sim.state.actionCounts.evacuate?.[id], 1);
});

s('a POST refused with 503 is not retried', async ({ sim, nova }) => {
  const id = [...sim.state.servers.values()][0]?.id as string;
  sim.state.faults.push({ method: 'POST', path: `/compute/v2.1/servers/${id}/action`, count: 1, kind: 503 });
  const err = await rejection(nova.stopServer(id), NovaError);
  assert.is(err.status, 503);
  assert.is(sim.state.actionCalls['os-stop'], undefined);
});

s('a lock answered 503 is sent again and the server ends locked', async ({ sim, nova, calls }) => {
  const id = [...sim.state.servers.values()][0]?.id as string;
  sim.state.faults.push({ method: 'POST', path: `/compute/v2.1/servers/${id}/action`, count: 1, kind: 503 });
  await nova.lockServer(id);
  assert.is(sim.state.servers.get(id)?.locked, true);
  assert.equal(
    calls.filter((c) => c.action === 'lock').map((c) => c.status),
    [503, 202],
  );
});

s('revoked service token: the next call logs in again transparently', async ({ sim, nova, calls }) => {
  await nova.listAggregates();
  sim.state.revokeTokens();
  await nova.listAggregates();
  assert.equal(
    calls.map((c) => `${c.service} ${c.status}`),
    ['identity 201', 'compute 200', 'compute 401', 'identity 201', 'compute 200'],
  );
});

s('request ids reach Nova', async ({ sim, nova }) => {
  await nova.getServer([...sim.state.servers.values()][0]?.id as string, { requestId: 'req-0f1e2d3c' });
  const entry = sim.state.requestLog.filter((e) => e.path.startsWith('/compute')).at(-1);
  assert.is(entry?.requestId, 'req-0f1e2d3c');
  assert.is(entry?.microversion, 'compute 2.53');
});

s('stop then start through the client', async ({ sim, nova }) => {
  const id = [...sim.state.servers.values()][0]?.id as string;
  await nova.stopServer(id);
  await until(
    () => nova.getServer(id),
    (x) => x['OS-EXT-STS:vm_state'] === 'stopped',
  );
  await nova.startServer(id);
  await until(
    () => nova.getServer(id),
    (x) => x['OS-EXT-STS:vm_state'] === 'active',
  );
  await nova.resetState(id, 'error');
  assert.is((await nova.getServer(id)).status, 'ERROR');
});

s('application credential login works against the simulator', async ({ sim }) => {
  const nova = createNovaClient(
    {
      auth_url: sim.authUrl,
      application_credential_id: 'admin-app-cred',
      application_credential_secret: 'admin-app-secret',
    },
    { timeoutMs: 300, maxRetries: 0 },
  );
  try {
    assert.is((await nova.listServices({ host: 'cpu2' })).length, 1);
  } finally {
    await nova.session.close();
  }
});

s('token validator and Nova client share one session and one login', async ({ sim }) => {
  const calls: CallRecord[] = [];
  const session = createOpenStackSession(sim.clientCredentials, {
    timeoutMs: 300,
    maxRetries: 0,
    onCall: (r) => calls.push(r),
  });
  try {
    const nova = createNovaClient(session, { timeoutMs: 300, maxRetries: 0 });
    const validator = createTokenValidator(session, {
      timeoutMs: 300,
      maxRetries: 0,
      cacheTtlMs: 60_000,
      interface: 'public',
    });
    await nova.listAggregates();
    const member = sim.state.issueToken({
      userId: 'member',
      projectId: 'demo',
      system: false,
      roles: ['member'],
      methods: ['password'],
    });
    const info = await validator.validate(member.id);
    assert.is(info?.userName, 'member');
    assert.is(info?.projectId, 'demo');
    assert.equal(info?.roles, ['member']);
    assert.is(await validator.validate('gAAAAgarbage'), null);
    assert.is(calls.filter((c) => c.method === 'POST' && c.path === '/v3/auth/tokens').length, 1);
  } finally {
    await session.close();
  }
});

s('wrong password: NovaError 401 naming Keystone', async ({ sim }) => {
  const nova = createNovaClient({ ...sim.clientCredentials, password: 'wrong' }, { timeoutMs: 300, maxRetries: 0 });
  try {
    const err = await rejection(nova.listAggregates(), NovaError);
    assert.is(err.status, 401);
    assert.match(err.message, /Keystone login failed/);
  } finally {
    await nova.session.close();
  }
});

s.run();
