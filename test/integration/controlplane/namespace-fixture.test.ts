// test/support/cluster.ts: useNamespace() gives each test file its own
// namespace on the shared control plane, a TLS-verified client-node
// KubeConfig, and a kubectl that defaults to that namespace.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CoreV1Api } from '@kubernetes/client-node';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';

const test = suite<{ a: TestNamespace; b: TestNamespace }>('useNamespace fixture', {
  a: undefined as unknown as TestNamespace,
  b: undefined as unknown as TestNamespace,
});
test.before(async (ctx) => {
  ctx.a = await useNamespace('Fixture_A');
  ctx.b = await useNamespace('fixture-b');
});

test('each call makes a distinct, DNS-safe namespace that exists', async ({ a, b }) => {
  assert.match(a.namespace, /^fixture-a-[0-9a-f]{8}$/);
  assert.is.not(a.namespace, b.namespace);
  const core = a.kc.makeApiClient(CoreV1Api);
  const ns = await core.readNamespace({ name: a.namespace });
  assert.is(ns.status?.phase, 'Active');
  assert.not.ok(a.kc.getCurrentCluster()?.skipTLSVerify, 'TLS is verified');
});

test('kubectl defaults to the namespace; an explicit -n wins; stdin is piped', async ({ a, b }) => {
  const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;
  assert.is((await a.kubectl(['apply', '-f', '-'], cm('in-a'))).code, 0);
  assert.is((await a.kubectl(['apply', '-n', b.namespace, '-f', '-'], cm('in-b'))).code, 0);
  const inA = await a.kubectl(['get', 'configmap', 'in-a', '-o', 'jsonpath={.metadata.namespace}']);
  assert.is(inA.stdout, a.namespace);
  const inB = await b.kubectl(['get', 'configmap', 'in-b', '-o', 'jsonpath={.metadata.namespace}']);
  assert.is(inB.stdout, b.namespace);
});

test('a failing kubectl reports its exit code and stderr instead of throwing', async ({ a }) => {
  const r = await a.kubectl(['get', 'configmap', 'does-not-exist']);
  assert.is(r.code, 1);
  assert.match(r.stderr, 'NotFound');
});

test('cleanup deletes the namespace (it stays Terminating without a namespace controller)', async ({ a, b }) => {
  await a.cleanup();
  await b.cleanup();
  const core = a.kc.makeApiClient(CoreV1Api);
  const ns = await core.readNamespace({ name: a.namespace });
  assert.is(ns.status?.phase, 'Terminating');
  await a.cleanup(); // idempotent
});

test.run();
