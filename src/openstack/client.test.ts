// The OpenStack client against undici's MockAgent: exact requests on the wire,
// retry policy, timeouts, error translation, token caching. Which POST actions
// are retried: action-retry.test.ts.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { MockAgent } from 'undici';
import type { Interceptable } from 'undici';
import type { CallRecord } from './http.ts';
import { buildAuthRequest } from './keystone.ts';
import { TokenValidator, ValidationRefused } from './token-validator.ts';
import { HttpNovaClient } from './nova.ts';
import { OpenStackSession } from './session.ts';
import type { SessionOptions } from './session.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaForbidden, NovaNotFound } from './types.ts';

const KS = 'http://keystone.test:5000';
const NOVA = 'http://nova.test:8774';
const T0 = Date.parse('2026-11-29T12:00:00Z');

const creds = {
  auth_url: `${KS}/v3`,
  username: 'masakari',
  password: 'pw',
  project_name: 'service',
  user_domain_name: 'Default',
  project_domain_name: 'Default',
};

function tokenBody(opts: { user?: string; roles?: string[]; expiresAt?: number; issuedAt?: number } = {}) {
  return {
    token: {
      methods: ['password'],
      user: {
        id: `${opts.user ?? 'masakari'}-id`,
        name: opts.user ?? 'masakari',
        domain: { id: 'default', name: 'Default' },
      },
      project: { id: 'service-id', name: 'service', domain: { id: 'default', name: 'Default' } },
      roles: (opts.roles ?? ['admin', 'service']).map((name) => ({ id: `r-${name}`, name })),
      issued_at: new Date(opts.issuedAt ?? T0).toISOString(),
      expires_at: new Date(opts.expiresAt ?? T0 + 3_600_000).toISOString(),
      catalog: [
        {
          type: 'compute',
          name: 'nova',
          endpoints: [
            { interface: 'public', region_id: 'RegionOne', url: `${NOVA}/v2.1` },
            { interface: 'internal', region_id: 'RegionOne', url: 'http://nova-internal.test/v2.1' },
          ],
        },
      ],
    },
  };
}

function setup(extra: Partial<SessionOptions> & { microversion?: string; interface?: string } = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const ks = agent.get(KS) as Interceptable;
  const nova = agent.get(NOVA) as Interceptable;
  const calls: CallRecord[] = [];
  const delays: number[] = [];
  let now = T0;
  const { microversion, interface: iface, ...sessionExtra } = extra;
  const session = new OpenStackSession(creds, {
    dispatcher: agent,
    timeoutMs: 300,
    maxRetries: 3,
    onCall: (r) => calls.push(r),
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    now: () => now,
    ...sessionExtra,
  });
  const client = new HttpNovaClient(session, {
    catalogInfo: 'compute:nova:publicURL',
    region: 'RegionOne',
    ...(microversion ? { microversion } : {}),
    ...(iface ? { interface: iface } : {}),
  });
  const logins: unknown[] = [];
  const allowLogin = (times = 1, token = 'svc-token', body = tokenBody()) =>
    ks
      .intercept({ path: '/v3/auth/tokens', method: 'POST' })
      .reply((o) => {
        logins.push(JSON.parse(String(o.body)));
        return { statusCode: 201, data: body, responseOptions: { headers: { 'x-subject-token': token } } };
      })
      .times(times);
  return { agent, ks, nova, calls, delays, session, client, logins, allowLogin, setNow: (t: number) => (now = t) };
}

const fault = (name: string, code: number, message: string) => ({ [name]: { code, message } });

test('password login: v3 body, then X-Auth-Token, microversion headers and request id on Nova calls', async () => {
  const { nova, client, logins, allowLogin } = setup();
  allowLogin();
  let seen: Record<string, string> = {};
  nova.intercept({ path: '/v2.1/os-services?host=cpu1&binary=nova-compute', method: 'GET' }).reply((o) => {
    seen = o.headers as Record<string, string>;
    return { statusCode: 200, data: { services: [{ id: 'u1', host: 'cpu1', binary: 'nova-compute' }] } };
  });
  const services = await client.listServices({ host: 'cpu1', binary: 'nova-compute' }, { requestId: 'req-1234' });
  assert.is(services[0]?.id, 'u1');
  assert.equal(logins[0], {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: 'masakari', password: 'pw', domain: { name: 'Default' } } },
      },
      scope: { project: { name: 'service', domain: { name: 'Default' } } },
    },
  });
  assert.is(seen['x-auth-token'], 'svc-token');
  assert.is(seen['x-openstack-nova-api-version'], '2.53');
  assert.is(seen['openstack-api-version'], 'compute 2.53');
  assert.is(seen['x-openstack-request-id'], 'req-1234');
});

test('application credential bodies: by id, or by name with the owning user; no scope', () => {
  assert.equal(
    buildAuthRequest({ auth_url: KS, application_credential_id: 'ac1', application_credential_secret: 's' }),
    {
      auth: { identity: { methods: ['application_credential'], application_credential: { secret: 's', id: 'ac1' } } },
    },
  );
  assert.equal(
    buildAuthRequest({
      auth_url: KS,
      application_credential_name: 'ha',
      username: 'masakari',
      user_domain_name: 'Default',
      application_credential_secret: 's',
    }),
    {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { secret: 's', name: 'ha', user: { name: 'masakari', domain: { name: 'Default' } } },
        },
      },
    },
  );
  assert.throws(
    () => buildAuthRequest({ auth_url: KS, application_credential_name: 'ha', application_credential_secret: 's' }),
    /also needs username/,
  );
});

test('the token is reused, then refreshed 120 s before expires_at', async () => {
  const { nova, client, logins, allowLogin, setNow } = setup();
  allowLogin(2);
  nova.intercept({ path: '/v2.1/os-aggregates', method: 'GET' }).reply(200, { aggregates: [] }).times(3);
  await client.listAggregates();
  setNow(T0 + 3_600_000 - 121_000);
  await client.listAggregates();
  assert.is(logins.length, 1);
  setNow(T0 + 3_600_000 - 119_000);
  await client.listAggregates();
  assert.is(logins.length, 2);
});

test('concurrent calls share one login', async () => {
  const { nova, client, logins, allowLogin } = setup();
  allowLogin(1);
  nova.intercept({ path: '/v2.1/os-aggregates', method: 'GET' }).reply(200, { aggregates: [] }).times(5);
  await Promise.all([1, 2, 3, 4, 5].map(() => client.listAggregates()));
  assert.is(logins.length, 1);
});

test('one caller aborting does not fail another caller waiting on the same login', async () => {
  const { ks, nova, client } = setup();
  ks.intercept({ path: '/v3/auth/tokens', method: 'POST' })
    .reply(201, tokenBody(), { headers: { 'x-subject-token': 'svc-token' } })
    .delay(50);
  nova.intercept({ path: '/v2.1/os-aggregates', method: 'GET' }).reply(200, { aggregates: [] });
  const ac = new AbortController();
  const first = client.listAggregates({ signal: ac.signal });
  const second = client.listAggregates();
  ac.abort(new Error('first caller gave up'));
  assert.is((await rejection(first, Error)).message, 'first caller gave up');
  assert.equal(await second, []);
});

test('a 401 from Nova logs in again and resends once (even a POST action)', async () => {
  const { nova, client, logins, allowLogin } = setup();
  allowLogin(1, 'old');
  allowLogin(1, 'new');
  const tokens: string[] = [];
  nova
    .intercept({ path: '/v2.1/servers/s1/action', method: 'POST' })
    .reply((o) => {
      const t = (o.headers as Record<string, string>)['x-auth-token'] as string;
      tokens.push(t);
      return t === 'old' ? { statusCode: 401, data: { error: { code: 401 } } } : { statusCode: 202, data: '' };
    })
    .times(2);
  await client.lockServer('s1');
  assert.equal(tokens, ['old', 'new']);
  assert.is(logins.length, 2);
});

test('a second 401 surfaces as NovaError 401', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin(2);
  nova
    .intercept({ path: '/v2.1/os-aggregates', method: 'GET' })
    .reply(401, { error: { message: 'nope' } })
    .times(2);
  const err = await rejection(client.listAggregates(), NovaError);
  assert.is(err.status, 401);
});

test('bad Keystone credentials become NovaError 401 with Keystone’s message', async () => {
  const { ks, client } = setup();
  ks.intercept({ path: '/v3/auth/tokens', method: 'POST' }).reply(401, {
    error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' },
  });
  const err = await rejection(client.listAggregates(), NovaError);
  assert.is(err.status, 401);
  assert.match(err.message, /Keystone login failed \(HTTP 401\): The request you have made requires authentication\./);
});

test('GET is retried on 503 up to maxRetries with growing backoff, then the 503 surfaces', async () => {
  const { nova, client, allowLogin, calls, delays } = setup();
  allowLogin();
  nova
    .intercept({ path: '/v2.1/servers/s1', method: 'GET' })
    .reply(503, fault('serviceUnavailable', 503, 'busy'))
    .times(4);
  const err = await rejection(client.getServer('s1'), NovaError);
  assert.is(err.status, 503);
  assert.is(err.message, 'busy');
  const novaCalls = calls.filter((c) => c.service === 'compute');
  assert.equal(
    novaCalls.map((c) => c.attempt),
    [0, 1, 2, 3],
  );
  assert.equal(delays, [100, 200, 400]); // random 0.5 × 200·2^n
});

test('GET succeeds after a 500 and a connection error', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  nova.intercept({ path: '/v2.1/servers/s1', method: 'GET' }).reply(500, fault('computeFault', 500, 'oops'));
  nova.intercept({ path: '/v2.1/servers/s1', method: 'GET' }).replyWithError(new Error('ECONNRESET'));
  nova.intercept({ path: '/v2.1/servers/s1', method: 'GET' }).reply(200, { server: { id: 's1' } });
  assert.is((await client.getServer('s1')).id, 's1');
});

test('PUT is retried like GET', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  nova.intercept({ path: '/v2.1/os-services/u1', method: 'PUT' }).reply(502, 'bad gateway');
  nova
    .intercept({ path: '/v2.1/os-services/u1', method: 'PUT' })
    .reply(200, { service: { id: 'u1', status: 'disabled' } });
  assert.is((await client.updateService('u1', { status: 'disabled' })).status, 'disabled');
});

test('evacuate sends only the host; stop/start/lock/unlock/resetState bodies', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  const bodies: unknown[] = [];
  nova
    .intercept({ path: '/v2.1/servers/s1/action', method: 'POST' })
    .reply((o) => {
      bodies.push(JSON.parse(String(o.body)));
      return { statusCode: 202, data: '' };
    })
    .times(7);
  await client.evacuate('s1', 'cpu3');
  await client.evacuate('s1', undefined);
  await client.stopServer('s1');
  await client.startServer('s1');
  await client.lockServer('s1');
  await client.unlockServer('s1');
  await client.resetState('s1', 'error');
  assert.equal(bodies, [
    { evacuate: { host: 'cpu3' } },
    { evacuate: {} },
    { 'os-stop': null },
    { 'os-start': null },
    { lock: null },
    { unlock: null },
    { 'os-resetState': { state: 'error' } },
  ]);
});

test('a request slower than timeoutMs fails with status 0; GETs retry the timeout', async () => {
  const { nova, client, allowLogin, calls } = setup({ timeoutMs: 50, maxRetries: 1 });
  allowLogin();
  nova
    .intercept({ path: '/v2.1/servers/slow', method: 'GET' })
    .reply(200, { server: { id: 'slow' } })
    .delay(300)
    .times(2);
  const started = Date.now();
  const err = await rejection(client.getServer('slow'), NovaError);
  assert.is(err.status, 0);
  assert.match(err.message, /timed out after 50 ms/);
  assert.ok(Date.now() - started < 280, 'gave up at the deadline, not when the reply came');
  const attempts = calls.filter((c) => c.service === 'compute');
  assert.equal(
    attempts.map((c) => [c.status, c.error]),
    [
      [0, 'timeout'],
      [0, 'timeout'],
    ],
  );
});

test('error translation: 400/403/404/409 subclasses carry Nova’s message; others NovaError', async () => {
  const { nova, client, allowLogin } = setup({ maxRetries: 0 });
  allowLogin();
  const cases: Array<[number, string, unknown]> = [
    [400, 'badRequest', NovaBadRequest],
    [403, 'forbidden', NovaForbidden],
    [404, 'itemNotFound', NovaNotFound],
    [409, 'conflictingRequest', NovaConflict],
    [500, 'computeFault', NovaError],
  ];
  for (const [status, name, cls] of cases) {
    nova
      .intercept({ path: '/v2.1/servers/s1/action', method: 'POST' })
      .reply(status, fault(name, status, `m${status}`));
    const err = await rejection(client.stopServer('s1'), cls as typeof NovaError);
    assert.is(err.status, status);
    assert.is(err.message, `m${status}`);
  }
  nova
    .intercept({ path: '/v2.1/os-aggregates/7/action', method: 'POST' })
    .reply(409, fault('conflictingRequest', 409, 'Aggregate 7 already has host cpu2.'));
  await rejection(client.addHostToAggregate(7, 'cpu2'), NovaConflict);
});

test('listServersOnHost follows servers_links, taking only marker and limit from the link', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  const paths: string[] = [];
  const pageOf = (ids: string[], next?: string) => ({
    servers: ids.map((id) => ({ id })),
    ...(next ? { servers_links: [{ rel: 'next', href: next }] } : {}),
  });
  const replies = [
    pageOf(['a', 'b'], 'http://public.example/compute/v2.1/servers/detail?all_tenants=True&host=cpu1&limit=2&marker=b'),
    pageOf(['c', 'd'], 'http://public.example/compute/v2.1/servers/detail?all_tenants=True&host=cpu1&limit=2&marker=d'),
    pageOf(['e']),
  ];
  nova
    .intercept({ path: (p) => p.startsWith('/v2.1/servers/detail'), method: 'GET' })
    .reply((o) => {
      paths.push(o.path);
      return { statusCode: 200, data: replies.shift() ?? pageOf([]) };
    })
    .times(3);
  const servers = await client.listServersOnHost('cpu1');
  assert.equal(
    servers.map((s) => s.id),
    ['a', 'b', 'c', 'd', 'e'],
  );
  assert.equal(paths, [
    '/v2.1/servers/detail?all_tenants=True&host=cpu1',
    '/v2.1/servers/detail?all_tenants=True&host=cpu1&marker=b&limit=2',
    '/v2.1/servers/detail?all_tenants=True&host=cpu1&marker=d&limit=2',
  ]);
});

test('listServersOnHost drops servers Nova places on another host', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  nova.intercept({ path: (p) => p.startsWith('/v2.1/servers/detail'), method: 'GET' }).reply(200, {
    servers: [
      { id: 'a', 'OS-EXT-SRV-ATTR:host': 'cpu1' },
      { id: 'b', 'OS-EXT-SRV-ATTR:host': 'cpu9' },
    ],
  });
  assert.equal(
    (await client.listServersOnHost('cpu1')).map((s) => s.id),
    ['a'],
  );
});

test('listServersOnHost stops when Nova repeats the marker', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  const page = { servers: [{ id: 'a' }], servers_links: [{ rel: 'next', href: 'http://x/servers/detail?marker=a' }] };
  nova
    .intercept({ path: (p) => p.startsWith('/v2.1/servers/detail'), method: 'GET' })
    .reply(200, page)
    .times(2);
  assert.equal(
    (await client.listServersOnHost('cpu1')).map((s) => s.id),
    ['a'],
  );
});

test('listMigrations asks at 2.59 and pages; falls back to the configured version on 406', async () => {
  const { nova, client, allowLogin } = setup();
  allowLogin();
  const versions: string[] = [];
  nova
    .intercept({ path: (p) => p.startsWith('/v2.1/os-migrations'), method: 'GET' })
    .reply<object>((o) => {
      const v = (o.headers as Record<string, string>)['x-openstack-nova-api-version'] as string;
      versions.push(`${v} ${o.path}`);
      if (o.path.includes('marker=m1')) return { statusCode: 200, data: { migrations: [{ id: 1, uuid: 'm0' }] } };
      return {
        statusCode: 200,
        data: {
          migrations: [{ id: 2, uuid: 'm1' }],
          migrations_links: [{ rel: 'next', href: 'http://x/os-migrations?instance_uuid=s1&limit=1&marker=m1' }],
        },
      };
    })
    .times(2);
  const rows = await client.listMigrations({ instanceUuid: 's1', migrationType: 'evacuation' });
  assert.equal(
    rows.map((m) => m.uuid),
    ['m1', 'm0'],
  );
  assert.equal(versions, [
    '2.59 /v2.1/os-migrations?instance_uuid=s1&migration_type=evacuation',
    '2.59 /v2.1/os-migrations?instance_uuid=s1&migration_type=evacuation&marker=m1&limit=1',
  ]);

  nova
    .intercept({ path: (p) => p.startsWith('/v2.1/os-migrations'), method: 'GET' })
    .reply(406, fault('computeFault', 406, 'Version 2.59 is not supported'));
  nova
    .intercept({ path: '/v2.1/os-migrations?source_compute=cpu1', method: 'GET' })
    .reply(200, { migrations: [{ id: 5 }] });
  assert.equal(
    (await client.listMigrations({ sourceCompute: 'cpu1' })).map((m) => m.id),
    [5],
  );
});

test('microversion: below 2.53 is refused, a configured higher one is sent', async () => {
  const { session } = setup();
  assert.throws(() => new HttpNovaClient(session, { microversion: '2.52' }), /below the minimum 2\.53/);
  assert.throws(() => new HttpNovaClient(session, { microversion: 'latest' }), /Invalid Nova microversion/);
  const { nova, client, allowLogin } = setup({ microversion: '2.60' });
  allowLogin();
  let header = '';
  nova.intercept({ path: '/v2.1/servers/s1', method: 'GET' }).reply((o) => {
    header = (o.headers as Record<string, string>)['openstack-api-version'] as string;
    return { statusCode: 200, data: { server: { id: 's1' } } };
  });
  await client.getServer('s1');
  assert.is(header, 'compute 2.60');
});

test('interface override picks the internal endpoint; a missing endpoint is NovaError 0', async () => {
  const { agent, client, allowLogin } = setup({ interface: 'internalURL' });
  allowLogin();
  (agent.get('http://nova-internal.test') as Interceptable)
    .intercept({ path: '/v2.1/os-aggregates', method: 'GET' })
    .reply(200, { aggregates: [{ id: 1, name: 'a', hosts: [] }] });
  assert.is((await client.listAggregates())[0]?.name, 'a');

  const other = setup();
  other.allowLogin();
  const wrongRegion = new HttpNovaClient(other.session, { region: 'RegionTwo' });
  const err = await rejection(wrongRegion.listAggregates(), NovaError);
  assert.is(err.status, 0);
  assert.match(err.message, /No endpoint in the service catalog matches type=compute, name=nova/);
});

test('onCall reports service, method, path template, action, status and duration', async () => {
  const { nova, client, allowLogin, calls } = setup();
  allowLogin();
  nova.intercept({ path: '/v2.1/servers/s1/action', method: 'POST' }).reply(409, fault('conflictingRequest', 409, 'x'));
  await client.stopServer('s1').catch(() => undefined);
  const [login, stop] = calls;
  assert.equal(
    { ...login, durationMs: 0 },
    { service: 'identity', method: 'POST', path: '/v3/auth/tokens', status: 201, durationMs: 0, attempt: 0 },
  );
  assert.is(stop?.action, 'os-stop');
  assert.is(stop?.status, 409);
  assert.is(stop?.error, 'http');
  assert.ok((stop?.durationMs ?? -1) >= 0);
});

test('an aborted caller signal ends the call without retries', async () => {
  const { nova, client, allowLogin, calls } = setup();
  allowLogin();
  nova
    .intercept({ path: '/v2.1/servers/s1', method: 'GET' })
    .reply(200, { server: { id: 's1' } })
    .delay(200)
    .times(4);
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('shutting down')), 20);
  const err = await rejection(client.getServer('s1', { signal: ac.signal }), Error);
  assert.is(err.message, 'shutting down');
  assert.equal(
    calls.filter((c) => c.service === 'compute').map((c) => c.error),
    ['aborted'],
  );
});

// ---- token validation -------------------------------------------------------

function validatorSetup(opts: { cacheTtlMs?: number; maxEntries?: number; maxPerSecond?: number } = {}) {
  const s = setup();
  let now = T0;
  s.setNow(T0);
  const validator = new TokenValidator(s.session.auth, s.session.transport, {
    cacheTtlMs: opts.cacheTtlMs ?? 300_000,
    maxEntries: opts.maxEntries ?? 10,
    ...(opts.maxPerSecond !== undefined ? { maxInFlight: 1, maxPerSecond: opts.maxPerSecond } : {}),
    now: () => now,
  });
  const asked: string[] = [];
  const answer = (status: number, body: object = {}, times = 1) =>
    s.ks
      .intercept({ path: '/v3/auth/tokens?nocatalog', method: 'GET' })
      .reply((o) => {
        const h = o.headers as Record<string, string>;
        asked.push(`${h['x-auth-token']}:${h['x-subject-token']}`);
        return { statusCode: status, data: body };
      })
      .times(times);
  return {
    ...s,
    validator,
    asked,
    answer,
    setClock: (t: number) => {
      now = t;
      s.setNow(t);
    },
  };
}

test('validate returns user, project, roles, expiry and caches the answer', async () => {
  const { validator, allowLogin, answer, asked } = validatorSetup();
  allowLogin();
  answer(200, tokenBody({ user: 'alice', roles: ['member', 'reader'] }));
  const info = await validator.validate('user-token');
  assert.is(info?.userName, 'alice');
  assert.is(info?.projectName, 'service');
  assert.equal(info?.roles, ['member', 'reader']);
  assert.is(info?.systemScope, null);
  assert.is(info?.expiresAt.getTime(), T0 + 3_600_000);
  await validator.validate('user-token');
  assert.equal(asked, ['svc-token:user-token']);
});

test('a cached validation lives no longer than cacheTtlMs', async () => {
  const { validator, allowLogin, answer, asked, setClock } = validatorSetup({ cacheTtlMs: 60_000 });
  allowLogin();
  answer(200, tokenBody(), 2);
  await validator.validate('t');
  setClock(T0 + 59_000);
  await validator.validate('t');
  assert.is(asked.length, 1);
  setClock(T0 + 61_000);
  await validator.validate('t');
  assert.is(asked.length, 2);
});

test('a cached validation never outlives the token’s expires_at', async () => {
  const { validator, allowLogin, answer, asked, setClock } = validatorSetup({ cacheTtlMs: 300_000 });
  allowLogin();
  answer(200, tokenBody({ expiresAt: T0 + 10_000 }));
  answer(404, { error: { code: 404 } });
  assert.ok(await validator.validate('short'));
  setClock(T0 + 10_001);
  assert.is(await validator.validate('short'), null);
  assert.is(asked.length, 2);
});

test('404 means invalid (null), remembered briefly', async () => {
  const { validator, allowLogin, answer, asked } = validatorSetup();
  allowLogin();
  answer(404, { error: { code: 404, message: 'Could not find token: x.' } });
  assert.is(await validator.validate('x'), null);
  assert.is(await validator.validate('x'), null);
  assert.is(asked.length, 1);
});

test('the cache holds at most maxEntries tokens, evicting the least recently used', async () => {
  const { validator, allowLogin, answer, asked } = validatorSetup({ maxEntries: 2 });
  allowLogin();
  answer(200, tokenBody(), 4);
  await validator.validate('a');
  await validator.validate('b');
  await validator.validate('a'); // a is now most recent
  await validator.validate('c'); // evicts b
  assert.is(validator.cacheSize, 2);
  await validator.validate('a');
  assert.is(asked.length, 3);
  await validator.validate('b');
  assert.is(asked.length, 4);
});

test('a 401 on validation re-logs the service user in once', async () => {
  const { validator, allowLogin, answer, asked } = validatorSetup();
  allowLogin(1, 'old');
  allowLogin(1, 'new');
  answer(401, { error: { code: 401 } });
  answer(200, tokenBody());
  assert.ok(await validator.validate('u'));
  assert.equal(asked, ['old:u', 'new:u']);
});

test('Keystone failing to answer is an error, not an invalid token', async () => {
  const { validator, allowLogin, answer } = validatorSetup();
  allowLogin();
  answer(403, {
    error: { code: 403, message: 'You are not authorized to perform the requested action: identity:validate_token.' },
  });
  const err = await rejection(validator.validate('u'), Error);
  assert.match(err.message, /HTTP 403\): You are not authorized/);
});

test('a clock stepped back does not starve validations: the budget refills from the new time on', async () => {
  const { validator, allowLogin, answer, asked, setClock } = validatorSetup({ maxPerSecond: 1 });
  allowLogin();
  answer(200, tokenBody(), 2);
  await validator.validate('a');
  await rejection(validator.validate('b'), ValidationRefused);
  setClock(T0 - 3_600_000);
  await rejection(validator.validate('b'), ValidationRefused); // nothing refilled yet
  setClock(T0 - 3_600_000 + 1_000);
  assert.ok(await validator.validate('b'));
  assert.is(asked.length, 2);
});

test.run();
