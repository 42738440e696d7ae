// auth_strategy = keystone end to end: the api component validates
// X-Auth-Token through the real Keystone v3 client (src/openstack), logged in
// with the simulator's OS_* credentials as a deployment would be, against the
// Keystone of the simulator (src/simulator), which issues the tokens. The
// fake-validator tests in app.test.ts pin the details; this proves the wiring.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createComponent } from './component.ts';
import type { ApiComponent } from './component.ts';
import { MemoryRepository } from '../domain/testing/memory-repository.ts';
import type { ApiRepository } from './component.ts';
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/config.ts';
import { resolveOpenStackCredentials } from '../config/openstack-auth.ts';
import type { KubeClient } from '../k8s/client.ts';
import { createNovaClient, createOpenStackSession } from '../openstack/index.ts';
import type { OpenStackSession } from '../openstack/index.ts';
import { startSimulator } from '../simulator/server.ts';
import type { Simulator } from '../simulator/server.ts';

interface Ctx {
  sim: Simulator;
  session: OpenStackSession;
  api: ApiComponent;
}

const keystone = suite<Ctx>('keystone tokens validated by the simulator’s Keystone', {} as Ctx);

function memoryStore(): ApiRepository {
  const repo = new MemoryRepository() as MemoryRepository & ApiRepository;
  repo.start = async () => undefined;
  repo.stop = () => undefined;
  repo.ready = () => true;
  return repo;
}

/** The api component with auth_strategy = keystone against the simulator; `tune` adjusts the config. */
async function startKeystoneApi(ctx: Ctx, tune: (config: Config) => void = () => {}): Promise<ApiComponent> {
  const { config } = loadConfig({ env: {} });
  config.DEFAULT.auth_strategy = 'keystone';
  tune(config);
  return createComponent(
    {
      config,
      namespace: 'test',
      kube: {} as KubeClient,
      nova: createNovaClient(ctx.session!, SESSION_SETTINGS),
      openstack: ctx.session!,
      log: pino({ level: 'silent' }),
      metrics: new Registry(),
      identity: 'test',
      signal: new AbortController().signal,
    },
    { repository: memoryStore(), listen: { host: '127.0.0.1', port: 0 }, webhook: false },
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

async function getSegments(api: ApiComponent, token?: string) {
  const res = await fetch(`http://127.0.0.1:${api.address().port}/v1/segments`, {
    headers: token === undefined ? {} : { 'X-Auth-Token': token },
    signal: AbortSignal.timeout(5_000),
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

keystone.run();
