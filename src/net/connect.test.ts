// neverReachedServer against real sockets: the failures of the connect step
// (refused, TLS handshake) count as "never sent", a reset after the request
// went out does not.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { Agent, request } from 'undici';
import { markingConnector, neverReachedServer } from './connect.ts';

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** The error a POST through `agent` fails with. */
async function failureOf(agent: Agent, url: string): Promise<unknown> {
  try {
    const res = await request(url, { dispatcher: agent, method: 'POST', body: '{"lock":null}' });
    await res.body.text();
  } catch (err) {
    return err;
  }
  throw new Error(`POST ${url} did not fail`);
}

function agents() {
  return {
    marking: new Agent({ connect: markingConnector({ timeout: 2_000, rejectUnauthorized: false }) }),
    plain: new Agent({ connect: { timeout: 2_000, rejectUnauthorized: false } }),
  };
}

test('a refused connection never reached the server', async () => {
  const probe = createTcpServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  const { marking, plain } = agents();
  try {
    assert.ok(neverReachedServer(await failureOf(marking, `http://127.0.0.1:${port}/`)));
    // Without the marking connector, the code alone says so too.
    assert.ok(neverReachedServer(await failureOf(plain, `http://127.0.0.1:${port}/`)));
  } finally {
    await Promise.all([marking.close(), plain.close()]);
  }
});

test('a failed TLS handshake never reached the server; only the marking connector can tell', async () => {
  const plainHttp = createServer((_req, res) => res.end('not TLS'));
  const port = await listen(plainHttp);
  const { marking, plain } = agents();
  try {
    const viaMarking = await failureOf(marking, `https://127.0.0.1:${port}/`);
    assert.match(String((viaMarking as { code?: string }).code), /SSL|TLS|EPROTO/);
    assert.ok(neverReachedServer(viaMarking));
    assert.not.ok(neverReachedServer(await failureOf(plain, `https://127.0.0.1:${port}/`)));
  } finally {
    await Promise.all([marking.close(), plain.close()]);
    plainHttp.close();
  }
});

test('a connection reset after the request was written may have reached the server', async () => {
  const resetter = createTcpServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
  const port = await listen(resetter);
  const { marking, plain } = agents();
  try {
    const err = await failureOf(marking, `http://127.0.0.1:${port}/`);
    assert.is((err as { code?: string }).code, 'ECONNRESET');
    assert.not.ok(neverReachedServer(err));
  } finally {
    await Promise.all([marking.close(), plain.close()]);
    resetter.close();
  }
});

test('codes are looked up on the cause chain too', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  assert.ok(neverReachedServer(new Error('wrapped', { cause: refused })));
  assert.not.ok(neverReachedServer(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })));
  assert.not.ok(neverReachedServer(undefined));
});

test.run();
