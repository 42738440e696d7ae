// `kubectl apply --server-side -k config/default` on a real node, as
// docs/install.md says: the namespace and the OpenStack credentials Secret
// first (config/default runs the API with auth_strategy keystone, which
// refuses to start without a service login), then the namespace under the
// restricted Pod Security Standard, every pod Ready, the API answering
// Keystone-authenticated requests of the real openstack CLI through its
// Service, the operator's ServiceAccounts with every right the code calls and
// no access to Secrets but the admission key and (controller) the BMC credentials, and `kubectl delete -k`
// removing it all.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../tools/controlplane/ports.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/server.ts';
import { forbiddenRights, missingRights, readsSecrets, type DeployedAccounts } from './support/access.ts';
import {
  ROOT,
  clusterEnv,
  kubectl,
  kubectlJson,
  kubectlRaw,
  openstack,
  waitFor,
  waitPodsReady,
  createSimulatorCredentials,
} from './support/tools.ts';

const NS = 'masakari';
const API_SERVICE = 'masakari-operator-masakari-api';
const ACCOUNTS: DeployedAccounts = {
  namespace: NS,
  serviceAccounts: { api: 'masakari-operator-api', controller: 'masakari-operator-controller' },
  leaseNamespace: 'medik8s-leases',
};
const ctx: { sim?: Simulator; simPort?: number } = {};
const test = suite('kustomize config/default on a real node');

test('kubectl apply -k config/default with the credentials Secret: every pod Ready under the restricted PSS', async () => {
  const { nodeIp } = clusterEnv();
  ctx.simPort = await freePort();
  // docs/install.md: before NodeHealthCheck, create its lease namespace yourself.
  await kubectl(['create', 'namespace', 'medik8s-leases']);
  // docs/install.md, "With kustomize": the namespace and the Secret
  // masakari-openstack (OS_* variables) before applying. The login is the
  // simulator's Keystone on the node IP, which starts below once the API
  // Service has an address for its catalog.
  await kubectl(['create', 'namespace', NS]);
  await createSimulatorCredentials('masakari-openstack', NS, `http://${nodeIp}:${ctx.simPort}/identity/v3`);
  // --force-conflicts: the CRDs may remain from the Helm test, owned by helm's field manager.
  await kubectl(['apply', '--server-side', '--force-conflicts', '-k', `${ROOT}/config/default`]);
  const nsObj = await kubectlJson<{ metadata: { labels: Record<string, string> } }>(['get', 'namespace', NS]);
  assert.is(nsObj.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
  const deployments = (await kubectl(['get', 'deployments', '-n', NS, '-o', 'name'])).trim().split('\n');
  assert.ok(deployments.length >= 2, deployments.join(', '));
  for (const d of deployments) {
    await kubectl(['rollout', 'status', '-n', NS, d, '--timeout=240s'], { timeoutMs: 260_000 });
  }
  // config/default's `labels` (part-of, managed-by) mark the objects, not their pod templates
  const pods = await waitPodsReady(NS, 'app.kubernetes.io/name=masakari-operator', 4);
  assert.is(pods.length, 4);
});

test('the API answers through its Service, and the openstack CLI through Keystone', async () => {
  const { nodeIp } = clusterEnv();
  const api = await kubectlJson<{ spec: { clusterIP: string; ports: { port: number }[] } }>([
    'get',
    'service',
    API_SERVICE,
    '-n',
    NS,
  ]);
  const apiUrl = `http://${api.spec.clusterIP}:${api.spec.ports[0]!.port}`;
  const body = await waitFor(
    'GET / on the API Service',
    async () => {
      const res = await fetch(`${apiUrl}/`, { signal: AbortSignal.timeout(5_000) });
      return res.ok ? ((await res.json()) as { versions?: unknown[] }) : undefined;
    },
    60_000,
  );
  assert.ok(Array.isArray(body.versions), JSON.stringify(body));
  ctx.sim = await startSimulator({
    host: nodeIp,
    port: ctx.simPort,
    hosts: ['compute-k'],
    masakariUrl: `${apiUrl}/v1`,
  });
  // keystone mode: without a token the API answers keystonemiddleware's 401
  const anonymous = await fetch(`${apiUrl}/v1/segments`, { signal: AbortSignal.timeout(5_000) });
  assert.is(anonymous.status, 401);
  const osEnv = { ...ctx.sim.credentials, OS_INTERFACE: 'public' };
  const seg = (await openstack(osEnv, ['segment', 'create', 'kseg', 'auto', 'COMPUTE'])) as Record<string, string>;
  const list = (await openstack(osEnv, ['segment', 'list'])) as Record<string, string>[];
  assert.ok(
    list.some((s) => s.uuid === seg.uuid),
    JSON.stringify(list),
  );
});

test('the operator ServiceAccounts have every right the code calls, and no Secrets but the admission key and the BMC credentials', async () => {
  assert.equal(await missingRights(ACCOUNTS), [], 'rights the code calls that config/rbac does not grant');
  assert.equal(await forbiddenRights(ACCOUNTS), [], 'rights config/rbac must not grant');
  const sas = (await kubectl(['get', 'serviceaccounts', '-n', NS, '-o', 'name']))
    .split('\n')
    .filter((s) => s.includes('masakari-operator'));
  assert.ok(sas.length >= 2, sas.join(', '));
  for (const sa of sas) {
    const as = `--as=system:serviceaccount:${NS}:${sa.replace('serviceaccount/', '')}`;
    const r = await kubectlRaw(['auth', 'can-i', 'get', 'secrets', '-n', NS, as]);
    // the controller gets the BMC credentials of HaHost spec.fencing (names chosen per host); nothing else
    const expected = readsSecrets(ACCOUNTS, sa.replace('serviceaccount/', ''), 'get') ? 'yes' : 'no';
    assert.is(r.stdout.trim(), expected, `${sa} may get secrets`);
  }
});

test('kubectl delete -k config/default removes the namespace and the CRDs', async () => {
  // docs/install.md, "Uninstall": segments first, while the operator runs and can release their finalizers
  await kubectl(['delete', 'failoversegments', '--all', '-n', NS, '--wait=true', '--timeout=120s'], {
    timeoutMs: 140_000,
  });
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

test.after(async () => {
  await ctx.sim?.stop();
});

test.run();
