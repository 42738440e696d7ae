// The real Medik8s NodeHealthCheck operator as a pod on the real node drives our remediator through
// one whole failure: the node's kubelet is stopped (SIGSTOP: no more status or lease renewals, its
// containers keep running), kube-controller-manager marks the Node NotReady (Ready=Unknown) after its
// node-monitor grace period, NHC creates the MasakariRemediation from our template, the fencing is
// approved (fencingProof ManualApproval: the person who powered the host off says so), the engine
// evacuates the host's servers (the mini OpenStack, or the Nova simulator: support/computes.ts), the
// repaired host's nova-compute starts again and then its kubelet resumes, the Node turns Ready, NHC deletes the CR, and the remediator returns the host to
// service (the segment's returnToService policy Restore) before its finalizer lets the CR go. The remediator and the engine run in this process
// against the cluster's API server (the operator pods of helm.test.ts are not needed for it); NHC
// runs in the cluster from the image hack/nhc/image.sh builds (Debian base, no registry). The
// timeline of the run is printed at the end (docs/medik8s.md quotes one).
// Its name sorts it after release*.test.ts (files run in name order): it applies our CRDs with
// kubectl, and a later `helm install` of the chart could not adopt CRDs it did not create.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Component } from '../../src/app/component.ts';
import { runPathScript } from '../../tools/controlplane/binaries.ts';
import { generateControlPlanePki } from '../../tools/controlplane/pki.ts';
import { createComponent as createEngine } from '../../src/engine/component.ts';
import { createKubeClient } from '../../src/k8s/kube-client.ts';
import type { KubeClient } from '../../src/k8s/client.ts';
import { isNotFound } from '../../src/k8s/client.ts';
import { RESOURCES, REMEDIATION_RESOURCES } from '../../src/k8s/resources.ts';
import type { MasakariRemediation } from '../../src/model/remediation-types.ts';
import type { Condition, Notification } from '../../src/model/types.ts';
import { createComponent as createRemediation } from '../../src/remediation/component.ts';
import type { RemediationComponent } from '../../src/remediation/component.ts';
import { standaloneStore } from '../../src/testing/store.ts';
import type { CrRepositoryHandle } from '../../src/store/index.ts';
import { fastConfig } from '../integration/engine/support.ts';
import { startComputes } from './support/computes.ts';
import type { Computes } from './support/computes.ts';
import { clusterEnv, kubectl, kubectlJson, orderedSteps, ROOT, waitFor, waitPodsReady } from './support/tools.ts';
import { startComponent } from '../../src/testing/component.ts';

const exec = promisify(execFile);
const log = pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' });
const NHC_NS = 'medik8s-nhc';
const OPERATOR_NS = 'masakari-nhc-chain';
const NHC_NAME = 'masakari-single-node';
/** NHC's image build (the binary from the snapshot, then the image): minutes the first time. */
const IMAGE_TIMEOUT_MS = 30 * 60_000;

interface Ctx {
  node?: string;
  kube?: KubeClient;
  computes?: Computes;
  store?: CrRepositoryHandle;
  engine?: Component;
  remediation?: RemediationComponent;
  stop?: AbortController;
  kubeletPid?: number;
  timeline: { step: string; at: number }[];
}
const ctx: Ctx = { timeline: [] };
const test = suite('the real NodeHealthCheck operator on a real node');
const step = orderedSteps(test, { bail: true });
const mark = (name: string, at = Date.now()) => ctx.timeline.push({ step: name, at });

const cond = (r: { status?: { conditions?: Condition[] } } | undefined, type: string) =>
  r?.status?.conditions?.find((c) => c.type === type);

/** The cluster's kubelet: the process whose command line names the run dir's kubelet root. */
function kubeletPid(): number {
  const rootDir = `--root-dir=${join(dirname(clusterEnv().kubeconfig), 'kubelet')}`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (args.includes(rootDir) && args[0]?.endsWith('kubelet')) return Number(entry);
  }
  throw new Error(`no kubelet process with ${rootDir}`);
}

async function ctr(args: string[]): Promise<void> {
  const sock = join(dirname(clusterEnv().kubeconfig), 'run', 'containerd.sock');
  await exec('ctr', ['--address', sock, '--namespace', 'k8s.io', ...args], { timeout: 300_000, maxBuffer: 16 << 20 });
}

async function nodeReady(): Promise<string | undefined> {
  const node = await kubectlJson<{ status?: { conditions?: { type: string; status: string }[] } }>([
    'get',
    'node',
    ctx.node!,
  ]);
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

/** The MasakariRemediation `name` of the operator's namespace, read afresh. */
const remediation = (name: string) =>
  ctx.kube!.get<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, OPERATOR_NS, name);

async function remediations(): Promise<MasakariRemediation[]> {
  return (await ctx.kube!.list<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, OPERATOR_NS)).items;
}

/** What the test applies, in the documented shape (docs/medik8s.md quotes it). */
const NODE_HEALTH_CHECK = (node: string) => ({
  apiVersion: 'remediation.medik8s.io/v1alpha1',
  kind: 'NodeHealthCheck',
  metadata: { name: NHC_NAME },
  spec: {
    selector: { matchLabels: { 'kubernetes.io/hostname': node } },
    // one node: 0 healthy of 1 must still be allowed to remediate
    minHealthy: 0,
    unhealthyConditions: [
      { type: 'Ready', status: 'False', duration: '5s' },
      { type: 'Ready', status: 'Unknown', duration: '5s' },
    ],
    remediationTemplate: {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'MasakariRemediationTemplate',
      namespace: OPERATOR_NS,
      name: 'masakari',
    },
  },
});

step(
  'NHC runs as a pod from its locally built image, with its CRD from the snapshot',
  async () => {
    const env = clusterEnv();
    const archive = await runPathScript(join(ROOT, 'hack', 'nhc', 'image.sh'), IMAGE_TIMEOUT_MS);
    const commit = readFileSync(join(dirname(archive), 'COMMIT'), 'utf8').trim();
    await ctr(['images', 'import', archive]);
    for (const f of readdirSync(join(dirname(archive), 'crds'))) {
      await kubectl(['apply', '--server-side', '-f', join(dirname(archive), 'crds', f)]);
    }
    const { serving } = generateControlPlanePki({ validDays: 2 });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const manifests = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NHC_NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nhc', namespace: NHC_NS } },
      {
        // NHC's own bundle ships a narrower ClusterRole plus an aggregated one for the remediators'
        // kinds; the test binds cluster-admin instead of installing OLM's bundle.
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'medik8s-nhc-test' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'nhc', namespace: NHC_NS }],
      },
      {
        // controller-runtime's default webhook cert dir; no webhook configuration points at it
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'nhc-webhook-cert', namespace: NHC_NS },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem) },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'nhc', namespace: NHC_NS },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'nhc' } },
          template: {
            metadata: { labels: { app: 'nhc' } },
            spec: {
              serviceAccountName: 'nhc',
              containers: [
                {
                  name: 'manager',
                  image: `localhost/medik8s-nhc:${commit}`,
                  imagePullPolicy: 'Never',
                  args: ['--leader-elect=false', '--metrics-bind-address=0', '--health-probe-bind-address=:8081'],
                  env: [
                    { name: 'DEPLOYMENT_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  ],
                  readinessProbe: { httpGet: { path: '/readyz', port: 8081 }, periodSeconds: 2 },
                  volumeMounts: [{ name: 'cert', mountPath: '/tmp/k8s-webhook-server/serving-certs', readOnly: true }],
                  securityContext: {
                    runAsNonRoot: true,
                    allowPrivilegeEscalation: false,
                    capabilities: { drop: ['ALL'] },
                  },
                },
              ],
              volumes: [{ name: 'cert', secret: { secretName: 'nhc-webhook-cert' } }],
            },
          },
        },
      },
    ];
    await kubectl(['apply', '--server-side', '-f', '-'], {
      input: manifests.map((m) => JSON.stringify(m)).join('\n'),
    });
    await waitPodsReady(NHC_NS, 'app=nhc', 1, 180_000);
    assert.ok(env.nodeIp);
  },
  { prerequisite: true },
);

step(
  'our remediator and engine against the cluster, the node registered as a host of a segment, servers on it',
  async () => {
    const nodes = await kubectlJson<{ items: { metadata: { name: string } }[] }>(['get', 'nodes']);
    assert.is(nodes.items.length, 1);
    ctx.node = nodes.items[0]!.metadata.name;
    await kubectl(['apply', '--server-side', '-f', join(ROOT, 'crds')]);
    await kubectl(['create', 'namespace', OPERATOR_NS]);
    const kc = new KubeConfig();
    kc.loadFromFile(clusterEnv().kubeconfig);
    const kube = createKubeClient(kc);
    ctx.kube = kube;
    await waitFor(
      'our CRDs served',
      async () => ((await kube.list(REMEDIATION_RESOURCES.templates, OPERATOR_NS)) ? true : undefined),
      60_000,
    );
    const computes = await startComputes();
    ctx.computes = computes;
    // the node runs compute host <computes.failed> (the mapping annotation)
    await kubectl([
      'annotate',
      '--overwrite',
      'node',
      ctx.node,
      `masakari.openkeel.io/compute-host=${computes.failed}`,
    ]);
    // Masakari's waits shrunk (the test's steps are seconds apart); only HA_Enabled servers move
    const config = fastConfig((c) => {
      c.DEFAULT.wait_period_after_service_update = 0;
      c.host_failure.evacuate_all_instances = false;
    });
    ctx.store = standaloneStore({ kube, namespace: OPERATOR_NS, config, log });
    await ctx.store.start();
    const segment = await ctx.store.createSegment({
      name: 'workers',
      service_type: 'COMPUTE',
      recovery_method: 'auto',
      description: null,
      enabled: true,
    });
    for (const name of [computes.failed, ...computes.others]) {
      await ctx.store.createHost(segment.uuid, {
        name,
        type: 'COMPUTE',
        control_attributes: 'SSH',
        reserved: false,
        on_maintenance: false,
      });
    }
    // once NHC deletes the CR, the remediator returns the host to service (src/remediation/return-on-delete.ts)
    await kube.mergePatch(RESOURCES.segments, OPERATOR_NS, segment.k8sName, {
      spec: { returnToService: { policy: 'Restore' } },
    });
    const count = 1 + computes.others.length;
    await waitFor('the hosts', async () => (ctx.store!.listHosts().length === count ? true : undefined), 30_000, 200);
    ctx.stop = new AbortController();
    const appContext = (identity: string) => ({
      config,
      namespace: OPERATOR_NS,
      kube,
      nova: computes.nova,
      log: log.child({ identity }),
      metrics: new Registry(),
      identity,
      signal: ctx.stop!.signal,
    });
    ctx.engine = await startComponent(appContext('nhc-chain-engine'), createEngine);
    ctx.remediation = await startComponent(appContext('nhc-chain-remediation'), (app) =>
      createRemediation(app, { followIntervalMs: 500 }),
    );
    await waitFor('the remediation leader', async () => (ctx.remediation!.isLeading() ? true : undefined), 60_000);
    await kube.create(REMEDIATION_RESOURCES.templates, OPERATOR_NS, {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'MasakariRemediationTemplate',
      metadata: { name: 'masakari' },
      spec: { template: { spec: { fencingProof: 'ManualApproval' } } },
    });
    await kubectl(['apply', '--server-side', '-f', '-'], { input: JSON.stringify(NODE_HEALTH_CHECK(ctx.node)) });
    const nhc = await waitFor(
      'NHC to take the NodeHealthCheck up',
      async () => {
        const n = await kubectlJson<{ status?: { phase?: string; observedNodes?: number } }>([
          'get',
          'nodehealthcheck',
          NHC_NAME,
        ]);
        return n.status?.phase === 'Enabled' ? n : undefined;
      },
      60_000,
    );
    assert.is(nhc.status?.observedNodes, 1);
  },
  { prerequisite: true },
);

step('kubelet stopped → NotReady → NHC creates the CR → fenced → evacuated → Ready → NHC deletes it', async () => {
  const kube = ctx.kube!;
  const computes = ctx.computes!;
  ctx.kubeletPid = kubeletPid();
  process.kill(ctx.kubeletPid, 'SIGSTOP');
  mark('kubelet stopped (SIGSTOP)');
  try {
    await waitFor('the Node NotReady', async () => ((await nodeReady()) !== 'True' ? true : undefined), 180_000);
    mark('Node NotReady (kube-controller-manager: Ready=Unknown)');
    // the node is down: so is its nova-compute
    await computes.fail();
    const [created] = await waitFor(
      'NHC to create the MasakariRemediation',
      async () => {
        const l = await remediations();
        return l.length ? l : undefined;
      },
      60_000,
      250,
    );
    mark('MasakariRemediation created by NHC');
    assert.is(created!.metadata.annotations?.['remediation.medik8s.io/node-name'], ctx.node);
    await waitFor(
      'WaitingForFencing',
      async () => {
        const r = await remediation(created!.metadata.name!);
        return cond(r, 'Processing')?.reason === 'WaitingForFencing' ? r : undefined;
      },
      30_000,
      250,
    );
    // The person who powered the host off vouches for it.
    await kube.mergePatch(REMEDIATION_RESOURCES.remediations, OPERATOR_NS, created!.metadata.name!, {
      metadata: { annotations: { 'masakari.openkeel.io/fencing-approved-by': 'oncall@example.org' } },
    });
    const fenced = await waitFor(
      'FencingVerified',
      async () => {
        const r = await remediation(created!.metadata.name!);
        return cond(r, 'FencingVerified')?.status === 'True' ? r : undefined;
      },
      30_000,
      100,
    );
    mark('fenced (FencingVerified=True, ManualApproval)');
    assert.ok(fenced.status?.fencedAt);
    const done = await waitFor(
      'Succeeded=True',
      async () => {
        const r = await remediation(created!.metadata.name!);
        const s = cond(r, 'Succeeded')?.status;
        if (s === 'False') throw new Error(`Succeeded=False: ${JSON.stringify(r.status)}`);
        return s === 'True' ? r : undefined;
      },
      120_000,
      250,
    );
    const n = await kube.get<Notification>(RESOURCES.notifications, OPERATOR_NS, done.status!.notificationName!);
    assert.is(n.status?.phase, 'finished');
    mark('evacuated (notification finished, Succeeded=True)');
    for (const [name, host] of await computes.placement()) {
      assert.ok(computes.others.includes(host), `${name} is on ${host}, not on one of ${computes.others.join(', ')}`);
    }
    // The host is repaired: its nova-compute starts before its kubelet is back, as on a host that
    // boots again. Real Nova refuses to clear forced_down until that restart has cleaned up the
    // evacuation records (support/computes.ts), so the return to service at the CR's deletion
    // can only succeed after it.
    await computes.restartCompute();
    mark(`${computes.failed}'s nova-compute restarted (evacuation records cleaned up)`);
  } finally {
    process.kill(ctx.kubeletPid, 'SIGCONT');
  }
  mark('kubelet resumed (SIGCONT)');
  await waitFor('the Node Ready', async () => ((await nodeReady()) === 'True' ? true : undefined), 120_000, 250);
  mark('Node Ready');
  await waitFor(
    'NHC to delete the CR and our finalizer to let it go',
    async () => ((await remediations()).length === 0 ? true : undefined),
    60_000,
    250,
  );
  mark('MasakariRemediation deleted by NHC (our finalizer removed)');
  const nhc = await waitFor(
    'NHC to count the node healthy again',
    async () => {
      const n = await kubectlJson<{ status?: { healthyNodes?: number; unhealthyNodes?: unknown[] } }>([
        'get',
        'nodehealthcheck',
        NHC_NAME,
      ]);
      return n.status?.healthyNodes === 1 ? n : undefined;
    },
    60_000,
    250,
  );
  assert.equal(nhc.status?.unhealthyNodes ?? [], []);
  mark('NHC counts the node healthy');
  // Return to service, by the remediator on the deletion (segment policy Restore): forced_down
  // cleared, the service enabled, the host out of maintenance.
  const svc = await (async () => {
    try {
      return await waitFor(
        `${computes.failed}'s nova-compute returned to service`,
        async () => {
          const s = await computes.service();
          const host = ctx.store!.listHosts().find((h) => h.name === computes.failed);
          return !s.forced_down && s.status === 'enabled' && host && !host.on_maintenance ? s : undefined;
        },
        60_000,
        250,
      );
    } catch (err) {
      // the remediator's own account of the deletion (its RemediationDeleted Event) says what it left
      const events = await kubectlJson<{ items: { reason?: string; note?: string }[] }>([
        'get',
        'events.events.k8s.io',
        '-n',
        OPERATOR_NS,
      ]).catch(() => ({ items: [] }));
      const notes = events.items.filter((e) => e.reason === 'RemediationDeleted').map((e) => e.note);
      throw new Error(
        `${err instanceof Error ? err.message : String(err)}; RemediationDeleted: ${JSON.stringify(notes)}`,
      );
    }
  })();
  assert.is(svc.forced_down, false);
  mark('back in service (forced_down off, service enabled, on_maintenance off: by the remediator)');
  // forced_down cleared, the restarted nova-compute reads up again
  await waitFor(
    `${computes.failed}'s nova-compute up`,
    async () => ((await computes.service()).state === 'up' ? true : undefined),
    180_000,
  );
  mark(`${computes.failed}'s nova-compute up`);
  const start = ctx.timeline[0]!.at;
  const lines = ctx.timeline.map((t) => `  +${((t.at - start) / 1000).toFixed(1).padStart(6)} s  ${t.step}`);
  process.stdout.write(
    `\nNHC chain timeline, ${computes.kind} (${new Date(start).toISOString()}):\n${lines.join('\n')}\n`,
  );
});

test.after(async () => {
  if (ctx.kubeletPid) {
    try {
      process.kill(ctx.kubeletPid, 'SIGCONT');
    } catch {
      // gone already
    }
  }
  // The NodeHealthCheck and NHC first, so nothing creates another CR; then what is left of ours,
  // while our remediator still runs to drop its finalizer.
  await kubectl(['delete', 'nodehealthcheck', NHC_NAME, '--ignore-not-found']).catch(() => undefined);
  await kubectl(['delete', 'namespace', NHC_NS, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  await kubectl(['delete', 'clusterrolebinding', 'medik8s-nhc-test', '--ignore-not-found']).catch(() => undefined);
  if (ctx.kube) {
    try {
      for (const r of await remediations()) {
        await ctx.kube.delete(REMEDIATION_RESOURCES.remediations, OPERATOR_NS, r.metadata.name!);
      }
      await waitFor('our remediations gone', async () => ((await remediations()).length ? undefined : true), 30_000);
    } catch (err) {
      if (!isNotFound(err)) process.stderr.write(`cleanup: ${String(err)}\n`);
    }
  }
  ctx.stop?.abort();
  await ctx.remediation?.stop();
  await ctx.engine?.stop();
  await ctx.store?.stop();
  await ctx.computes?.stop();
  await kubectl(['delete', 'namespace', OPERATOR_NS, '--ignore-not-found', '--wait=false']).catch(() => undefined);
});

test.run();
