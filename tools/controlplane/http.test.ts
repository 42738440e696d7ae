import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpRequest, waitUntil } from './http.ts';

test('waitUntil returns the first defined value, treating throws as "not yet"', async () => {
  let calls = 0;
  const v = await waitUntil(
    'the third call',
    async () => {
      calls++;
      if (calls === 1) throw new Error('refused');
      return calls === 3 ? 'ready' : undefined;
    },
    { timeoutMs: 2_000, intervalMs: 1 },
  );
  assert.is(v, 'ready');
  assert.is(calls, 3);
});

test('waitUntil times out naming what it waited for and the last error', async () => {
  try {
    await waitUntil(
      'etcd /health',
      async () => {
        throw new Error('ECONNREFUSED');
      },
      { timeoutMs: 30, intervalMs: 5 },
    );
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, 'timed out after 30 ms waiting for etcd /health (last error: ECONNREFUSED)');
  }
});

test('waitUntil stops at once when abort() reports an error', async () => {
  const started = Date.now();
  try {
    await waitUntil('x', async () => undefined, {
      timeoutMs: 10_000,
      abort: () => new Error('etcd exited during start-up'),
    });
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'etcd exited during start-up');
  }
  assert.ok(Date.now() - started < 1_000);
});

test('httpRequest sends the token and JSON body, and times out a silent server', async () => {
  const seen: { auth?: string; body?: string }[] = [];
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization, body });
      if (req.url === '/silent') return; // never answers
      res.writeHead(201).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  try {
    const res = await httpRequest(`${base}/x`, { method: 'POST', token: 't0k', body: { a: 1 } });
    assert.equal(res, { status: 201, body: '{"ok":true}' });
    assert.equal(seen[0], { auth: 'Bearer t0k', body: '{"a":1}' });
    await httpRequest(`${base}/silent`, { timeoutMs: 50 }).then(
      () => assert.unreachable(),
      (e: Error) => assert.match(e.message, 'no answer within 50 ms'),
    );
  } finally {
    srv.closeAllConnections();
    srv.close();
  }
});

test.run();
