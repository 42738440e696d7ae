// A token flood against the facade under auth_strategy keystone, with the
// mini cloud's real Keystone 30 validating: 5,000 requests with made-up
// tokens cost Keystone a bounded number of calls (max_validations_in_flight,
// max_validations_per_second), none of them is a 500, and a valid token
// cached before the flood is served from the cache throughout. The operator
// reaches Keystone through a recording proxy (tools/openstack-cloud/recorder.ts),
// so every call it makes is counted; the catalog's identity endpoint in the
// token body is rewritten to the proxy as well, so validations go through it.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import { Registry } from 'prom-client';
import { useCloud } from './support/cloud.ts';
import { createComponent, type ApiComponent } from '../../src/api/component.ts';
import { loadConfig } from '../../src/config/load.ts';
import { resolveOpenStackCredentials } from '../../src/config/openstack-auth.ts';
import { freePort } from '../../tools/controlplane/ports.ts';
import { memoryStore } from '../../src/api/testing/harness.ts';
import type { KubeClient } from '../../src/k8s/client.ts';
import { createNovaClient, createOpenStackSession } from '../../src/openstack/index.ts';
import { startNovaRecorder } from '../../tools/openstack-cloud/recorder.ts';
import { startComponent } from '../../src/testing/component.ts';

const test = suite('token flood against the mini cloud’s Keystone');

const FLOOD = 5_000;
/** Requests the flood keeps open at once, as many clients would. */
const CONCURRENCY = 100;
const MAX_IN_FLIGHT = 20;
const PER_SECOND = 50;

async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, l]) => x.labels[k] === l));
  return Number(v?.value ?? NaN);
}

test('5,000 requests with random tokens: a bounded number of Keystone calls; a cached valid token is served throughout', async () => {
  const cloud = await useCloud();
  const keystonePort = Number(new URL(cloud.desc.authUrl).port);
  const proxy = await startNovaRecorder(await freePort(), keystonePort);
  const { config } = loadConfig({ env: {} });
  config.DEFAULT.auth_strategy = 'keystone';
  config.keystone_authtoken.max_validations_in_flight = MAX_IN_FLIGHT;
  config.keystone_authtoken.max_validations_per_second = PER_SECOND;
  const creds = resolveOpenStackCredentials(config, {
    env: { ...cloud.desc.adminEnv, OS_AUTH_URL: `${proxy.url}/v3` },
    cwd: '/nonexistent',
    home: '/nonexistent',
  });
  if (!creds) throw new Error('the mini cloud’s OS_* credentials were not recognised');
  const settings = { timeoutMs: 30_000, maxRetries: 3 };
  const session = createOpenStackSession(creds, settings);
  const metrics = new Registry();
  let api: ApiComponent | undefined;
  try {
    api = await startComponent(
      {
        config,
        namespace: 'token-flood',
        kube: {} as KubeClient,
        nova: createNovaClient(session, settings),
        openstack: session,
        log: pino({ level: 'silent' }),
        metrics,
        identity: 'token-flood',
        signal: new AbortController().signal,
      },
      (app) =>
        createComponent(app, { repository: memoryStore(), listen: { host: '127.0.0.1', port: 0 }, webhook: false }),
    );
    const base = `http://127.0.0.1:${api.address().port}/v1/segments`;
    const get = async (token: string) => {
      const r = await fetch(base, { headers: { 'x-auth-token': token }, signal: AbortSignal.timeout(60_000) });
      await r.arrayBuffer();
      return r.status;
    };
    const validations = () =>
      proxy.since(0).filter((x) => x.method === 'GET' && x.url.startsWith('/v3/auth/tokens')).length;

    const valid = await cloud.adminToken();
    assert.is(await get(valid), 200);
    assert.is(validations(), 1, 'the valid token was validated once, through the proxy');

    const statuses = new Map<number, number>();
    let validServed = 0;
    let sent = 0;
    const started = Date.now();
    const worker = async (w: number) => {
      while (sent < FLOOD) {
        sent++;
        const s = await get(randomBytes(24).toString('base64url'));
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
        // a tenth of the workers also ask with the valid token now and then
        if (w % 10 === 0 && sent % 50 === 0) {
          assert.is(await get(valid), 200, 'the cached valid token is served during the flood');
          validServed++;
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
    const seconds = (Date.now() - started) / 1000;

    const flooded = validations() - 1;
    const bound = Math.max(MAX_IN_FLIGHT, PER_SECOND) + Math.ceil(PER_SECOND * seconds);
    process.stdout.write(
      `\n[token-flood] ${FLOOD} requests in ${seconds.toFixed(1)} s: ${flooded} Keystone validations ` +
        `(bound ${bound}); statuses ${JSON.stringify([...statuses])}; valid token served ${validServed} times\n`,
    );
    assert.ok(flooded <= bound, `${flooded} Keystone validations, more than ${bound}`);
    assert.ok(flooded < FLOOD / 2, `${flooded} Keystone validations for ${FLOOD} requests`);
    assert.equal(
      [...statuses.keys()].sort(),
      [...statuses.keys()].filter((s) => s === 401 || s === 503).sort(),
      'every answer is a 401 (asked Keystone) or a 503 (refused), never a 500',
    );
    assert.is(statuses.get(401) ?? 0, flooded, 'each 401 is one Keystone validation, no retries');
    assert.ok(validServed > 0);
    // The valid token never reached Keystone again: every one of its lookups was a cache hit.
    assert.is(await metric(metrics, 'masakari_api_token_cache_lookups_total', { result: 'hit' }), validServed);
    assert.is(await metric(metrics, 'masakari_api_token_validations_refused_total'), statuses.get(503) ?? 0);
    assert.is(await metric(metrics, 'masakari_api_token_validations_in_flight'), 0);
  } finally {
    await api?.stop();
    await session.close();
    await proxy.close();
  }
});

test.run();
