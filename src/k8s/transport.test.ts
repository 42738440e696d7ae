import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeError } from './client.ts';
import { neverReachedServer } from '../net/connect.ts';
import { createKubeClient } from './kube-client.ts';
import { resourcePathTemplate, type KubeAttempt } from './transport.ts';
import { RESOURCES } from './resources.ts';

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

/** A plain-HTTP stand-in for the API server on 127.0.0.1 that answers as scripted, in order. */
async function server(...handlers: Handler[]) {
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const h = handlers[Math.min(seen.length - 1, handlers.length - 1)]!;
      h(req, body, res);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return {
    seen,
    kc,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

const json =
  (code: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, _b, res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const status = (code: number, reason: string, message: string) =>
  json(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
const cm = { metadata: { name: 'x', resourceVersion: '5' } };

test('requests carry the bearer token, user agent and the right path', async () => {
  const s = await server(json(200, cm));
  const kube = createKubeClient(s.kc, { userAgent: 'ua-test' });
  await kube.get(RESOURCES.configMaps, 'ns', 'x');
  assert.is(s.seen[0]!.url, '/api/v1/namespaces/ns/configmaps/x');
  assert.is(s.seen[0]!.headers.authorization, 'Bearer secret-token');
  assert.is(s.seen[0]!.headers['user-agent'], 'ua-test');
  await kube.close();
  await s.close();
});

test('patch flavours send their content types and query parameters', async () => {
  const s = await server(json(200, cm));
  const kube = createKubeClient(s.kc);
  await kube.mergePatch(RESOURCES.segments, 'ns', 'a', { spec: {} }, { status: true });
  await kube.jsonPatch(RESOURCES.segments, 'ns', 'a', [{ op: 'remove', path: '/x' }], { fieldManager: 'm' });
  await kube.apply(RESOURCES.segments, 'ns', 'a', {}, { fieldManager: 'm', force: true, dryRun: true });
  assert.is(s.seen[0]!.headers['content-type'], 'application/merge-patch+json');
  assert.is(s.seen[0]!.url, '/apis/masakari.openkeel.io/v1alpha1/namespaces/ns/failoversegments/a/status');
  assert.is(s.seen[1]!.headers['content-type'], 'application/json-patch+json');
  assert.is(s.seen[1]!.url.split('?')[1], 'fieldManager=m');
  assert.is(s.seen[2]!.headers['content-type'], 'application/apply-patch+yaml');
  assert.is(s.seen[2]!.url.split('?')[1], 'fieldManager=m&dryRun=All&force=true');
  await kube.close();
  await s.close();
});

test('delete sends DeleteOptions with preconditions', async () => {
  const s = await server(json(200, { kind: 'Status', status: 'Success' }));
  const kube = createKubeClient(s.kc);
  await kube.delete(RESOURCES.configMaps, 'ns', 'x', { preconditionUid: 'u', propagationPolicy: 'Foreground' });
  assert.is(s.seen[0]!.method, 'DELETE');
  assert.equal(JSON.parse(s.seen[0]!.body), {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    preconditions: { uid: 'u' },
    propagationPolicy: 'Foreground',
  });
  await kube.close();
  await s.close();
});

test('a Status answer becomes a KubeError with its code, reason and message', async () => {
  const s = await server(status(409, 'AlreadyExists', 'configmaps "x" already exists'));
  const kube = createKubeClient(s.kc);
  const err = await kube.create(RESOURCES.configMaps, 'ns', cm).catch((e: unknown) => e);
  assert.instance(err, KubeError);
  assert.is((err as KubeError).code, 409);
  assert.is((err as KubeError).reason, 'AlreadyExists');
  assert.is((err as KubeError).message, 'configmaps "x" already exists');
  assert.is(s.seen.length, 1, 'not retried');
  await kube.close();
  await s.close();
});

test('a non-Status error body still gets a reason from the HTTP code', async () => {
  const s = await server((_q, _b, res) => {
    res.writeHead(502);
    res.end('bad gateway');
  });
  const kube = createKubeClient(s.kc, { maxAttempts: 1 });
  const err = (await kube.get(RESOURCES.configMaps, 'ns', 'x').catch((e: unknown) => e)) as KubeError;
  assert.is(err.code, 502);
  assert.is(err.reason, 'InternalError');
  assert.match(err.message, /bad gateway/);
  await kube.close();
  await s.close();
});

test('a 2xx answer that is not JSON is a KubeError, not a SyntaxError', async () => {
  const s = await server((_q, _b, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>proxy login</html>');
  });
  const kube = createKubeClient(s.kc);
  const err = (await kube.get(RESOURCES.configMaps, 'ns', 'x').catch((e: unknown) => e)) as KubeError;
  assert.instance(err, KubeError);
  assert.is(err.reason, 'InvalidResponse');
  await kube.close();
  await s.close();
});

test('listKept reads a list answer with keep applied per item; a non-JSON answer is a KubeError, a throwing keep its own error', async () => {
  const list = {
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '7', continue: 'next' },
    items: [cm, { ...cm, metadata: { ...cm.metadata, name: 'y' } }],
  };
  const s = await server(
    json(200, list),
    (_q, _b, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>proxy login</html>');
    },
    json(200, list),
  );
  const kube = createKubeClient(s.kc);
  const keepName = (o: { metadata: { name: string } }) => (o.metadata.name === 'y' ? undefined : o.metadata.name);
  const got = await kube.listKept!(RESOURCES.configMaps, 'ns', { limit: 2 }, keepName);
  assert.equal(got.items, ['x']);
  assert.equal(got.metadata, { resourceVersion: '7', continue: 'next' });
  const notJson = (await kube.listKept!(RESOURCES.configMaps, 'ns', {}, keepName).catch(
    (e: unknown) => e,
  )) as KubeError;
  assert.instance(notJson, KubeError);
  assert.is(notJson.reason, 'InvalidResponse');
  const bug = new Error('keep failed');
  const thrown = await kube.listKept!(RESOURCES.configMaps, 'ns', {}, () => {
    throw bug;
  }).catch((e: unknown) => e);
  assert.is(thrown, bug);
  await kube.close();
  await s.close();
});

test('429 is retried for writes too, honouring Retry-After', async () => {
  const s = await server(
    json(429, { kind: 'Status', code: 429, reason: 'TooManyRequests' }, { 'retry-after': '0' }),
    json(201, cm),
  );
  const kube = createKubeClient(s.kc);
  const got = await kube.create(RESOURCES.configMaps, 'ns', cm);
  assert.equal(got, cm);
  assert.is(s.seen.length, 2);
  await kube.close();
  await s.close();
});

test('reads are retried on 503, writes are not', async () => {
  const s = await server(status(503, 'ServiceUnavailable', 'x'), json(200, cm));
  const kube = createKubeClient(s.kc);
  assert.equal(await kube.get(RESOURCES.configMaps, 'ns', 'x'), cm);
  assert.is(s.seen.length, 2);
  await kube.close();
  await s.close();

  const w = await server(status(503, 'ServiceUnavailable', 'x'), json(200, cm));
  const kube2 = createKubeClient(w.kc);
  const err = (await kube2.replace(RESOURCES.configMaps, 'ns', 'x', cm).catch((e: unknown) => e)) as KubeError;
  assert.is(err.code, 503);
  assert.is(w.seen.length, 1, 'a PUT that may have been applied is not repeated');
  await kube2.close();
  await w.close();
});

test('retries are bounded', async () => {
  const s = await server(status(503, 'ServiceUnavailable', 'down'));
  const kube = createKubeClient(s.kc, { maxAttempts: 3 });
  const err = (await kube.get(RESOURCES.configMaps, 'ns', 'x').catch((e: unknown) => e)) as KubeError;
  assert.is(err.code, 503);
  assert.is(s.seen.length, 3);
  await kube.close();
  await s.close();
});

test('a request that outlives the timeout fails with code 0 and reason Timeout', async () => {
  const s = await server(() => undefined);
  const kube = createKubeClient(s.kc, { timeoutMs: 100, maxAttempts: 1 });
  const started = Date.now();
  const err = (await kube.get(RESOURCES.configMaps, 'ns', 'x').catch((e: unknown) => e)) as KubeError;
  assert.is(err.code, 0);
  assert.is(err.reason, 'Timeout');
  assert.ok(Date.now() - started < 2000);
  await kube.close();
  await s.close();
});

test('a refused connection is a code 0 NetworkError after bounded retries', async () => {
  const s = await server(json(200, cm));
  const kc = s.kc;
  await s.close();
  const kube = createKubeClient(kc, { maxAttempts: 2 });
  const err = (await kube.create(RESOURCES.configMaps, 'ns', cm).catch((e: unknown) => e)) as KubeError;
  assert.is(err.code, 0);
  assert.is(err.reason, 'NetworkError');
  await kube.close();
});

test('every attempt is reported with its method, resource, status and duration, retries and failures included', async () => {
  const s = await server(
    status(503, 'ServiceUnavailable', 'x'),
    json(200, cm),
    json(201, cm),
    status(409, 'Conflict', 'y'),
  );
  const attempts: KubeAttempt[] = [];
  const kube = createKubeClient(s.kc, { onAttempt: (a) => attempts.push(a) });
  await kube.get(RESOURCES.configMaps, 'ns', 'x');
  await kube.create(RESOURCES.configMaps, 'ns', cm);
  await kube.mergePatch(RESOURCES.notifications, 'ns', 'n', { status: {} }, { status: true }).catch(() => undefined);
  assert.equal(
    attempts.map(({ method, resource, code }) => ({ method, resource, code })),
    [
      { method: 'GET', resource: 'configmaps', code: 503 },
      { method: 'GET', resource: 'configmaps', code: 200 },
      { method: 'POST', resource: 'configmaps', code: 201 },
      { method: 'PATCH', resource: 'masakari.openkeel.io/notifications/status', code: 409 },
    ],
  );
  assert.ok(attempts.every((a) => a.durationMs >= 0));
  await kube.close();
  await s.close();

  // No answer at all is code 0; an observer that throws does not fail the request.
  const gone = await server(json(200, cm));
  const kc = gone.kc;
  await gone.close();
  const codes: number[] = [];
  const refused = createKubeClient(kc, { maxAttempts: 1, onAttempt: (a) => codes.push(a.code) });
  await refused.get(RESOURCES.configMaps, 'ns', 'x').catch(() => undefined);
  assert.equal(codes, [0]);
  await refused.close();
  const t = await server(json(200, cm));
  const throwing = createKubeClient(t.kc, {
    onAttempt: () => {
      throw new Error('metrics broke');
    },
  });
  assert.equal(await throwing.get(RESOURCES.configMaps, 'ns', 'x'), cm);
  await throwing.close();
  await t.close();
});

test('a resource path template names the group, plural and subresource, never a namespace or name', () => {
  assert.is(resourcePathTemplate('/api/v1/namespaces/ns/configmaps/x'), 'configmaps');
  assert.is(resourcePathTemplate('/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db&limit=500'), 'configmaps');
  assert.is(resourcePathTemplate('/api/v1/nodes/node-1'), 'nodes');
  assert.is(resourcePathTemplate('/api/v1/namespaces/ns'), 'namespaces');
  assert.is(
    resourcePathTemplate('/apis/masakari.openkeel.io/v1alpha1/namespaces/ns/notifications/n-1/status'),
    'masakari.openkeel.io/notifications/status',
  );
  assert.is(resourcePathTemplate('/apis/coordination.k8s.io/v1/namespaces/ns/leases/l'), 'coordination.k8s.io/leases');
  assert.is(resourcePathTemplate('/version'), 'other');
});

test('watch decodes events split across chunks and ends when the server ends', async () => {
  const s = await server((_q, _b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const text =
      JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } }) +
      '\n' +
      JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '2' } } }) +
      '\n';
    res.write(text.slice(0, 17));
    setTimeout(() => res.end(text.slice(17)), 20);
  });
  const kube = createKubeClient(s.kc);
  const events: string[] = [];
  await kube.watch(
    RESOURCES.configMaps,
    'ns',
    { resourceVersion: '0', allowWatchBookmarks: true, timeoutSeconds: 30 },
    (e) => events.push(`${e.type} ${(e.object as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`),
    new AbortController().signal,
  );
  assert.equal(events, ['ADDED 1', 'BOOKMARK 2']);
  assert.is(
    s.seen[0]!.url,
    '/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=30',
  );
  await kube.close();
  await s.close();
});

test('watch resolves quietly when its signal aborts', async () => {
  const s = await server((_q, _b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('');
  });
  const kube = createKubeClient(s.kc);
  const ac = new AbortController();
  const w = kube.watch(RESOURCES.configMaps, 'ns', {}, () => undefined, ac.signal);
  setTimeout(() => ac.abort(), 50);
  await w;
  await kube.close();
  await s.close();
});

test('watch rejects with the Status of an ERROR event, after delivering it', async () => {
  const s = await server((_q, _b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(
      JSON.stringify({
        type: 'ERROR',
        object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' },
      }) + '\n',
    );
  });
  const kube = createKubeClient(s.kc);
  const types: string[] = [];
  const err = (await kube
    .watch(RESOURCES.configMaps, 'ns', {}, (e) => types.push(e.type), new AbortController().signal)
    .catch((e: unknown) => e)) as KubeError;
  assert.equal(types, ['ERROR']);
  assert.is(err.code, 410);
  assert.is(err.reason, 'Expired');
  await kube.close();
  await s.close();
});

test('a handler that throws ends the watch with that error', async () => {
  const s = await server((_q, _b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n');
  });
  const kube = createKubeClient(s.kc);
  const err = await kube
    .watch(
      RESOURCES.configMaps,
      'ns',
      {},
      () => {
        throw new Error('handler broke');
      },
      new AbortController().signal,
    )
    .catch((e: unknown) => e);
  assert.match((err as Error).message, /handler broke/);
  await kube.close();
  await s.close();
});

test('only failures of the connect step count as never reaching the server (safe to retry a create)', () => {
  for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']) {
    assert.ok(neverReachedServer(Object.assign(new Error(code), { code })), code);
  }
  assert.ok(
    neverReachedServer(new Error('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) })),
  );
  // Can also end an established connection after the request went out.
  for (const code of ['EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'UND_ERR_SOCKET']) {
    assert.not.ok(neverReachedServer(Object.assign(new Error(code), { code })), code);
  }
});

test.run();
