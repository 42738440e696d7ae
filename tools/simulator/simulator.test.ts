import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'undici';
import type { Simulator } from './server.ts';
import { startSimulator } from './server.ts';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function call(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await request(url, {
    method: method as 'GET',
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const password = (user: string, pw: string, project: string) => ({
  auth: {
    identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password: pw } } },
    scope: { project: { name: project, domain: { name: 'Default' } } },
  },
});

async function login(sim: Simulator, user = 'admin', pw = 'admin-secret', project = 'admin'): Promise<string> {
  const r = await call(`${sim.authUrl}/auth/tokens`, 'POST', password(user, pw, project));
  assert.is(r.status, 201);
  return r.headers['x-subject-token'] as string;
}

function nova(sim: Simulator, token: string, version = '2.53') {
  return (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
    call(`${sim.url}/compute/v2.1${path}`, method, body, {
      'x-auth-token': token,
      'openstack-api-version': `compute ${version}`,
      ...extra,
    });
}

const waitFor = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

// ---------------------------------------------------------------------------
const keystone = suite<{ sim: Simulator }>('simulator keystone');
keystone.before.each(async (ctx) => {
  ctx.sim = await startSimulator({ hosts: ['cpu1'], masakariUrl: 'http://127.0.0.1:15868/v1' });
});
keystone.after.each(async (ctx) => ctx.sim.stop());

keystone('password login returns X-Subject-Token and a catalog with nova, glance and masakari', async ({ sim }) => {
  const r = await call(`${sim.authUrl}/auth/tokens`, 'POST', password('admin', 'admin-secret', 'admin'));
  assert.is(r.status, 201);
  assert.ok(r.headers['x-subject-token']);
  assert.equal(r.body.token.project.name, 'admin');
  assert.ok(r.body.token.roles.some((x: { name: string }) => x.name === 'admin'));
  const types = r.body.token.catalog.map((e: { type: string; name: string }) => `${e.type}:${e.name}`);
  assert.ok(types.includes('compute:nova'));
  assert.ok(types.includes('image:glance'));
  assert.ok(types.includes('instance-ha:masakari'));
  const ha = r.body.token.catalog.find((e: { type: string }) => e.type === 'instance-ha');
  assert.is(ha.endpoints[0].url, 'http://127.0.0.1:15868/v1');
  assert.is(ha.endpoints[0].region_id, 'RegionOne');
});

keystone('wrong password is 401 with a Keystone error body', async ({ sim }) => {
  const r = await call(`${sim.authUrl}/auth/tokens`, 'POST', password('admin', 'nope', 'admin'));
  assert.is(r.status, 401);
  assert.equal(r.body.error.code, 401);
  assert.is(r.body.error.title, 'Unauthorized');
});

keystone('member has no role on project admin', async ({ sim }) => {
  const r = await call(`${sim.authUrl}/auth/tokens`, 'POST', password('member', 'member-secret', 'admin'));
  assert.is(r.status, 401);
});

keystone('application credential login is scoped by the credential', async ({ sim }) => {
  const r = await call(`${sim.authUrl}/auth/tokens`, 'POST', {
    auth: {
      identity: {
        methods: ['application_credential'],
        application_credential: { id: 'admin-app-cred', secret: 'admin-app-secret' },
      },
    },
  });
  assert.is(r.status, 201);
  assert.is(r.body.token.project.id, 'admin');
  const bad = await call(`${sim.authUrl}/auth/tokens`, 'POST', {
    auth: {
      identity: { methods: ['application_credential'], application_credential: { id: 'admin-app-cred', secret: 'x' } },
    },
  });
  assert.is(bad.status, 401);
});

keystone('token validation: admin yes, member no, unknown 404, no caller 401', async ({ sim }) => {
  const admin = await login(sim);
  const member = await login(sim, 'member', 'member-secret', 'demo');
  const ok = await call(`${sim.authUrl}/auth/tokens?nocatalog`, 'GET', undefined, {
    'x-auth-token': admin,
    'x-subject-token': member,
  });
  assert.is(ok.status, 200);
  assert.is(ok.body.token.user.name, 'member');
  assert.is(ok.body.token.catalog, undefined);
  assert.equal(
    ok.body.token.roles.map((x: { name: string }) => x.name),
    ['member', 'reader'],
  );
  const forbidden = await call(`${sim.authUrl}/auth/tokens`, 'GET', undefined, {
    'x-auth-token': member,
    'x-subject-token': admin,
  });
  assert.is(forbidden.status, 403);
  const unknown = await call(`${sim.authUrl}/auth/tokens`, 'GET', undefined, {
    'x-auth-token': admin,
    'x-subject-token': 'gAAAAnope',
  });
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error.message, 'Could not find token: gAAAAnope.');
  const anonymous = await call(`${sim.authUrl}/auth/tokens`, 'GET', undefined, { 'x-subject-token': admin });
  assert.is(anonymous.status, 401);
});

keystone('tokens expire after the configured lifetime', async () => {
  const sim = await startSimulator({ tokenTtlMs: 50 });
  try {
    const t = await login(sim);
    await new Promise((r) => setTimeout(r, 80));
    const r = await nova(sim, t)('GET', '/os-services');
    assert.is(r.status, 401);
  } finally {
    await sim.stop();
  }
});

keystone('version documents', async ({ sim }) => {
  const v3 = await call(`${sim.authUrl}`, 'GET');
  assert.is(v3.status, 200);
  assert.is(v3.body.version.id, 'v3.14');
  const root = await call(`${sim.url}/identity`, 'GET');
  assert.is(root.status, 300);
  const compute = await call(`${sim.url}/compute/v2.1/`, 'GET');
  assert.is(compute.body.version.min_version, '2.1');
});

keystone.run();

// ---------------------------------------------------------------------------
const compute = suite<{ sim: Simulator; n: ReturnType<typeof nova> }>('simulator nova');
compute.before.each(async (ctx) => {
  ctx.sim = await startSimulator({
    hosts: ['cpu1', 'cpu2', 'cpu3'],
    servers: [
      { id: '11111111-1111-4111-8111-111111111111', name: 'vm1', host: 'cpu1', metadata: { HA_Enabled: 'True' } },
      { id: '22222222-2222-4222-8222-222222222222', name: 'vm2', host: 'cpu1', vm_state: 'stopped' },
      { id: '33333333-3333-4333-8333-333333333333', name: 'vm3', host: 'cpu1', vm_state: 'error' },
    ],
    latencyMs: { evacuate: 50, stop: 20, start: 20 },
  });
  ctx.n = nova(ctx.sim, await login(ctx.sim));
});
compute.after.each(async (ctx) => ctx.sim.stop());

const VM1 = '11111111-1111-4111-8111-111111111111';
const VM2 = '22222222-2222-4222-8222-222222222222';
const VM3 = '33333333-3333-4333-8333-333333333333';

compute('os-services filters by exact, case-sensitive host and returns uuids at 2.53', async ({ n }) => {
  const r = await n('GET', '/os-services?binary=nova-compute&host=cpu1');
  assert.is(r.status, 200);
  assert.is(r.body.services.length, 1);
  assert.match(r.body.services[0].id, /^[0-9a-f-]{36}$/);
  assert.is(r.body.services[0].state, 'up');
  assert.is(r.body.services[0].forced_down, false);
  const upper = await n('GET', '/os-services?binary=nova-compute&host=CPU1');
  assert.is(upper.body.services.length, 0);
  assert.is(r.headers['openstack-api-version'], 'compute 2.53');
});

compute('PUT os-services disables with a reason, sets forced_down, validates', async ({ n }) => {
  const id = (await n('GET', '/os-services?host=cpu1')).body.services[0].id;
  const r = await n('PUT', `/os-services/${id}`, {
    status: 'disabled',
    disabled_reason: 'Masakari detected host failed.',
  });
  assert.is(r.status, 200);
  assert.is(r.body.service.status, 'disabled');
  assert.is(r.body.service.disabled_reason, 'Masakari detected host failed.');
  const fd = await n('PUT', `/os-services/${id}`, { forced_down: true });
  assert.is(fd.body.service.state, 'down');
  const bad = await n('PUT', `/os-services/${id}`, { status: 'enabled', disabled_reason: 'x' });
  assert.is(bad.status, 400);
  assert.is(bad.body.badRequest.message, "Specifying 'disabled_reason' with status 'enabled' is invalid.");
  const empty = await n('PUT', `/os-services/${id}`, {});
  assert.is(empty.status, 400);
  const missing = await n('PUT', '/os-services/6f1a9a84-7e3c-4b5e-9d5e-000000000000', { status: 'enabled' });
  assert.is(missing.status, 404);
  assert.ok(missing.body.itemNotFound);
});

compute(
  "a running nova-compute's updated_at moves with its reports, forced down too; a dead one's stays",
  async ({ sim, n }) => {
    // Nova's timestamps have whole seconds: reports every second, looked at a little over a second apart
    const updated = async (host: string) =>
      (await n('GET', `/os-services?host=${host}`)).body.services[0].updated_at as string;
    const first = await updated('cpu2');
    await new Promise((r) => setTimeout(r, 1_100));
    assert.ok((await updated('cpu2')) > first, 'reported since');
    sim.state.failHost('cpu1', { forcedDown: true });
    const dead = await updated('cpu1');
    await new Promise((r) => setTimeout(r, 1_100));
    assert.is(await updated('cpu1'), dead);
    sim.state.recoverHost('cpu1');
    const back = await updated('cpu1');
    await new Promise((r) => setTimeout(r, 1_100));
    assert.ok((await updated('cpu1')) > back, 'reports again while still forced down');
  },
);

compute('evacuate is refused while the source compute service is up (ComputeServiceInUse)', async ({ sim, n }) => {
  const r = await n('POST', `/servers/${VM1}/action`, { evacuate: {} });
  assert.is(r.status, 400);
  assert.equal(r.body, { badRequest: { code: 400, message: 'Compute service of cpu1 is still in use.' } });
  assert.is(sim.state.actionCounts.evacuate?.[VM1], undefined);
  assert.is(sim.state.actionCalls.evacuate?.[VM1], 1);
});

compute('evacuate accepted when the host is down: rebuilding, then moved after the latency', async ({ sim, n }) => {
  sim.state.failHost('cpu1');
  const r = await n('POST', `/servers/${VM1}/action`, { evacuate: {} });
  assert.is(r.status, 200);
  const during = await n('GET', `/servers/${VM1}`);
  assert.is(during.body.server['OS-EXT-STS:task_state'], 'rebuilding');
  assert.is(during.body.server.status, 'REBUILD');
  assert.is(during.body.server['OS-EXT-SRV-ATTR:host'], 'cpu1');
  const mig = await n('GET', `/os-migrations?instance_uuid=${VM1}&migration_type=evacuation`);
  assert.is(mig.body.migrations[0].status, 'accepted');
  await waitFor(() => sim.state.servers.get(VM1)?.taskState === null);
  const after = await n('GET', `/servers/${VM1}`);
  assert.is(after.body.server['OS-EXT-SRV-ATTR:host'], 'cpu2');
  assert.is(after.body.server['OS-EXT-SRV-ATTR:hypervisor_hostname'], 'cpu2');
  assert.is(after.body.server['OS-EXT-STS:vm_state'], 'active');
  assert.is(after.body.server.status, 'ACTIVE');
  const done = await n('GET', `/os-migrations?instance_uuid=${VM1}`);
  assert.is(done.body.migrations[0].status, 'done');
  assert.is(done.body.migrations[0].dest_compute, 'cpu2');
  assert.is(done.body.migrations[0].migration_type, 'evacuation');
  assert.is(sim.state.actionCounts.evacuate?.[VM1], 1);
});

compute('evacuate accepted when forced_down; stopped stays stopped, error becomes active', async ({ sim, n }) => {
  const id = (await n('GET', '/os-services?host=cpu1')).body.services[0].id;
  await n('PUT', `/os-services/${id}`, { forced_down: true });
  assert.is((await n('POST', `/servers/${VM2}/action`, { evacuate: { host: 'cpu3' } })).status, 200);
  assert.is((await n('POST', `/servers/${VM3}/action`, { evacuate: {} })).status, 200);
  await waitFor(() => sim.state.servers.get(VM2)?.taskState === null && sim.state.servers.get(VM3)?.taskState === null);
  assert.is(sim.state.servers.get(VM2)?.host, 'cpu3');
  assert.is(sim.state.servers.get(VM2)?.vmState, 'stopped');
  assert.is(sim.state.servers.get(VM3)?.vmState, 'active');
});

compute(
  'evacuate at 2.95+: an active server is stopped at the target, an error one still comes back active',
  async ({ sim }) => {
    const n295 = nova(sim, await login(sim), '2.95');
    sim.state.failHost('cpu1');
    assert.is((await n295('POST', `/servers/${VM1}/action`, { evacuate: {} })).status, 200);
    assert.is((await n295('POST', `/servers/${VM3}/action`, { evacuate: {} })).status, 200);
    await waitFor(
      () => sim.state.servers.get(VM1)?.taskState === null && sim.state.servers.get(VM3)?.taskState === null,
    );
    assert.is(sim.state.servers.get(VM1)?.vmState, 'stopped');
    // nova/compute/manager.py rebuild_instance: target_state applies unless the server was in error.
    assert.is(sim.state.servers.get(VM3)?.vmState, 'active');
  },
);

compute('evacuate validation: same host 400, unknown host 404, busy server 409', async ({ sim, n }) => {
  sim.state.failHost('cpu1');
  const same = await n('POST', `/servers/${VM1}/action`, { evacuate: { host: 'cpu1' } });
  assert.is(same.status, 400);
  assert.is(same.body.badRequest.message, "The target host can't be the same one.");
  const unknown = await n('POST', `/servers/${VM1}/action`, { evacuate: { host: 'nope' } });
  assert.is(unknown.status, 404);
  assert.is(unknown.body.itemNotFound.message, 'Compute host nope not found.');
  await n('POST', `/servers/${VM1}/action`, { evacuate: {} });
  const again = await n('POST', `/servers/${VM1}/action`, { evacuate: {} });
  assert.is(again.status, 409);
  assert.is(
    again.body.conflictingRequest.message,
    `Cannot 'evacuate' instance ${VM1} while it is in task_state rebuilding`,
  );
  const extra = await n('POST', `/servers/${VM1}/action`, { evacuate: { bogus: 1 } });
  assert.is(extra.status, 400);
  const missing = await n('POST', '/servers/00000000-0000-4000-8000-000000000000/action', { evacuate: {} });
  assert.is(missing.status, 404);
  assert.is(missing.body.itemNotFound.message, 'Instance 00000000-0000-4000-8000-000000000000 could not be found.');
});

compute('evacuate with no valid target: migration error and server ERROR', async ({ sim, n }) => {
  sim.state.failHost('cpu1');
  sim.state.failHost('cpu2');
  sim.state.failHost('cpu3');
  assert.is((await n('POST', `/servers/${VM1}/action`, { evacuate: {} })).status, 200);
  await waitFor(() => sim.state.servers.get(VM1)?.taskState === null);
  assert.is(sim.state.servers.get(VM1)?.vmState, 'error');
  assert.is(sim.state.migrations[0]?.status, 'error');
});

compute('locked servers can still be evacuated by an admin; lock/unlock flag', async ({ sim, n }) => {
  assert.is((await n('POST', `/servers/${VM1}/action`, { lock: null })).status, 202);
  assert.is((await n('GET', `/servers/${VM1}`)).body.server.locked, true);
  sim.state.failHost('cpu1');
  assert.is((await n('POST', `/servers/${VM1}/action`, { evacuate: {} })).status, 200);
  assert.is((await n('POST', `/servers/${VM1}/action`, { unlock: null })).status, 202);
  assert.is((await n('GET', `/servers/${VM1}`)).body.server.locked, false);
});

compute('os-stop then os-start take the configured latency; wrong state is 409', async ({ sim, n }) => {
  assert.is((await n('POST', `/servers/${VM1}/action`, { 'os-stop': null })).status, 202);
  assert.is(sim.state.servers.get(VM1)?.taskState, 'powering-off');
  await waitFor(() => sim.state.servers.get(VM1)?.vmState === 'stopped');
  assert.is((await n('GET', `/servers/${VM1}`)).body.server['OS-EXT-STS:power_state'], 4);
  const twice = await n('POST', `/servers/${VM1}/action`, { 'os-stop': null });
  assert.is(twice.status, 409);
  assert.is(twice.body.conflictingRequest.message, `Cannot 'stop' instance ${VM1} while it is in vm_state stopped`);
  assert.is((await n('POST', `/servers/${VM1}/action`, { 'os-start': null })).status, 202);
  await waitFor(() => sim.state.servers.get(VM1)?.vmState === 'active');
});

compute('os-resetState sets vm_state and clears task_state', async ({ sim, n }) => {
  assert.is((await n('POST', `/servers/${VM1}/action`, { 'os-resetState': { state: 'error' } })).status, 202);
  assert.is(sim.state.servers.get(VM1)?.vmState, 'error');
  const bad = await n('POST', `/servers/${VM1}/action`, { 'os-resetState': { state: 'paused' } });
  assert.is(bad.status, 400);
});

compute('member: 403 on admin APIs, 404 for other projects servers', async ({ sim }) => {
  const m = nova(sim, await login(sim, 'member', 'member-secret', 'demo'));
  const svc = await m('GET', '/os-services');
  assert.is(svc.status, 403);
  assert.is(svc.body.forbidden.message, "Policy doesn't allow os_compute_api:os-services:list to be performed.");
  sim.state.addServer({ id: 'aaaaaaaa-0000-4000-8000-000000000000', name: 'adm', host: 'cpu2', project_id: 'admin' });
  assert.is((await m('GET', '/servers/aaaaaaaa-0000-4000-8000-000000000000')).status, 404);
  const own = await m('GET', `/servers/${VM1}`);
  assert.is(own.status, 200);
  assert.is(own.body.server['OS-EXT-SRV-ATTR:host'], undefined);
  assert.is((await m('POST', `/servers/${VM1}/action`, { evacuate: {} })).status, 403);
});

compute('servers/detail pages with limit/marker and servers_links', async () => {
  const sim = await startSimulator({ hosts: ['cpu1', 'cpu2'], maxLimit: 2 });
  try {
    for (let i = 0; i < 5; i++) sim.state.addServer({ name: `vm${i}`, host: 'cpu1' });
    sim.state.addServer({ name: 'other', host: 'cpu2' });
    const n = nova(sim, await login(sim));
    const seen: string[] = [];
    let path = '/servers/detail?all_tenants=True&host=cpu1';
    for (let pages = 0; pages < 10; pages++) {
      const r = await n('GET', path);
      assert.is(r.status, 200);
      seen.push(...r.body.servers.map((s: { name: string }) => s.name));
      const next = r.body.servers_links?.find((l: { rel: string }) => l.rel === 'next');
      if (!next) break;
      const u = new URL(next.href);
      assert.is(u.pathname, '/compute/v2.1/servers/detail');
      path = `/servers/detail${u.search}`;
    }
    assert.equal(seen.sort(), ['vm0', 'vm1', 'vm2', 'vm3', 'vm4']);
    const bad = await n('GET', '/servers/detail?all_tenants=True&marker=nope');
    assert.is(bad.status, 400);
    assert.is(bad.body.badRequest.message, 'marker [nope] not found');
  } finally {
    await sim.stop();
  }
});

compute('aggregates: add_host, 409 when already a member, 404 for unknown host', async ({ sim, n }) => {
  const agg = sim.state.addAggregate({ name: 'ha', hosts: ['cpu1'] });
  const list = await n('GET', '/os-aggregates');
  assert.equal(list.body.aggregates[0].hosts, ['cpu1']);
  const add = await n('POST', `/os-aggregates/${agg.id}/action`, { add_host: { host: 'cpu2' } });
  assert.is(add.status, 200);
  assert.equal(add.body.aggregate.hosts, ['cpu1', 'cpu2']);
  const dup = await n('POST', `/os-aggregates/${agg.id}/action`, { add_host: { host: 'cpu2' } });
  assert.is(dup.status, 409);
  assert.is(dup.body.conflictingRequest.message, `Aggregate ${agg.id} already has host cpu2.`);
  const unknown = await n('POST', `/os-aggregates/${agg.id}/action`, { add_host: { host: 'zzz' } });
  assert.is(unknown.status, 404);
  const noAgg = await n('POST', '/os-aggregates/99/action', { add_host: { host: 'cpu2' } });
  assert.is(noAgg.status, 404);
});

compute('migrations at 2.59 carry uuids and page; unknown query keys are 400', async ({ sim }) => {
  sim.state.maxLimit = 1;
  sim.state.failHost('cpu1');
  const n53 = nova(sim, await login(sim));
  await n53('POST', `/servers/${VM1}/action`, { evacuate: {} });
  await n53('POST', `/servers/${VM3}/action`, { evacuate: {} });
  const n59 = nova(sim, await login(sim), '2.59');
  const first = await n59('GET', '/os-migrations?migration_type=evacuation');
  assert.is(first.body.migrations.length, 1);
  assert.ok(first.body.migrations[0].uuid);
  assert.is(first.body.migrations[0].instance_uuid, VM3, 'newest first');
  const next = new URL(first.body.migrations_links[0].href);
  const second = await n59('GET', `/os-migrations${next.search}`);
  assert.is(second.body.migrations[0].instance_uuid, VM1);
  assert.is((await n59('GET', '/os-migrations?bogus=1')).status, 400);
  const old = await n53('GET', '/os-migrations');
  assert.is(old.body.migrations.length, 2);
  assert.is(old.body.migrations[0].uuid, undefined);
});

compute('microversion negotiation: 406 out of range, 400 malformed, echo headers', async ({ sim }) => {
  const t = await login(sim);
  const high = await nova(sim, t, '2.200')('GET', '/os-services');
  assert.is(high.status, 406);
  assert.is(
    high.body.computeFault.message,
    'Version 2.200 is not supported by the API. Minimum is 2.1 and maximum is 2.104.',
  );
  assert.is((await nova(sim, t, '2.0')('GET', '/os-services')).status, 406);
  assert.is((await nova(sim, t, 'abc')('GET', '/os-services')).status, 400);
  const legacy = await call(`${sim.url}/compute/v2.1/os-services`, 'GET', undefined, {
    'x-auth-token': t,
    'x-openstack-nova-api-version': '2.60',
  });
  assert.is(legacy.headers['x-openstack-nova-api-version'], '2.60');
  const none = await call(`${sim.url}/compute/v2.1/os-services`, 'GET', undefined, { 'x-auth-token': t });
  assert.match(String(none.body.services[0].id), /^\d+$/, 'integer ids below 2.53');
});

compute('fault injection: N failures, hang, reset, and after-effect loss', async ({ sim, n }) => {
  sim.state.faults.push({ path: '/compute/v2.1/os-services', count: 2, kind: 503 });
  assert.is((await n('GET', '/os-services')).status, 503);
  const second = await n('GET', '/os-services');
  assert.is(second.status, 503);
  assert.is(second.body.serviceUnavailable.code, 503);
  assert.is((await n('GET', '/os-services')).status, 200);

  sim.state.faults.push({ path: '/compute/v2.1/os-aggregates', count: 1, kind: 'reset' });
  const reset = await n('GET', '/os-aggregates').then(
    () => 'answered',
    () => 'connection error',
  );
  assert.is(reset, 'connection error');

  sim.state.failHost('cpu1');
  sim.state.faults.push({
    method: 'POST',
    path: `/compute/v2.1/servers/${VM1}/action`,
    count: 1,
    kind: 'hang',
    when: 'after',
  });
  const hung = await Promise.race([
    n('POST', `/servers/${VM1}/action`, { evacuate: {} }).then(
      () => 'answered',
      () => 'closed',
    ),
    new Promise((r) => setTimeout(() => r('hung'), 150)),
  ]);
  assert.is(hung, 'hung');
  assert.is(sim.state.actionCounts.evacuate?.[VM1], 1, 'the evacuation took effect although no answer came');
});

compute('fault injection by action: only the named server action fails', async ({ sim, n }) => {
  sim.state.faults.push({ path: `/compute/v2.1/servers/${VM1}/action`, action: 'unlock', count: 2, kind: 500 });
  assert.is((await n('POST', `/servers/${VM1}/action`, { lock: null })).status, 202);
  assert.is((await n('POST', `/servers/${VM1}/action`, { unlock: null })).status, 500);
  assert.is((await n('POST', `/servers/${VM1}/action`, { unlock: null })).status, 500);
  assert.is((await n('POST', `/servers/${VM1}/action`, { unlock: null })).status, 202);
});

compute(
  'holds: a held unlock is neither acted on nor answered until released; other actions pass',
  async ({ sim, n }) => {
    const c = (method: string, path: string, body?: unknown) => call(`${sim.url}/_sim${path}`, method, body);
    assert.is((await n('POST', `/servers/${VM1}/action`, { lock: null })).status, 202);
    assert.is(
      (await c('POST', '/holds', { method: 'post', path: '/compute/v2.1/servers/', action: 'unlock' })).status,
      201,
    );
    assert.is((await n('POST', `/servers/${VM1}/action`, { lock: null })).status, 202, 'another action is not held');
    let answered = 0;
    const unlock = n('POST', `/servers/${VM1}/action`, { unlock: null }).then((r) => (answered = r.status));
    await waitFor(() => sim.state.holds.held().length === 1);
    const listed = (await c('GET', '/holds')).body;
    assert.equal(listed.rules, [], 'the rule is used up');
    assert.equal(
      listed.held.map((h: { method: string; path: string; action: string }) => [h.method, h.path, h.action]),
      [['POST', `/compute/v2.1/servers/${VM1}/action`, 'unlock']],
    );
    await new Promise((r) => setTimeout(r, 50));
    assert.is(answered, 0);
    assert.is(sim.state.servers.get(VM1)?.locked, true, 'not acted on while held');
    assert.equal((await c('POST', '/holds/release', {})).body, { released: 1 });
    await unlock;
    assert.is(answered, 202);
    assert.is(sim.state.servers.get(VM1)?.locked, false);
    assert.is((await c('POST', '/holds', { path: '/compute', count: 0 })).status, 400);
    assert.is((await c('POST', '/holds', { kind: 'x' })).status, 400);
    assert.is((await c('POST', '/holds/release', { id: 'x' })).status, 400);
    await c('POST', '/holds', { path: '/compute/v2.1/os-services', count: 2 });
    const listing = n('GET', '/os-services');
    await waitFor(() => sim.state.holds.held().length === 1);
    assert.is((await c('DELETE', '/holds')).status, 204, 'drops the rule left and lets the held request through');
    assert.is((await listing).status, 200);
    assert.equal(sim.state.holds.rules, []);
  },
);

compute('control API: hosts, servers, fail/recover, latencies, counters, reset', async ({ sim }) => {
  const c = (method: string, path: string, body?: unknown) => call(`${sim.url}/_sim${path}`, method, body);
  assert.is((await c('POST', '/hosts', { name: 'cpu9' })).status, 201);
  assert.is((await c('POST', '/hosts', { name: 'cpu9' })).status, 409);
  const s = await c('POST', '/servers', { name: 'x', host: 'cpu9', metadata: { HA_Enabled: 'True' } });
  assert.is(s.status, 201);
  assert.is((await c('POST', '/servers', { name: 'x', host: 'nohost' })).status, 404);
  assert.is((await c('POST', '/servers', { host: 'cpu9' })).status, 400);
  assert.is((await c('POST', '/hosts/cpu9/fail', { forced_down: true })).body.forcedDown, true);
  const st = await c('GET', '/state');
  assert.is(st.body.hosts.find((h: { host: string }) => h.host === 'cpu9').state, 'down');
  assert.is((await c('POST', '/hosts/cpu9/recover', { forced_down: false })).body.alive, true);
  assert.is((await c('PUT', '/latencies', { evacuate: 5 })).body.evacuate, 5);
  assert.is((await c('PUT', '/latencies', { evacuate: -1 })).status, 400);
  assert.is((await c('POST', '/faults', { path: '/compute', kind: 'boom' })).status, 400);
  assert.is((await c('GET', '/counters')).status, 200);
  assert.is((await c('PUT', '/catalog', { masakari_url: 'http://127.0.0.1:9999/v1' })).status, 200);
  assert.is(sim.state.masakariUrl, 'http://127.0.0.1:9999/v1');
  assert.is((await c('PUT', '/catalog', { masakari_url: 'nope' })).status, 400);
  assert.is((await c('POST', '/reset')).status, 204);
  assert.is(sim.state.serviceOf('cpu9'), undefined);
  assert.is(sim.state.latencies.evacuate, 50);
  assert.is((await c('GET', '/nowhere')).status, 404);
});

compute('bad input is a 4xx: unknown action, prototype names, malformed JSON, bad escapes', async ({ sim, n }) => {
  const unknown = await n('POST', `/servers/${VM1}/action`, { reboot: null });
  assert.is(unknown.status, 400);
  assert.is(unknown.body.badRequest.message, 'There is no such action: reboot');
  assert.is((await n('POST', `/servers/${VM1}/action`, { toString: null })).status, 400);
  const t = await login(sim);
  const raw = await request(`${sim.url}/compute/v2.1/servers/${VM1}/action`, {
    method: 'POST',
    headers: { 'x-auth-token': t, 'content-type': 'application/json' },
    body: '{"evacuate":',
  });
  assert.is(raw.statusCode, 400);
  assert.is(JSON.parse(await raw.body.text()).badRequest.message, 'Malformed request body');
  assert.is((await n('GET', '/servers/%E0%A4%A')).status, 404);
  assert.is((await n('DELETE', '/os-services')).status, 405);
});

compute('request log records the propagated request id and microversion', async ({ sim, n }) => {
  await n('GET', '/os-services', undefined, { 'x-openstack-request-id': 'req-abc' });
  const entry = sim.state.requestLog.at(-1);
  assert.is(entry?.requestId, 'req-abc');
  assert.is(entry?.microversion, 'compute 2.53');
});

compute.run();
