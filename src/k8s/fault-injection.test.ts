// The fault-injecting seam goes through the transport's real retry rules: a
// refused connection is retried even for a create, a lost answer to a create
// is not (the server applied it once), a 503 on a read is retried.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeError } from './client.ts';
import { createKubeClient } from './kube-client.ts';
import { KubeFaultInjector, on } from './fault-injection.ts';
import { RESOURCES } from './resources.ts';

async function apiServer() {
  const seen: string[] = [];
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x', resourceVersion: String(seen.length) } }));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { seen, kc, close: () => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))) };
}

const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };

test('lost-response: the create is applied once and the caller sees a timeout (never repeated)', async () => {
  const s = await apiServer();
  const faults = new KubeFaultInjector().add({ fault: 'lost-response', match: on('POST', '/configmaps'), times: 1 });
  const kube = createKubeClient(s.kc, { intercept: faults.intercept });
  const err = await kube.create(RESOURCES.configMaps, 'ns', cm).catch((e: unknown) => e);
  assert.instance(err, KubeError);
  assert.is((err as KubeError).code, 0);
  assert.is(s.seen.filter((l) => l.startsWith('POST')).length, 1);
  assert.is(faults.injected['lost-response'], 1);
  await kube.close();
  await s.close();
});

test('refused: provably unsent, so even a create is retried; unavailable: a read is retried', async () => {
  const s = await apiServer();
  const faults = new KubeFaultInjector()
    .add({ fault: 'refused', match: on('POST', '/configmaps'), times: 2 })
    .add({ fault: 'unavailable', match: on('GET', '/configmaps'), times: 1 });
  const kube = createKubeClient(s.kc, { intercept: faults.intercept });
  await kube.create(RESOURCES.configMaps, 'ns', cm);
  await kube.get(RESOURCES.configMaps, 'ns', 'x');
  assert.equal(s.seen, ['POST /api/v1/namespaces/ns/configmaps', 'GET /api/v1/namespaces/ns/configmaps/x']);
  assert.equal([faults.injected.refused, faults.injected.unavailable], [2, 1]);
  await kube.close();
  await s.close();
});

test('a 503 on a write is not retried; rules are used up after `times`', async () => {
  const s = await apiServer();
  const faults = new KubeFaultInjector().add({ fault: 'unavailable', match: on('PUT', '/configmaps'), times: 1 });
  const kube = createKubeClient(s.kc, { intercept: faults.intercept });
  const err = await kube.replace(RESOURCES.configMaps, 'ns', 'x', cm).catch((e: unknown) => e);
  assert.is((err as KubeError).code, 503);
  await kube.replace(RESOURCES.configMaps, 'ns', 'x', cm);
  assert.is(s.seen.length, 1);
  await kube.close();
  await s.close();
});

test.run();
