// `kubectl apply --server-side -k config/default` on a real node, as
// docs/install.md says: the namespace under the restricted Pod Security
// Standard, every pod Ready, the API answering through its Service, the
// operator's ServiceAccounts without access to Secrets, and
// `kubectl delete -k` removing it all.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, kubectl, kubectlJson, kubectlRaw, waitFor, waitPodsReady } from './support/tools.ts';

const NS = 'masakari';
const test = suite('kustomize config/default on a real node');

test('kubectl apply -k config/default: every pod Ready under the restricted PSS', async () => {
  // docs/install.md: before NodeHealthCheck, create its lease namespace yourself.
  await kubectl(['create', 'namespace', 'medik8s-leases']);
  // --force-conflicts: the CRDs may remain from the Helm test, owned by helm's field manager.
  await kubectl(['apply', '--server-side', '--force-conflicts', '-k', `${ROOT}/config/default`]);
  const nsObj = await kubectlJson<{ metadata: { labels: Record<string, string> } }>(['get', 'namespace', NS]);
  assert.is(nsObj.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
  const deployments = (await kubectl(['get', 'deployments', '-n', NS, '-o', 'name'])).trim().split('\n');
  assert.ok(deployments.length >= 2, deployments.join(', '));
  for (const d of deployments) {
    await kubectl(['rollout', 'status', '-n', NS, d, '--timeout=240s'], { timeoutMs: 260_000 });
  }
  const pods = await waitPodsReady(NS, 'app.kubernetes.io/part-of=masakari-operator', 4);
  assert.is(pods.length, 4);
});

test('the API answers through its Service', async () => {
  const services = await kubectlJson<{
    items: { metadata: { name: string }; spec: { clusterIP: string; ports: { name?: string; port: number }[] } }[];
  }>(['get', 'services', '-n', NS]);
  const api = services.items.find((s) => s.spec.ports.some((p) => p.port === 15868));
  assert.ok(api, `no Service on 15868: ${services.items.map((s) => s.metadata.name).join(', ')}`);
  const body = await waitFor(
    'GET / on the API Service',
    async () => {
      const res = await fetch(`http://${api!.spec.clusterIP}:15868/`, { signal: AbortSignal.timeout(5_000) });
      return res.ok ? ((await res.json()) as { versions?: unknown[] }) : undefined;
    },
    60_000,
  );
  assert.ok(Array.isArray(body.versions), JSON.stringify(body));
});

test('the operator ServiceAccounts cannot read Secrets', async () => {
  const sas = (await kubectl(['get', 'serviceaccounts', '-n', NS, '-o', 'name']))
    .split('\n')
    .filter((s) => s.includes('masakari-operator'));
  assert.ok(sas.length >= 2, sas.join(', '));
  for (const sa of sas) {
    const as = `--as=system:serviceaccount:${NS}:${sa.replace('serviceaccount/', '')}`;
    const r = await kubectlRaw(['auth', 'can-i', 'get', 'secrets', '-n', NS, as]);
    assert.is(r.stdout.trim(), 'no', `${sa} may get secrets`);
  }
});

test('kubectl delete -k config/default removes the namespace and the CRDs', async () => {
  await kubectl(['delete', '-k', `${ROOT}/config/default`, '--wait=true', '--timeout=180s'], { timeoutMs: 200_000 });
  await waitFor(
    'namespace masakari gone',
    async () => ((await kubectlRaw(['get', 'namespace', NS])).code !== 0 ? true : undefined),
    120_000,
    2_000,
  );
  const crds = await kubectl(['get', 'crds', '-o', 'name']);
  assert.not.match(crds, /masakari\.openkeel\.io/);
  await kubectl(['delete', 'namespace', 'medik8s-leases', '--wait=false']);
});

test.run();
