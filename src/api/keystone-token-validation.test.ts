// auth_strategy = keystone end to end: the api component validates
// X-Auth-Token through the real Keystone v3 client (src/openstack), logged in
// with the simulator's OS_* credentials as a deployment would be, against the
// Keystone of the simulator (tools/simulator), which issues the tokens. The
// fake-validator tests in app.test.ts pin the details; this proves the wiring.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createComponent } from './component.ts';
import type { ApiComponent } from './component.ts';
import { memoryStore } from './testing/harness.ts';
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/config.ts';
import { resolveOpenStackCredentials } from '../config/openstack-auth.ts';
import type { KubeClient } from '../k8s/client.ts';
import { createNovaClient, createOpenStackSession, createTokenValidator } from '../openstack/index.ts';
import type { OpenStackSession } from '../openstack/index.ts';
import { parseTokenInfo } from '../openstack/keystone.ts';
import { startSimulator } from '../../tools/simulator/server.ts';
import type { Simulator } from '../../tools/simulator/server.ts';
import { startComponent } from '../testing/component.ts';

interface Ctx {
  sim: Simulator;
  session: OpenStackSession;
  api: ApiComponent;
}

const keystone = suite<Ctx>('keystone tokens validated by the simulator’s Keystone', {} as Ctx);

/** The api component with auth_strategy = keystone against the simulator; `tune` adjusts the config. */
async function startKeystoneApi(
  ctx: Ctx,
  tune: (config: Config) => void = () => {},
  metrics = new Registry(),
): Promise<ApiComponent> {
  const { config } = loadConfig({ env: {} });
  config.DEFAULT.auth_strategy = 'keystone';
  tune(config);
  return startComponent(
    {
      config,
      namespace: 'test',
      kube: {} as KubeClient,
      nova: createNovaClient(ctx.session!, SESSION_SETTINGS),
      openstack: ctx.session!,
      log: pino({ level: 'silent' }),
      metrics,
      identity: 'test',
      signal: new AbortController().signal,
    },
    (app) =>
      createComponent(app, { repository: memoryStore(), listen: { host: '127.0.0.1', port: 0 }, webhook: false }),
  );
}

const SESSION_SETTINGS = { timeoutMs: 2_000, maxRetries: 1 };

keystone.before(async (ctx) => {
  ctx.sim = await startSimulator({});
  const { config } = loadConfig({ env: {} });
  const creds = resolveOpenStackCredentials(config, {
    env: ctx.sim.credentials,
    // no clouds.yaml of this machine may stand in for the simulator's OS_*
    cwd: '/nonexistent',
    home: '/nonexistent',
  });
  if (!creds) throw new Error('the simulator’s OS_* credentials were not recognised');
  ctx.session = createOpenStackSession(creds, SESSION_SETTINGS);
  ctx.api = await startKeystoneApi(ctx);
});

keystone.after(async (ctx) => {
  await ctx.api?.stop();
  await ctx.session?.close();
  await ctx.sim?.stop();
});

/** A project-scoped token from the simulator's Keystone, as `openstack token issue` gets one. */
async function issueToken(sim: Simulator, user: string, password: string, project: string): Promise<string> {
  const res = await fetch(`${sim.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: user, password, domain: { name: 'Default' } } },
        },
        scope: { project: { name: project, domain: { name: 'Default' } } },
      },
    }),
    signal: AbortSignal.timeout(2_000),
  });
  const token = res.headers.get('x-subject-token');
  if (res.status !== 201 || !token) throw new Error(`no token for ${user}: ${res.status} ${await res.text()}`);
  return token;
}

async function getSegments(api: ApiComponent, token?: string, signal = AbortSignal.timeout(5_000)) {
  const res = await fetch(`http://127.0.0.1:${api.address().port}/v1/segments`, {
    headers: token === undefined ? {} : { 'X-Auth-Token': token },
    signal,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const UNAUTHORIZED =
  '{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}';

keystone(
  'no token: keystonemiddleware’s 401, pointing at the Keystone the operator logs in to',
  async ({ sim, api }) => {
    const r = await getSegments(api);
    assert.is(r.status, 401);
    assert.is(r.text, UNAUTHORIZED);
    assert.is(r.headers.get('content-type'), 'application/json');
    assert.is(r.headers.get('www-authenticate'), `Keystone uri="${sim.authUrl}"`);
  },
);

keystone('a token Keystone does not know: the same 401', async ({ sim, api }) => {
  const r = await getSegments(api, 'bogus-token');
  assert.is(r.status, 401);
  assert.is(r.text, UNAUTHORIZED);
  assert.is(r.headers.get('www-authenticate'), `Keystone uri="${sim.authUrl}"`);
});

keystone('an admin token: 200', async ({ sim, api }) => {
  const r = await getSegments(api, await issueToken(sim, 'admin', 'admin-secret', 'admin'));
  assert.is(r.status, 200);
  assert.is(r.text, '{"segments": []}');
});

keystone('a member token: 403 with the policy message', async ({ sim, api }) => {
  const r = await getSegments(api, await issueToken(sim, 'member', 'member-secret', 'demo'));
  assert.is(r.status, 403);
  assert.is(
    r.text,
    '{"forbidden": {"code": 403, "message": "Policy doesn\'t allow os_masakari_api:segments:index to be performed."}}',
  );
});

keystone(
  'after Keystone revokes every token (the operator’s own too): a revoked one is 401, a new one 200',
  async ({ sim, api }) => {
    const token = await issueToken(sim, 'admin', 'admin-secret', 'admin');
    sim.state.revokeTokens();
    assert.is((await getSegments(api, token)).status, 401);
    assert.is((await getSegments(api, await issueToken(sim, 'admin', 'admin-secret', 'admin'))).status, 200);
  },
);

keystone('[keystone_authtoken] www_authenticate_uri names the Keystone a 401 sends clients to', async (ctx) => {
  const api = await startKeystoneApi(ctx, (c) => {
    c.keystone_authtoken.www_authenticate_uri = 'https://keystone.example.com/v3';
  });
  try {
    const r = await getSegments(api);
    assert.is(r.status, 401);
    assert.is(r.headers.get('www-authenticate'), 'Keystone uri="https://keystone.example.com/v3"');
  } finally {
    await api.stop();
  }
});

// ---- bounds on validation (keystonemiddleware auth_token has none of these but the caches) ----

const VALIDATE_PATH = '/identity/v3/auth/tokens';

/** GET /v3/auth/tokens the simulator's Keystone answered, plus those it holds unanswered. */
function keystoneValidations(sim: Simulator): number {
  const answered = sim.state.requestLog.filter((e) => e.method === 'GET' && e.path.startsWith(VALIDATE_PATH));
  const held = sim.state.holds.held().filter((h) => h.method === 'GET' && h.path.startsWith(VALIDATE_PATH));
  return answered.length + held.length;
}

/** Holds the next `count` validations at the simulator's Keystone until released. */
function holdValidations(sim: Simulator, count: number): void {
  sim.state.holds.add({ method: 'GET', path: VALIDATE_PATH, count });
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, l]) => x.labels[k] === l));
  return Number(v?.value ?? NaN);
}

/** A fresh api with its own caches and metrics; `tune` sets [keystone_authtoken]. */
async function withApi(
  ctx: Ctx,
  tune: (config: Config) => void,
  body: (api: ApiComponent, metrics: Registry) => Promise<void>,
): Promise<void> {
  const metrics = new Registry();
  const api = await startKeystoneApi(ctx, tune, metrics);
  try {
    await body(api, metrics);
  } finally {
    ctx.sim.state.holds.clear();
    await api.stop();
  }
}

keystone('single-flight: concurrent requests with one unseen token share one Keystone validation', async (ctx) => {
  const token = await issueToken(ctx.sim, 'admin', 'admin-secret', 'admin');
  await withApi(
    ctx,
    () => {},
    async (api, metrics) => {
      const before = keystoneValidations(ctx.sim);
      holdValidations(ctx.sim, 1);
      const replies = Array.from({ length: 20 }, () => getSegments(api, token));
      await until(
        '20 lookups',
        async () => (await metric(metrics, 'masakari_api_token_cache_lookups_total', { result: 'shared' })) === 19,
      );
      assert.is(await metric(metrics, 'masakari_api_token_validations_in_flight'), 1);
      ctx.sim.state.holds.release();
      for (const r of await Promise.all(replies)) assert.is(r.status, 200);
      assert.is(keystoneValidations(ctx.sim) - before, 1);
      assert.is(await metric(metrics, 'masakari_api_token_cache_lookups_total', { result: 'miss' }), 1);
      assert.is(await metric(metrics, 'masakari_api_token_validations_total', { result: 'valid' }), 1);
      assert.is(await metric(metrics, 'masakari_api_token_validations_in_flight'), 0);
    },
  );
});

keystone(
  'cap on validations in flight: one more unseen token is a 503 with Retry-After at once; a cached token is still served',
  async (ctx) => {
    const cachedToken = await issueToken(ctx.sim, 'admin', 'admin-secret', 'admin');
    await withApi(
      ctx,
      (c) => {
        c.keystone_authtoken.max_validations_in_flight = 2;
      },
      async (api, metrics) => {
        assert.is((await getSegments(api, cachedToken)).status, 200);
        holdValidations(ctx.sim, 2);
        const waiting = [getSegments(api, 'unseen-1'), getSegments(api, 'unseen-2')];
        await until('two validations held', () => ctx.sim.state.holds.held().length === 2);
        const before = keystoneValidations(ctx.sim);
        const refused = await getSegments(api, 'unseen-3');
        assert.is(refused.status, 503);
        assert.is(refused.headers.get('retry-after'), '1');
        assert.match(refused.text, 'Too many token validations are in progress; try again later.');
        assert.is(keystoneValidations(ctx.sim), before, 'the refused token never reached Keystone');
        assert.is((await getSegments(api, cachedToken)).status, 200);
        assert.is(await metric(metrics, 'masakari_api_token_validations_refused_total'), 1);
        ctx.sim.state.holds.release();
        for (const r of await Promise.all(waiting)) assert.is(r.status, 401);
        assert.is((await getSegments(api, 'unseen-3')).status, 401, 'a slot is free again');
      },
    );
  },
);

keystone('max_validations_per_second: a burst beyond it is refused, never sent to Keystone', async (ctx) => {
  await withApi(
    ctx,
    (c) => {
      c.keystone_authtoken.max_validations_in_flight = 5;
      c.keystone_authtoken.max_validations_per_second = 5;
    },
    async (api) => {
      const before = keystoneValidations(ctx.sim);
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await getSegments(api, `burst-${i}`)).status);
      const validated = keystoneValidations(ctx.sim) - before;
      // 5 saved up, plus what 5 a second refills while the 30 requests run.
      assert.ok(validated >= 5 && validated < 30, `${validated} validations`);
      assert.is(statuses.filter((s) => s === 401).length, validated);
      assert.is(statuses.filter((s) => s === 503).length, 30 - validated);
    },
  );
});

keystone('an invalid-token flood cannot evict a valid token: they are cached apart', async (ctx) => {
  const token = await issueToken(ctx.sim, 'admin', 'admin-secret', 'admin');
  await withApi(
    ctx,
    (c) => {
      c.keystone_authtoken.token_cache_size = 2;
      c.keystone_authtoken.invalid_token_cache_size = 5;
    },
    async (api, metrics) => {
      assert.is((await getSegments(api, token)).status, 200);
      for (let i = 0; i < 40; i++) assert.is((await getSegments(api, `flood-${i}`)).status, 401);
      const before = keystoneValidations(ctx.sim);
      assert.is((await getSegments(api, token)).status, 200);
      assert.is(keystoneValidations(ctx.sim), before, 'served from the cache');
      assert.is(await metric(metrics, 'masakari_api_token_cache_lookups_total', { result: 'hit' }), 1);
    },
  );
});

keystone('an invalid token is remembered for invalid_token_cache_time, then asked again', async (ctx) => {
  await withApi(
    ctx,
    (c) => {
      c.keystone_authtoken.invalid_token_cache_time = 1;
    },
    async (api) => {
      const before = keystoneValidations(ctx.sim);
      assert.is((await getSegments(api, 'twice-bogus')).status, 401);
      assert.is((await getSegments(api, 'twice-bogus')).status, 401);
      assert.is(keystoneValidations(ctx.sim) - before, 1);
      await new Promise((r) => setTimeout(r, 1_100));
      assert.is((await getSegments(api, 'twice-bogus')).status, 401);
      assert.is(keystoneValidations(ctx.sim) - before, 2);
    },
  );
});

keystone('a client that hangs up cancels its validation; one that still waits keeps it alive', async (ctx) => {
  const token = await issueToken(ctx.sim, 'admin', 'admin-secret', 'admin');
  await withApi(
    ctx,
    () => {},
    async (api, metrics) => {
      holdValidations(ctx.sim, 1);
      const alone = new AbortController();
      const gone = getSegments(api, 'hung-up', alone.signal).catch((e: unknown) => e);
      await until('the validation held', () => ctx.sim.state.holds.held().length === 1);
      alone.abort();
      await gone;
      await until(
        'the validation cancelled',
        async () => (await metric(metrics, 'masakari_api_token_validations_total', { result: 'cancelled' })) === 1,
      );
      assert.is(await metric(metrics, 'masakari_api_token_validations_in_flight'), 0);
      ctx.sim.state.holds.release();
      assert.is((await getSegments(api, 'hung-up')).status, 401, 'the same token later: a validation of its own');

      holdValidations(ctx.sim, 1);
      const leaving = new AbortController();
      const left = getSegments(api, token, leaving.signal).catch((e: unknown) => e);
      const staying = getSegments(api, token);
      await until(
        'both share the validation',
        async () => (await metric(metrics, 'masakari_api_token_cache_lookups_total', { result: 'shared' })) === 1,
      );
      leaving.abort();
      await left;
      ctx.sim.state.holds.release();
      assert.is((await staying).status, 200);
      assert.is(await metric(metrics, 'masakari_api_token_validations_total', { result: 'valid' }), 1);
      assert.is(await metric(metrics, 'masakari_api_token_validations_total', { result: 'cancelled' }), 1);
    },
  );
});

keystone('http_request_max_retries bounds the Keystone calls of one validation; then a 503, not a 500', async (ctx) => {
  await withApi(
    ctx,
    (c) => {
      c.keystone_authtoken.http_request_max_retries = 1;
    },
    async (api, metrics) => {
      ctx.sim.state.faults.push({ method: 'GET', path: VALIDATE_PATH, count: 5, kind: 503 });
      const before = keystoneValidations(ctx.sim);
      const r = await getSegments(api, 'keystone-down');
      ctx.sim.state.faults = [];
      assert.is(r.status, 503);
      assert.match(r.text, 'The Keystone service is temporarily unavailable.');
      assert.is(keystoneValidations(ctx.sim) - before, 2);
      assert.is(await metric(metrics, 'masakari_api_token_validations_total', { result: 'error' }), 1);
    },
  );
});

keystone(
  'is_admin_project: a token that does not carry it is of the admin project, as in keystonemiddleware',
  async (ctx) => {
    const token = await issueToken(ctx.sim, 'admin', 'admin-secret', 'admin');
    const validator = createTokenValidator(ctx.session, { ...SESSION_SETTINGS, cacheTtlMs: 300_000 });
    const info = await validator.validate(token);
    assert.ok(info, 'valid');
    assert.is(info.isAdminProject, true);
    const body = (isAdminProject: unknown) => ({
      token: { expires_at: '2099-01-01T00:00:00.000000Z', is_admin_project: isAdminProject },
    });
    assert.is(parseTokenInfo(body(false)).isAdminProject, false);
    assert.is(parseTokenInfo(body(true)).isAdminProject, true);
  },
);

keystone.run();
