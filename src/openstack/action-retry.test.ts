// Which Nova POST actions the client sends again, and after which failures
// (nova-protocol.ts ACTION_RETRY, http.ts RetryPolicy). MockAgent tests pin the policy
// per action; the last test refuses a real connection and lets the session's
// own dispatcher prove the request was never sent.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockAgent } from 'undici';
import type { Interceptable } from 'undici';
import type { CallRecord } from './http.ts';
import { HttpNovaClient } from './nova.ts';
import { OpenStackSession } from './session.ts';
import type { SessionOptions } from './session.ts';
import { NovaError } from './types.ts';

const KS = 'http://keystone.test:5000';
const NOVA = 'http://nova.test:8774';
const ACTION = '/v2.1/servers/s1/action';

const creds = (authUrl: string) => ({
  auth_url: authUrl,
  username: 'masakari',
  password: 'pw',
  project_name: 'service',
  user_domain_name: 'Default',
  project_domain_name: 'Default',
});

function tokenBody(novaUrl: string) {
  return {
    token: {
      methods: ['password'],
      user: { id: 'masakari-id', name: 'masakari', domain: { id: 'default', name: 'Default' } },
      project: { id: 'service-id', name: 'service', domain: { id: 'default', name: 'Default' } },
      roles: [{ id: 'r-admin', name: 'admin' }],
      issued_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      catalog: [
        {
          type: 'compute',
          name: 'nova',
          endpoints: [{ interface: 'public', region_id: 'RegionOne', url: novaUrl }],
        },
      ],
    },
  };
}

function setup(extra: Partial<SessionOptions> = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const nova = agent.get(NOVA) as Interceptable;
  (agent.get(KS) as Interceptable)
    .intercept({ path: '/v3/auth/tokens', method: 'POST' })
    .reply(201, tokenBody(`${NOVA}/v2.1`), { headers: { 'x-subject-token': 'svc-token' } });
  const calls: CallRecord[] = [];
  const session = new OpenStackSession(creds(`${KS}/v3`), {
    dispatcher: agent,
    timeoutMs: 300,
    maxRetries: 3,
    onCall: (r) => calls.push(r),
    sleep: async () => undefined,
    random: () => 0.5,
    ...extra,
  });
  const client = new HttpNovaClient(session, { region: 'RegionOne' });
  const actions = () => calls.filter((c) => c.path === '/servers/{id}/action').map((c) => [c.action, c.status]);
  return { nova, client, actions };
}

const fault = (status: number) => ({ computeFault: { code: status, message: `HTTP ${status} from the gateway` } });

/** The error undici reports when nothing listens on the port. */
function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:8774'), {
    code: 'ECONNREFUSED',
    syscall: 'connect',
  });
}

async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (err) {
    assert.instance(err, NovaError);
    return (err as NovaError).status;
  }
}

test('a POST lock after a 503 is retried and succeeds', async () => {
  const { nova, client, actions } = setup();
  nova.intercept({ path: ACTION, method: 'POST' }).reply(503, fault(503));
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  await client.lockServer('s1');
  assert.equal(actions(), [
    ['lock', 503],
    ['lock', 202],
  ]);
});

test('beforeSend runs before every attempt of a side effect, retries included, and what it throws ends the call unsent', async () => {
  const { nova, client, actions } = setup();
  nova.intercept({ path: ACTION, method: 'POST' }).reply(503, fault(503));
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  let checks = 0;
  await client.unlockServer('s1', { beforeSend: () => void checks++ });
  assert.is(checks, 2);
  nova.intercept({ path: ACTION, method: 'POST' }).reply(503, fault(503));
  const refused = new Error('no longer allowed');
  const err = await client
    .lockServer('s1', {
      beforeSend: () => {
        if (actions().length > 2) throw refused;
      },
    })
    .catch((e: unknown) => e);
  assert.is(err, refused);
  assert.equal(actions(), [
    ['unlock', 503],
    ['unlock', 202],
    ['lock', 503],
  ]);
  nova.intercept({ path: '/v2.1/servers/s1', method: 'GET' }).reply(200, { server: { id: 's1' } });
  await client.getServer('s1', {
    beforeSend: () => {
      throw refused;
    },
  });
});

test('unlock, os-resetState and add_host are retried on 502/504, a timeout and a lost connection', async () => {
  const { nova, client, actions } = setup({ timeoutMs: 50 });
  nova.intercept({ path: ACTION, method: 'POST' }).reply(502, fault(502));
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  await client.unlockServer('s1');
  nova.intercept({ path: ACTION, method: 'POST' }).reply(504, fault(504));
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '').delay(200);
  nova.intercept({ path: ACTION, method: 'POST' }).replyWithError(new Error('socket hang up'));
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  await client.resetState('s1', 'error');
  assert.equal(actions(), [
    ['unlock', 502],
    ['unlock', 202],
    ['os-resetState', 504],
    ['os-resetState', 0],
    ['os-resetState', 0],
    ['os-resetState', 202],
  ]);
  nova.intercept({ path: '/v2.1/os-aggregates/7/action', method: 'POST' }).reply(503, fault(503));
  nova
    .intercept({ path: '/v2.1/os-aggregates/7/action', method: 'POST' })
    .reply(409, { conflictingRequest: { code: 409, message: 'already in the aggregate' } });
  assert.is(await statusOf(client.addHostToAggregate(7, 'cpu3')), 409, 'the repeat answers 409, which callers accept');
});

test('an idempotent action stops retrying after maxRetries; a 500 is retried too (its answer may be lost after Nova acted)', async () => {
  const { nova, client, actions } = setup({ maxRetries: 2 });
  nova.intercept({ path: ACTION, method: 'POST' }).reply(503, fault(503)).times(3);
  assert.is(await statusOf(client.lockServer('s1')), 503);
  nova.intercept({ path: ACTION, method: 'POST' }).reply(500, fault(500)).times(2);
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  assert.is(await statusOf(client.lockServer('s1')), 200, 'two lost answers, then the lock goes through');
  assert.equal(actions(), [
    ['lock', 503],
    ['lock', 503],
    ['lock', 503],
    ['lock', 500],
    ['lock', 500],
    ['lock', 202],
  ]);
});

test('evacuate after a 503 is not retried by the client', async () => {
  const { nova, client, actions } = setup();
  nova.intercept({ path: ACTION, method: 'POST' }).reply(503, fault(503));
  assert.is(await statusOf(client.evacuate('s1', 'cpu3')), 503);
  nova.intercept({ path: ACTION, method: 'POST' }).replyWithError(new Error('socket hang up'));
  assert.is(await statusOf(client.evacuate('s1', undefined)), 0);
  assert.equal(actions(), [
    ['evacuate', 503],
    ['evacuate', 0],
  ]);
});

test('os-stop and os-start are sent once after a 503, a 504 or a lost connection', async () => {
  const { nova, client, actions } = setup();
  nova.intercept({ path: ACTION, method: 'POST' }).reply(503, fault(503));
  assert.is(await statusOf(client.stopServer('s1')), 503);
  nova.intercept({ path: ACTION, method: 'POST' }).reply(504, fault(504));
  assert.is(await statusOf(client.startServer('s1')), 504);
  nova.intercept({ path: ACTION, method: 'POST' }).replyWithError(new Error('read ECONNRESET'));
  assert.is(await statusOf(client.stopServer('s1')), 0);
  assert.equal(actions(), [
    ['os-stop', 503],
    ['os-start', 504],
    ['os-stop', 0],
  ]);
});

test('a POST whose connection was refused is retried, evacuate included', async () => {
  const { nova, client, actions } = setup();
  nova.intercept({ path: ACTION, method: 'POST' }).replyWithError(refused());
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  await client.evacuate('s1', 'cpu3');
  nova.intercept({ path: ACTION, method: 'POST' }).replyWithError(refused());
  nova.intercept({ path: ACTION, method: 'POST' }).reply(202, '');
  await client.stopServer('s1');
  assert.equal(actions(), [
    ['evacuate', 0],
    ['evacuate', 202],
    ['os-stop', 0],
    ['os-stop', 202],
  ]);
});

test('a refused POST still gives up after maxRetries, with status 0', async () => {
  const { nova, client, actions } = setup({ maxRetries: 1 });
  nova.intercept({ path: ACTION, method: 'POST' }).replyWithError(refused()).times(2);
  assert.is(await statusOf(client.evacuate('s1', undefined)), 0);
  assert.is(actions().length, 2);
});

// ---- real sockets -------------------------------------------------------------

async function listen(server: Server, port = 0): Promise<number> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on (just released by a throwaway listener). */
async function freePort(): Promise<number> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('a real refused connection is retried for evacuate, through the session’s own connector', async () => {
  const novaPort = await freePort();
  const keystone = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.writeHead(201, { 'content-type': 'application/json', 'x-subject-token': 'svc-token' });
    res.end(JSON.stringify(tokenBody(`http://127.0.0.1:${novaPort}/v2.1`)));
  });
  const seen: string[] = [];
  const nova = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(202);
      res.end();
    });
  });
  const ksPort = await listen(keystone);
  const calls: CallRecord[] = [];
  const session = new OpenStackSession(creds(`http://127.0.0.1:${ksPort}/v3`), {
    timeoutMs: 2_000,
    maxRetries: 2,
    onCall: (r) => calls.push(r),
    // Nova comes up during the backoff after the refused attempt.
    sleep: async () => {
      if (!nova.listening) await listen(nova, novaPort);
    },
  });
  try {
    await new HttpNovaClient(session, { region: 'RegionOne' }).evacuate('s1', 'cpu3');
    assert.equal(seen, ['POST /v2.1/servers/s1/action {"evacuate":{"host":"cpu3"}}']);
    assert.equal(
      calls.filter((c) => c.service === 'compute').map((c) => [c.attempt, c.status, c.error]),
      [
        [0, 0, 'connection'],
        [1, 202, undefined],
      ],
    );
  } finally {
    await session.close();
    keystone.close();
    nova.close();
  }
});

test.run();
