// The Helm chart installed on a real node: the image runs as pods under the
// restricted Pod Security Standard, the API is reached through its Service by
// the real openstack CLI, the webhook through its Service by the API server,
// the engine pod recovers a failed host (simulated Nova/Keystone on the node
// IP) and hands over to the other replica when its leader pod is deleted, and
// upgrade and uninstall keep the custom resources as docs/install.md says.
// The tests run in order and share one release (a fresh install per test
// would cost a minute each on 2 cores).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startSimulator, type Simulator } from '../../tools/simulator/server.ts';
import { freePort } from '../../tools/controlplane/ports.ts';
import { forbiddenRights, missingRights, readsSecrets, type DeployedAccounts } from './support/access.ts';
import {
  ROOT,
  clusterEnv,
  helm,
  kubectl,
  kubectlJson,
  kubectlRaw,
  openstack,
  restrictedNamespace,
  waitFor,
  waitPodsReady,
  createSimulatorCredentials,
  orderedSteps,
  serviceUrl,
} from './support/tools.ts';

const NS = 'masakari-helm';
const RELEASE = 'mko';
/** A scratch copy with a planted fault when the mutation check runs (test/cluster/README.md). */
const CHART = process.env.MASAKARI_TEST_CLUSTER_CHART || `${ROOT}/charts/masakari-operator`;
const API_PODS = 'app.kubernetes.io/instance=mko,app.kubernetes.io/component=api';
const ENGINE_PODS = 'app.kubernetes.io/instance=mko,app.kubernetes.io/component=engine';
/** docs/operations.md: lease_duration + 2 × 2.2 × retry_period with the defaults (15 s, 2 s), plus API latency slack. */
const HANDOVER_BOUND_MS = (15 + 2 * 2.2 * 2) * 1000 + 5_000;
/** The default remediation.readMedik8sLeases (auto) on a cluster without medik8s-leases: no Role there. */
const ACCOUNTS: DeployedAccounts = {
  namespace: NS,
  serviceAccounts: { api: `${RELEASE}-masakari-operator-api`, controller: `${RELEASE}-masakari-operator-controller` },
};
const HOSTS = ['compute-a', 'compute-b', 'compute-c'];
/** Known to Nova, never registered through the API: the webhook test's good HaHost. */
const SPARE_HOST = 'compute-spare';

interface Ctx {
  sim?: Simulator;
  simPort?: number;
  apiUrl?: string;
  segmentId?: string;
}
const ctx: Ctx = {};
const test = suite('helm chart on a real node');

/**
 * The tests build on each other (one release). After a failed install, or
 * after any failure with MASAKARI_TEST_CLUSTER_BAIL=1 (the mutation check,
 * test/cluster/README.md), the rest fail at once naming the cause.
 */
const step = orderedSteps(test, { bail: process.env.MASAKARI_TEST_CLUSTER_BAIL === '1' });

function osEnv(): Record<string, string> {
  return { ...(ctx.sim?.credentials ?? {}), OS_INTERFACE: 'public' };
}

/**
 * Values for a fast, observable install: 2 replicas each, webhook on, the simulator as the cloud; the
 * defaults otherwise (remediation.* included: the lease Role follows the lease namespace).
 */
function installArgs(extra: string[] = []): string[] {
  return [
    '--namespace',
    NS,
    '--set',
    'api.replicas=2',
    '--set',
    'engine.replicas=2',
    '--set',
    'webhook.enabled=true',
    '--set',
    'openstack.envSecret=cloud',
    '--set',
    'config.DEFAULT.wait_period_after_service_update=1',
    '--set',
    'config.DEFAULT.wait_period_after_evacuation=30',
    ...extra,
  ];
}

step(
  'helm install with 2 replicas and the webhook, on a fresh cluster without medik8s-leases: every pod Ready under the restricted PSS',
  async () => {
    const { nodeIp } = clusterEnv();
    // a fresh cluster: no NodeHealthCheck, so no lease namespace (docs/install.md)
    const leaseNs = await kubectl(['get', 'namespace', 'medik8s-leases', '--ignore-not-found', '-o', 'name']);
    assert.is(leaseNs.trim(), '', 'the cluster already has medik8s-leases');
    ctx.simPort = await freePort();
    await restrictedNamespace(NS);
    // The operator's OpenStack credentials: the simulator on the node IP, which
    // starts below once the API Service has an address for its catalog.
    const authUrl = `http://${nodeIp}:${ctx.simPort}/identity/v3`;
    await createSimulatorCredentials('cloud', NS, authUrl);
    await helm(['install', RELEASE, CHART, ...installArgs(), '--wait', '--timeout', '5m']);
    ctx.apiUrl = `${await serviceUrl(NS, 'masakari-api')}/v1`;
    ctx.sim = await startSimulator({
      host: nodeIp,
      port: ctx.simPort,
      hosts: [...HOSTS, SPARE_HOST],
      servers: HOSTS.flatMap((h) =>
        [1, 2, 3].map((i) => ({ name: `${h}-vm${i}`, host: h, metadata: { HA_Enabled: 'True' } })),
      ),
      latencyMs: { evacuate: 8_000 },
      masakariUrl: ctx.apiUrl,
    });
    const api = await waitPodsReady(NS, API_PODS, 2);
    const engine = await waitPodsReady(NS, ENGINE_PODS, 2);
    assert.is(api.length + engine.length, 4);
    const nsObj = await kubectlJson<{ metadata: { labels: Record<string, string> } }>(['get', 'namespace', NS]);
    assert.is(nsObj.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
  },
  { prerequisite: true },
);

step('the containers run with a read-only root filesystem as uid 65532', async () => {
  const [pod] = await waitPodsReady(NS, API_PODS, 2);
  const write = await kubectlRaw([
    'exec',
    '-n',
    NS,
    pod!,
    '--',
    'node',
    '-e',
    "require('fs').writeFileSync('/app/x', 'x')",
  ]);
  assert.is.not(write.code, 0, 'writing under /app must fail');
  assert.match(write.stderr, /EROFS|read-only file system/i);
  const uid = await kubectl([
    'exec',
    '-n',
    NS,
    pod!,
    '--',
    'node',
    '-e',
    'process.stdout.write(String(process.getuid()))',
  ]);
  assert.is(uid, '65532');
});

step(
  'RBAC as deployed: no cluster-admin, no Secrets but the admission key and the BMC credentials, but its own resources',
  async () => {
    const bindings = await kubectlJson<{
      items: { roleRef: { name: string }; subjects?: { kind: string; name: string; namespace?: string }[] }[];
    }>(['get', 'clusterrolebindings']);
    for (const b of bindings.items) {
      const ours = (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.namespace === NS);
      if (ours) assert.is.not(b.roleRef.name, 'cluster-admin', `binding ${JSON.stringify(b)}`);
    }
    const sas = (await kubectl(['get', 'serviceaccounts', '-n', NS, '-o', 'name']))
      .split('\n')
      .filter((s) => s.includes(RELEASE));
    assert.ok(sas.length >= 2, `service accounts: ${sas.join(', ')}`);
    for (const sa of sas) {
      const as = `--as=system:serviceaccount:${NS}:${sa.replace('serviceaccount/', '')}`;
      for (const verb of ['get', 'list', 'watch']) {
        const r = await kubectlRaw(['auth', 'can-i', verb, 'secrets', '-n', NS, as]);
        // the controller gets the BMC credentials of HaHost spec.fencing (names chosen per host); nothing else
        const expected = readsSecrets(ACCOUNTS, sa.replace('serviceaccount/', ''), verb) ? 'yes' : 'no';
        assert.is(r.stdout.trim(), expected, `${sa} may ${verb} secrets`);
      }
      const all = await kubectlRaw(['auth', 'can-i', '*', '*', as]);
      assert.is(all.stdout.trim(), 'no', `${sa} is cluster-admin`);
    }
  },
);

step('RBAC as deployed: every right the code calls is granted to its own ServiceAccounts', async () => {
  const sas = (await kubectl(['get', 'serviceaccounts', '-n', NS, '-o', 'name'])).trim().split('\n');
  for (const sa of Object.values(ACCOUNTS.serviceAccounts)) assert.ok(sas.includes(`serviceaccount/${sa}`), sa);
  // the pods run as those accounts, not as `default`
  const pods = await kubectlJson<{ items: { metadata: { name: string }; spec: { serviceAccountName: string } }[] }>([
    'get',
    'pods',
    '-n',
    NS,
    '-l',
    `app.kubernetes.io/instance=${RELEASE}`,
  ]);
  for (const p of pods.items) {
    assert.ok(
      Object.values(ACCOUNTS.serviceAccounts).includes(p.spec.serviceAccountName),
      `${p.metadata.name} runs as ${p.spec.serviceAccountName}`,
    );
  }
  assert.equal(await missingRights(ACCOUNTS), [], 'rights the code calls that the chart does not grant');
  assert.equal(await forbiddenRights(ACCOUNTS), [], 'rights the chart must not grant');
});

step('the openstack CLI creates, lists and shows segments and hosts through the API Service', async () => {
  const seg = (await openstack(osEnv(), ['segment', 'create', 'seg-1', 'auto', 'COMPUTE'])) as Record<string, string>;
  ctx.segmentId = seg.uuid;
  assert.ok(ctx.segmentId);
  const list = (await openstack(osEnv(), ['segment', 'list'])) as Record<string, string>[];
  assert.ok(list.some((s) => s.uuid === ctx.segmentId));
  const shown = (await openstack(osEnv(), ['segment', 'show', ctx.segmentId!])) as Record<string, string>;
  assert.is(shown.name, 'seg-1');
  for (const h of HOSTS) await openstack(osEnv(), ['segment', 'host', 'create', h, 'COMPUTE', 'SSH', ctx.segmentId!]);
  const hosts = (await openstack(osEnv(), ['segment', 'host', 'list', ctx.segmentId!])) as Record<string, string>[];
  assert.equal(hosts.map((h) => h.name).sort(), HOSTS);
  const host = (await openstack(osEnv(), ['segment', 'host', 'show', ctx.segmentId!, hosts[0]!.uuid!])) as Record<
    string,
    string
  >;
  assert.is(host.type, 'COMPUTE');
});

step('a bad HaHost is rejected through the webhook Service, a good one accepted', async () => {
  const { items } = await kubectlJson<{ items: { metadata: { name: string }; spec: Record<string, unknown> }[] }>([
    'get',
    'hahosts',
    '-n',
    NS,
  ]);
  const sample = items[0]!;
  // Schema-valid (the CRD lets it through) but unknown to Nova: only the
  // webhook, reached through its Service, can refuse it.
  const hahost = (name: string, novaHost: string) => ({
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: { name, namespace: NS },
    spec: { ...sample.spec, name: novaHost },
  });
  const rejected = await kubectlRaw(['apply', '-f', '-'], {
    input: JSON.stringify(hahost('bad-host', 'not-a-nova-host')),
  });
  assert.is.not(rejected.code, 0, 'the bad HaHost was accepted');
  assert.match(rejected.stderr, /admission webhook "validate\.masakari\.openkeel\.io" denied the request/);
  assert.match(rejected.stderr, /not-a-nova-host/);
  const accepted = await kubectlRaw(['apply', '-f', '-'], { input: JSON.stringify(hahost('good-host', SPARE_HOST)) });
  assert.is(accepted.code, 0, accepted.stderr);
  await kubectl(['delete', 'hahost', 'good-host', '-n', NS]);
});

/** The engine Lease's holder (the leader pod's name), if any. */
async function engineLeaseHolder(): Promise<string | undefined> {
  const lease = await kubectlJson<{ spec: { holderIdentity?: string } }>(['get', 'lease', 'masakari-engine', '-n', NS]);
  return lease.spec.holderIdentity;
}

async function leaderPod(): Promise<string> {
  return waitFor(
    'an engine leader',
    async () => {
      return (await engineLeaseHolder()) || undefined;
    },
    60_000,
  );
}

/** Waits until the notification's status, through the openstack CLI, is finished. */
async function waitFinished(id: string, timeoutMs: number): Promise<void> {
  await waitFor(
    'notification finished',
    async () => ((await notificationStatus(id)) === 'finished' ? true : undefined),
    timeoutMs,
    2_000,
  );
}

async function notificationStatus(id: string): Promise<string> {
  const n = (await openstack(osEnv(), ['notification', 'show', id])) as Record<string, string>;
  return n.status!;
}

async function failHost(host: string): Promise<string> {
  await fetch(`${ctx.sim!.url}/_sim/hosts/${host}/fail`, { method: 'POST' });
  const n = (await openstack(osEnv(), [
    'notification',
    'create',
    'COMPUTE_HOST',
    host,
    new Date().toISOString().slice(0, 19),
    '{"event": "STOPPED", "host_status": "NORMAL", "cluster_status": "OFFLINE"}',
  ])) as Record<string, string>;
  return n.notification_uuid!;
}

function evacuationsOf(host: string): Map<string, number> {
  const state = ctx.sim!.state;
  const counts = state.actionCounts.evacuate ?? {};
  const result = new Map<string, number>();
  for (const s of state.servers.values()) {
    if (s.name.startsWith(`${host}-`)) result.set(s.name, counts[s.id] ?? 0);
  }
  return result;
}

step('a host failure is recovered by the engine pod', async () => {
  const id = await failHost('compute-a');
  await waitFinished(id, 180_000);
  for (const [name, n] of evacuationsOf('compute-a')) assert.is(n, 1, `${name} evacuated ${n} times`);
});

step(
  'deleting the engine leader pod mid-recovery: the other replica takes over in bound, each server evacuated once',
  async () => {
    const leader = await leaderPod();
    const id = await failHost('compute-b');
    // Mid-recovery: the leader has sent evacuations, which the simulator takes 8 s to finish.
    await waitFor(
      'the first evacuation of compute-b',
      async () => ([...evacuationsOf('compute-b').values()].some((n) => n > 0) ? true : undefined),
      60_000,
      200,
    );
    const killedAt = Date.now();
    await kubectl(['delete', 'pod', leader, '-n', NS, '--grace-period=0', '--force', '--wait=false']);
    const next = await waitFor(
      'a new leader',
      async () => {
        const h = await engineLeaseHolder();
        return h && h !== leader ? h : undefined;
      },
      HANDOVER_BOUND_MS + 30_000,
      500,
    );
    const tookMs = Date.now() - killedAt;
    assert.ok(
      tookMs <= HANDOVER_BOUND_MS,
      `hand-over took ${tookMs} ms, bound ${HANDOVER_BOUND_MS} ms (new leader ${next})`,
    );
    await waitFinished(id, 240_000);
    for (const [name, n] of evacuationsOf('compute-b')) assert.is(n, 1, `${name} evacuated ${n} times`);
    await waitPodsReady(NS, ENGINE_PODS, 2);
  },
);

step('helm upgrade with changed values rolls out and keeps every CR and notification', async () => {
  const before = {
    segments: (await kubectl(['get', 'failoversegments', '-n', NS, '-o', 'name'])).trim().split('\n').sort(),
    hosts: (await kubectl(['get', 'hahosts', '-n', NS, '-o', 'name'])).trim().split('\n').sort(),
    notifications: (await kubectl(['get', 'notifications', '-n', NS, '-o', 'name'])).trim().split('\n').sort(),
  };
  assert.ok(before.notifications.length >= 2);
  await helm(['upgrade', RELEASE, CHART, ...installArgs(['--set', 'logLevel=debug']), '--wait', '--timeout', '5m']);
  await waitPodsReady(NS, API_PODS, 2);
  await waitPodsReady(NS, ENGINE_PODS, 2);
  const after = {
    segments: (await kubectl(['get', 'failoversegments', '-n', NS, '-o', 'name'])).trim().split('\n').sort(),
    hosts: (await kubectl(['get', 'hahosts', '-n', NS, '-o', 'name'])).trim().split('\n').sort(),
    notifications: (await kubectl(['get', 'notifications', '-n', NS, '-o', 'name'])).trim().split('\n').sort(),
  };
  assert.equal(after, before);
  const list = (await openstack(osEnv(), ['notification', 'list'])) as unknown[];
  assert.is(list.length, before.notifications.length);
});

step('helm uninstall removes the workloads and keeps the CRDs and CRs (docs/install.md)', async () => {
  await helm(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '3m']);
  await waitFor(
    'the pods gone',
    async () => ((await kubectl(['get', 'pods', '-n', NS, '-o', 'name'])).trim() === '' ? true : undefined),
    120_000,
    2_000,
  );
  const crds = await kubectl(['get', 'crds', '-o', 'name']);
  assert.match(crds, /failoversegments\.masakari\.openkeel\.io/);
  const segs = (await kubectl(['get', 'failoversegments', '-n', NS, '-o', 'name'])).trim();
  assert.ok(segs.length > 0, 'segments were deleted');
  const webhooks = await kubectl(['get', 'validatingwebhookconfigurations', '-o', 'name']);
  assert.not.match(webhooks, new RegExp(`${RELEASE}-`));
});

test.after(async () => {
  await ctx.sim?.stop();
  // The uninstalled release left its CRs behind, as documented; with no operator left to release their
  // finalizers, they are released here (docs/install.md, "Uninstall"). Otherwise they would block the
  // namespace's deletion, and the CRDs' deletion by the kustomize test that shares this cluster.
  const left = (await kubectlRaw(['get', 'failoversegments,hahosts,notifications', '-n', NS, '-o', 'name'])).stdout;
  for (const name of left.split('\n').filter(Boolean)) {
    await kubectlRaw(['patch', name, '-n', NS, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  }
  await kubectlRaw(['delete', 'namespace', NS, '--wait=false']);
});

test.run();
