// The real Medik8s NodeHealthCheck operator (built from the source snapshot by hack/nhc/build.sh,
// test/support/nhc.ts) drives the remediator, the engine and the Nova simulator on the test control
// plane. Where nhc-remediation.test.ts creates MasakariRemediations as we read NHC's contract, here
// NHC creates, annotates and deletes them itself, and each test fails if our remediator disagrees
// with what it does: the medik8s node lease, the exclude-from-remediation label, the nhc-timed-out
// annotation and escalation (FenceAgentsRemediation → MasakariRemediation, FAR played by the test
// through minimal CRDs of its kinds), the Succeeded condition NHC reads, a node healthy again
// mid-recovery, and minHealthy. Each test has its own NodeHealthCheck over its own Nodes (selected
// by label), so one NHC process serves the file. Node conditions are written by the tests (there is
// no kubelet nor node lifecycle controller here): Ready=False with a transition 10 s ago is
// "unhealthy" at once for the 1 s unhealthy duration used here (production: minutes).
import { eventually } from '../../support/eventually.ts';

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadAll } from 'js-yaml';
import {
  componentEnv,
  createIfAbsent,
  notificationsOf as notifications,
  openCrd,
  untilServed,
} from '../../support/component-env.ts';
import {
  conditionOf as cond,
  getRemediation,
  remediationWhen,
  succeededRemediation,
  waitingForFencing,
} from '../../support/remediation.ts';
import type { ComponentEnv } from '../../support/component-env.ts';
import { ensureNhc, startNhc } from '../../support/nhc.ts';
import type { RunningNhc } from '../../support/nhc.ts';
import type { Component } from '../../../src/app/component.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import type { KubeClient, ResourceRef } from '../../../src/k8s/client.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import { RESOURCES, REMEDIATION_RESOURCES } from '../../../src/k8s/resources.ts';
import type {
  FenceAgentsRemediationLike,
  LeaseLike,
  MasakariRemediation,
  MasakariRemediationSpec,
} from '../../../src/model/remediation-types.ts';
import type { Condition, Notification } from '../../../src/model/types.ts';
import { createComponent as createRemediation } from '../../../src/remediation/component.ts';
import type { RemediationComponent } from '../../../src/remediation/component.ts';
import { startComponent } from '../../../src/testing/component.ts';

// Nodes, leases and NodeHealthChecks are cluster-wide: names carry a per-run suffix.
const SUFFIX = randomBytes(3).toString('hex');
const node = (group: string, n: number): string => `nhc-${SUFFIX}-${group}${n}`;
const GROUP_LABEL = 'nhc-test.openkeel.io/group';
const LEASE_NS = 'medik8s-leases';

const NHCS: ResourceRef = {
  group: 'remediation.medik8s.io',
  version: 'v1alpha1',
  plural: 'nodehealthchecks',
  namespaced: false,
};

interface NodeHealthCheck {
  metadata: { name: string; uid?: string };
  status?: {
    phase?: string;
    healthyNodes?: number;
    observedNodes?: number;
    unhealthyNodes?: { name: string; remediations?: { resource: { name: string }; timedOut?: string }[] }[];
    conditions?: Condition[];
  };
}

interface Env extends ComponentEnv {
  engine: Component;
  remediation: RemediationComponent;
  nhc: RunningNhc;
}

const test = suite<{ env?: Env }>('the real NodeHealthCheck operator drives MasakariRemediation', {});

// ------------------------------------------------------------------ fixtures

const GROUPS = { chain: 1, farchain: 1, fastfail: 1, stuck: 1, exclude: 2, lease: 1, midway: 1, quorum: 3 } as const;
type Group = keyof typeof GROUPS;

const ago = (ms: number) => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** Ready=status since 10 s ago, as a kubelet (Ready) or the node lifecycle controller (NotReady) writes it. */
async function setReady(kube: KubeClient, name: string, ready: boolean): Promise<void> {
  const since = ago(10_000);
  await kube.mergePatch(
    RESOURCES.nodes,
    undefined,
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: ready ? 'True' : 'False',
            reason: ready ? 'KubeletReady' : 'KubeletNotReady',
            message: ready ? 'kubelet is posting ready status' : 'container runtime is down',
            lastHeartbeatTime: since,
            lastTransitionTime: since,
          },
        ],
      },
    },
    { status: true },
  );
}

/** The NodeHealthCheck of a group, over its Nodes; `remediation` is its remediationTemplate or escalatingRemediations. */
async function createNhc(
  env: Env,
  group: Group,
  remediation:
    | { remediationTemplate: object }
    | { escalatingRemediations: { remediationTemplate: object; order: number; timeout: string }[] },
  extra: Record<string, unknown> = {},
): Promise<string> {
  const name = `${group}-${SUFFIX}`;
  await env.kube.create(NHCS, undefined, {
    apiVersion: 'remediation.medik8s.io/v1alpha1',
    kind: 'NodeHealthCheck',
    metadata: { name },
    spec: {
      selector: { matchLabels: { [GROUP_LABEL]: `${group}-${SUFFIX}` } },
      unhealthyConditions: [
        { type: 'Ready', status: 'False', duration: '1s' },
        { type: 'Ready', status: 'Unknown', duration: '1s' },
      ],
      minHealthy: 0,
      ...remediation,
      ...extra,
    },
  });
  return name;
}

const templateRef = (env: Env, name: string) => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'MasakariRemediationTemplate',
  namespace: env.ns.namespace,
  name,
});

async function createTemplate(env: Env, name: string, spec: MasakariRemediationSpec, multiple = false): Promise<void> {
  await env.kube.create(REMEDIATION_RESOURCES.templates, env.ns.namespace, {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'MasakariRemediationTemplate',
    metadata: {
      name,
      ...(multiple ? { annotations: { 'remediation.medik8s.io/multiple-templates-support': 'true' } } : {}),
    },
    spec: { template: { spec } },
  });
}

/** The MasakariRemediations NHC made for a node (by its node-name annotation). */
async function remediationsOf(env: Env, nodeName: string): Promise<MasakariRemediation[]> {
  const list = await env.kube.list<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, env.ns.namespace);
  return list.items
    .filter((r) => r.metadata.annotations?.['remediation.medik8s.io/node-name'] === nodeName)
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
}

async function theRemediation(env: Env, nodeName: string, label = 'NHC to create a MasakariRemediation') {
  const [r] = await eventually(
    label,
    () => remediationsOf(env, nodeName),
    (l) => l.length > 0,
    30_000,
  );
  return r!;
}

const approve = (env: Env, name: string) =>
  env.kube.mergePatch(REMEDIATION_RESOURCES.remediations, env.ns.namespace, name, {
    metadata: { annotations: { 'masakari.openkeel.io/fencing-approved-by': 'nhc-test@ops' } },
  });

async function readLease(env: Env, nodeName: string): Promise<LeaseLike | undefined> {
  try {
    return await env.kube.get<LeaseLike>(RESOURCES.leases, LEASE_NS, `node-${nodeName}`);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The Events NHC recorded on one NodeHealthCheck (core/v1 Events in the default namespace, as client-go's recorder writes them). */
async function nhcEvents(env: Env, nhcName: string): Promise<{ reason: string; message: string }[]> {
  const list = await env.kube.list<{
    reason?: string;
    message?: string;
    involvedObject?: { kind?: string; name?: string };
  }>({ group: '', version: 'v1', plural: 'events', namespaced: true }, 'default');
  return list.items
    .filter((e) => e.involvedObject?.kind === 'NodeHealthCheck' && e.involvedObject.name === nhcName)
    .map((e) => ({ reason: e.reason ?? '', message: e.message ?? '' }));
}

// FenceAgentsRemediation(Template) as minimal CRDs of FAR's group/version/kinds: NHC creates the FAR CR
// from the template, and the tests play FAR's part (its status).
const FAR_GROUP = 'fence-agents-remediation.medik8s.io';
const FAR_TEMPLATES: ResourceRef = {
  group: FAR_GROUP,
  version: 'v1alpha1',
  plural: 'fenceagentsremediationtemplates',
  namespaced: true,
};

const farTemplateRef = (env: Env) => ({
  apiVersion: `${FAR_GROUP}/v1alpha1`,
  kind: 'FenceAgentsRemediationTemplate',
  namespace: env.ns.namespace,
  name: 'far',
});

async function createFarTemplate(env: Env): Promise<void> {
  await createIfAbsent(env.kube, FAR_TEMPLATES, env.ns.namespace, {
    apiVersion: `${FAR_GROUP}/v1alpha1`,
    kind: 'FenceAgentsRemediationTemplate',
    metadata: { name: 'far' },
    spec: { template: { spec: { agent: 'fence_ipmilan', sharedparameters: { '--action': 'off' } } } },
  });
}

async function farOf(env: Env, nodeName: string): Promise<FenceAgentsRemediationLike | undefined> {
  try {
    return await env.kube.get<FenceAgentsRemediationLike>(
      REMEDIATION_RESOURCES.fenceAgentsRemediations,
      env.ns.namespace,
      nodeName,
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function farSucceeded(env: Env, far: FenceAgentsRemediationLike): Promise<void> {
  const now = ago(0);
  const c = (type: string, status: string) => ({
    type,
    status,
    reason: 'FenceAgentSucceeded',
    message: '',
    lastTransitionTime: now,
  });
  await env.kube.replaceStatus(REMEDIATION_RESOURCES.fenceAgentsRemediations, env.ns.namespace, far.metadata.name!, {
    ...far,
    status: {
      conditions: [c('Processing', 'False'), c('FenceAgentActionSucceeded', 'True'), c('Succeeded', 'True')],
    },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ set-up

test.before(async (ctx) => {
  const nhcBuild = await ensureNhc();
  const nodes = (Object.keys(GROUPS) as Group[]).flatMap((g) =>
    Array.from({ length: GROUPS[g] }, (_, i) => ({ name: node(g, i + 1), group: g })),
  );
  const env = await componentEnv({
    namespace: 'nhc-real',
    segment: 'workers',
    hosts: [...nodes.map((n) => n.name), `spare-${SUFFIX}`],
    servers: [
      { name: 'chain-vm', host: node('chain', 1), metadata: { HA_Enabled: 'True' } },
      { name: 'midway-vm', host: node('midway', 1), metadata: { HA_Enabled: 'True' } },
    ],
  });
  const { kube, ns } = env;
  for (const file of nhcBuild.crdFiles) {
    for (const doc of loadAll(readFileSync(file, 'utf8'))) {
      if (doc) await createIfAbsent(kube, RESOURCES.crds, undefined, doc);
    }
  }
  await untilServed(kube, NHCS, undefined);
  for (const [kind, plural] of [
    ['FenceAgentsRemediation', 'fenceagentsremediations'],
    ['FenceAgentsRemediationTemplate', 'fenceagentsremediationtemplates'],
  ] as const) {
    await createIfAbsent(kube, RESOURCES.crds, undefined, openCrd(FAR_GROUP, kind, plural));
  }
  await untilServed(kube, FAR_TEMPLATES, ns.namespace);
  for (const n of nodes) {
    await kube.create(RESOURCES.nodes, undefined, {
      metadata: { name: n.name, labels: { [GROUP_LABEL]: `${n.group}-${SUFFIX}` } },
    });
  }
  // every Node Ready before NHC looks
  for (const n of nodes) await setReady(kube, n.name, true);

  const engine = await startComponent(env.appContext('test-engine'), createEngine);
  const remediation = await startComponent(env.appContext('test-remediation'), (app) =>
    createRemediation(app, { followIntervalMs: 300 }),
  );
  const nhc = await startNhc({ kubeconfigPath: ns.kubeconfigPath, deploymentNamespace: ns.namespace });
  ctx.env = { ...env, engine, remediation, nhc };
  await eventually(
    'the remediation leader',
    async () => remediation.isLeading(),
    (l) => l,
  );
});

test.after(async ({ env }) => {
  if (!env) return;
  for (const g of Object.keys(GROUPS)) {
    await env.kube.delete(NHCS, undefined, `${g}-${SUFFIX}`).catch(() => undefined);
  }
  await env.nhc.stop();
  await env.close(env.remediation, env.engine);
});

// ------------------------------------------------------------------ tests

test('NotReady → NHC creates the CR and holds the node lease → fenced → evacuated → Succeeded=True → Ready → NHC deletes it', async ({
  env,
}) => {
  const e = env!;
  const w = node('chain', 1);
  await createTemplate(e, 'chain', { fencingProof: 'ManualApproval' });
  const nhcName = await createNhc(e, 'chain', { remediationTemplate: templateRef(e, 'chain') });

  await setReady(e.kube, w, false);
  const created = await theRemediation(e, w);
  // What NHC writes, against what nhc-remediation.test.ts emulates: without the multiple-templates
  // annotation the CR is named after the node; the annotations, the label and the owner are as read.
  assert.is(created.metadata.name, w);
  assert.is(created.metadata.annotations?.['remediation.medik8s.io/template-name'], 'chain');
  assert.is(created.metadata.labels?.['app.kubernetes.io/part-of'], 'node-healthcheck-controller');
  const owner = created.metadata.ownerReferences?.find((o) => o.kind === 'NodeHealthCheck');
  assert.is(owner?.name, nhcName);
  assert.is(owner?.apiVersion, 'remediation.medik8s.io/v1alpha1');
  // the template's spec.template.spec, with the CRD's defaults filled in by the API server
  assert.is(created.spec?.fencingProof, 'ManualApproval');

  // NHC holds the medik8s lease while it remediates; our remediator does not count it as a reason to wait.
  const lease = await eventually(
    'the node lease',
    () => readLease(e, w),
    (l) => !!l,
  );
  assert.is(lease!.spec?.holderIdentity, `NodeHealthCheck-${nhcName}`);
  const waiting = await waitingForFencing(e, created.metadata.name!);
  assert.is(cond(waiting, 'Processing')?.status, 'True');
  assert.is(cond(waiting, 'Succeeded')?.status, 'Unknown');
  assert.ok(waiting.metadata.finalizers?.includes('masakari.openkeel.io/remediation'));
  assert.equal(await notifications(e, w), []);

  e.sim.state.failHost(w);
  await approve(e, created.metadata.name!);
  const done = await succeededRemediation(e, created.metadata.name!);
  assert.is(cond(done, 'Processing')?.status, 'False');
  const vm = [...e.sim.state.servers.values()].find((s) => s.name === 'chain-vm');
  assert.is.not(vm?.host, w);

  // Succeeded=True and the node still NotReady: NHC leaves the CR (no timeout annotation, no second CR).
  await sleep(2_000);
  const still = await remediationsOf(e, w);
  assert.is(still.length, 1);
  assert.is(still[0]!.metadata.annotations?.['remediation.medik8s.io/nhc-timed-out'], undefined);

  // The node comes back: NHC deletes the CR, our finalizer goes, NHC forgets the node and drops the lease.
  e.sim.state.recoverHost(w);
  await setReady(e.kube, w, true);
  await eventually(
    'NHC to delete the CR and our finalizer to let it go',
    () => remediationsOf(e, w),
    (l) => l.length === 0,
    30_000,
  );
  const status = await eventually(
    'NHC to count the node healthy',
    () => e.kube.get<NodeHealthCheck>(NHCS, undefined, nhcName),
    (n) => (n.status?.unhealthyNodes ?? []).length === 0 && n.status?.healthyNodes === 1,
    30_000,
  );
  assert.is(status.status?.observedNodes, 1);
  await eventually(
    'the lease released',
    () => readLease(e, w),
    (l) => !l || !l.spec?.holderIdentity,
  );
});

test("escalation FAR → Masakari: FAR's Succeeded=True gets no timeout annotation; its proof lets us evacuate", async ({
  env,
}) => {
  const e = env!;
  const w = node('farchain', 1);
  await createFarTemplate(e);
  await createTemplate(e, 'after-far', { fencingProof: 'FenceAgentsRemediation' });
  const nhcName = await createNhc(e, 'farchain', {
    escalatingRemediations: [
      { remediationTemplate: farTemplateRef(e), order: 0, timeout: '5s' },
      { remediationTemplate: templateRef(e, 'after-far'), order: 1, timeout: '300s' },
    ],
  });
  e.sim.state.failHost(w);
  await setReady(e.kube, w, false);

  // Step 1: NHC creates the FenceAgentsRemediation; FAR (played here) powers the node off and succeeds.
  const far = await eventually(
    'NHC to create the FenceAgentsRemediation',
    () => farOf(e, w),
    (f) => !!f,
    30_000,
  );
  assert.equal(await remediationsOf(e, w), []);
  await farSucceeded(e, far!);

  // After FAR's 5 s step NHC moves on without annotating FAR's CR (Succeeded=True) and creates ours.
  const r = await theRemediation(e, w, 'NHC to escalate to MasakariRemediation');
  assert.is((await farOf(e, w))?.metadata.annotations?.['remediation.medik8s.io/nhc-timed-out'], undefined);
  const done = await succeededRemediation(e, r.metadata.name!);
  assert.is(cond(done, 'FencingVerified')?.reason, 'FenceAgentActionSucceeded');
  const status = await e.kube.get<NodeHealthCheck>(NHCS, undefined, nhcName);
  const steps = status.status?.unhealthyNodes?.find((u) => u.name === w)?.remediations ?? [];
  assert.is(steps.length, 2);
  assert.ok(steps[0]!.timedOut, 'FAR step ended by its timeout');
  assert.not.ok(steps[1]!.timedOut);
  e.sim.state.recoverHost(w);
});

test('our Succeeded=False makes NHC escalate at once, long before the step timeout', async ({ env }) => {
  const e = env!;
  const w = node('fastfail', 1);
  await createFarTemplate(e);
  // The template's segment namespace has no such host: we fail at once (HostNotFound).
  await createTemplate(e, 'fails', { fencingProof: 'ManualApproval', segmentNamespace: 'no-such-segments' });
  await createNhc(e, 'fastfail', {
    escalatingRemediations: [
      { remediationTemplate: templateRef(e, 'fails'), order: 0, timeout: '300s' },
      { remediationTemplate: farTemplateRef(e), order: 1, timeout: '300s' },
    ],
  });
  await setReady(e.kube, w, false);
  const r = await theRemediation(e, w);
  const failed = await remediationWhen(
    e,
    r.metadata.name!,
    'our Succeeded=False',
    (x) => cond(x, 'Succeeded')?.status === 'False',
  );
  assert.is(cond(failed, 'Succeeded')?.reason, 'HostNotFound');
  await eventually(
    'NHC to escalate to FAR',
    () => farOf(e, w),
    (f) => !!f,
    30_000,
  );
  const annotated = await getRemediation(e, r.metadata.name!);
  // NHC marks the failed step timed out too; ours is finished already and stays as it was.
  assert.ok(annotated.metadata.annotations?.['remediation.medik8s.io/nhc-timed-out']);
  assert.is(cond(annotated, 'Succeeded')?.reason, 'HostNotFound');
});

test("NHC's step timeout: its nhc-timed-out annotation stops us with RemediationTimeoutByNHC; nothing is filed after", async ({
  env,
}) => {
  const e = env!;
  const w = node('stuck', 1);
  await createFarTemplate(e);
  await createTemplate(e, 'stuck', { fencingProof: 'ManualApproval' });
  await createNhc(e, 'stuck', {
    escalatingRemediations: [
      { remediationTemplate: templateRef(e, 'stuck'), order: 0, timeout: '8s' },
      { remediationTemplate: farTemplateRef(e), order: 1, timeout: '300s' },
    ],
  });
  await setReady(e.kube, w, false);
  const r = await theRemediation(e, w);
  await waitingForFencing(e, r.metadata.name!);
  const timedOut = await remediationWhen(
    e,
    r.metadata.name!,
    'RemediationTimeoutByNHC',
    (x) => cond(x, 'Succeeded')?.status === 'False',
    40_000,
  );
  assert.ok(timedOut.metadata.annotations?.['remediation.medik8s.io/nhc-timed-out']);
  assert.is(cond(timedOut, 'Succeeded')?.reason, 'RemediationTimeoutByNHC');
  assert.is(cond(timedOut, 'Processing')?.status, 'False');
  await eventually(
    'NHC to go on to FAR',
    () => farOf(e, w),
    (f) => !!f,
    30_000,
  );
  // An approval arriving after the timeout starts nothing.
  await approve(e, r.metadata.name!);
  await sleep(1_500);
  assert.equal(await notifications(e, w), []);
});

test('the exclude-from-remediation label: "true" stops NHC and holds us; an empty value is ignored by both', async ({
  env,
}) => {
  const e = env!;
  const [excluded, emptyLabel] = [node('exclude', 1), node('exclude', 2)];
  const label = 'remediation.medik8s.io/exclude-from-remediation';
  await e.kube.mergePatch(RESOURCES.nodes, undefined, excluded, { metadata: { labels: { [label]: 'true' } } });
  await e.kube.mergePatch(RESOURCES.nodes, undefined, emptyLabel, { metadata: { labels: { [label]: '' } } });
  await createTemplate(e, 'exclude', { fencingProof: 'ManualApproval' });
  const nhcName = await createNhc(e, 'exclude', { remediationTemplate: templateRef(e, 'exclude') });
  await setReady(e.kube, excluded, false);
  await setReady(e.kube, emptyLabel, false);

  // An empty value: NHC warns and remediates, and we do not hold it either.
  const r = await theRemediation(e, emptyLabel);
  await waitingForFencing(e, r.metadata.name!, 'WaitingForFencing (not NodeExcluded)');
  await eventually(
    'NHC to skip the labelled node',
    () => nhcEvents(e, nhcName),
    (l) => l.some((ev) => ev.reason === 'RemediationSkipped' && ev.message.includes(excluded)),
  );
  assert.equal(await remediationsOf(e, excluded), []);

  // The label set to "true" mid-remediation: NHC keeps the CR, we hold and file nothing; removed, we go on.
  await e.kube.mergePatch(RESOURCES.nodes, undefined, emptyLabel, { metadata: { labels: { [label]: 'true' } } });
  await approve(e, r.metadata.name!);
  const held = await remediationWhen(
    e,
    r.metadata.name!,
    'NodeExcludedFromRemediation',
    (x) => cond(x, 'Processing')?.reason === 'NodeExcludedFromRemediation',
  );
  assert.is(held.metadata.deletionTimestamp, undefined);
  await sleep(1_500);
  assert.equal(await notifications(e, emptyLabel), []);
  assert.is((await remediationsOf(e, emptyLabel)).length, 1);
  await e.kube.mergePatch(RESOURCES.nodes, undefined, emptyLabel, { metadata: { labels: { [label]: null } } });
  await remediationWhen(
    e,
    r.metadata.name!,
    'the notification once the label is gone',
    (x) => !!x.status?.notificationUuid,
    30_000,
  );
});

test('a node lease Node Maintenance holds: NHC creates nothing; once free, NHC takes it and we do not wait on it', async ({
  env,
}) => {
  const e = env!;
  const w = node('lease', 1);
  const now = new Date().toISOString().replace('Z', '000Z');
  await e.kube.create(RESOURCES.leases, LEASE_NS, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: `node-${w}` },
    spec: { holderIdentity: 'node-maintenance', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
  });
  await createTemplate(e, 'lease', { fencingProof: 'ManualApproval' });
  const nhcName = await createNhc(e, 'lease', { remediationTemplate: templateRef(e, 'lease') });
  await setReady(e.kube, w, false);
  await eventually(
    'NHC to skip the node whose lease is taken',
    () => nhcEvents(e, nhcName),
    (l) => l.some((ev) => ev.reason === 'RemediationSkipped' && ev.message.includes('lease')),
    30_000,
  );
  assert.equal(await remediationsOf(e, w), []);

  // Maintenance "crashed": its lease expired without renewal. NHC takes over a lapsed lease, and so
  // may we (the same validity rule: renewTime + duration in the past means free).
  const old = await readLease(e, w);
  const stale = ago(7200_000).replace('Z', '.000000Z');
  await e.kube.replace(RESOURCES.leases, LEASE_NS, `node-${w}`, {
    ...old,
    spec: { ...old!.spec, acquireTime: stale, renewTime: stale },
  });
  // NHC retries a taken lease after a minute; a change it watches (the exclude label, set to a value
  // that excludes nothing) makes it look now.
  await e.kube.mergePatch(RESOURCES.nodes, undefined, w, {
    metadata: { labels: { 'remediation.medik8s.io/exclude-from-remediation': 'false' } },
  });
  const r = await theRemediation(e, w, 'NHC to create the CR after taking the lease over');
  const lease = await readLease(e, w);
  assert.is(lease?.spec?.holderIdentity, `NodeHealthCheck-${nhcName}`);
  await waitingForFencing(e, r.metadata.name!, 'WaitingForFencing (not NodeLeaseHeld)');
});

test('a node healthy again mid-recovery: NHC deletes the CR at once; the filed evacuation runs to its end', async ({
  env,
}) => {
  const e = env!;
  const w = node('midway', 1);
  await createTemplate(e, 'midway', { fencingProof: 'ManualApproval' });
  const nhcName = await createNhc(e, 'midway', { remediationTemplate: templateRef(e, 'midway') });
  e.sim.state.latencies.evacuate = 6_000;
  try {
    e.sim.state.failHost(w);
    await setReady(e.kube, w, false);
    const r = await theRemediation(e, w);
    await approve(e, r.metadata.name!);
    const filed = await remediationWhen(
      e,
      r.metadata.name!,
      'the notification',
      (x) => !!x.status?.notificationName,
      30_000,
    );
    assert.is(cond(filed, 'Succeeded')?.status, 'Unknown');

    // Ready again while the evacuation runs (a node that was only slow, or came back after the fence).
    await setReady(e.kube, w, true);
    await eventually(
      'NHC to delete the CR and our finalizer to let it go',
      () => remediationsOf(e, w),
      (l) => l.length === 0,
      30_000,
    );
    const n = await e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, filed.status!.notificationName!);
    assert.ok(['running', 'new', 'finished'].includes(n.status?.phase ?? 'new'), n.status?.phase);
    const finished = await eventually(
      'the notification to finish in the engine',
      () => e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, filed.status!.notificationName!),
      (x) => x.status?.phase === 'finished',
      60_000,
    );
    assert.is(finished.status?.phase, 'finished');
    const vm = [...e.sim.state.servers.values()].find((s) => s.name === 'midway-vm');
    assert.is.not(vm?.host, w);
    await eventually(
      'NHC to count the node healthy',
      () => e.kube.get<NodeHealthCheck>(NHCS, undefined, nhcName),
      (x) => (x.status?.unhealthyNodes ?? []).length === 0,
      30_000,
    );
  } finally {
    e.sim.state.latencies.evacuate = 0;
    e.sim.state.recoverHost(w);
  }
});

test('minHealthy: with too few healthy nodes NHC creates no CR, so nothing reaches Masakari; one failure is remediated', async ({
  env,
}) => {
  const e = env!;
  const [q1, q2] = [node('quorum', 1), node('quorum', 2)];
  await createTemplate(e, 'quorum', { fencingProof: 'ManualApproval' });
  // both fail before NHC looks (one at a time, it would remediate the first while 2 of 3 are healthy)
  await setReady(e.kube, q1, false);
  await setReady(e.kube, q2, false);
  const nhcName = await createNhc(e, 'quorum', { remediationTemplate: templateRef(e, 'quorum') }, { minHealthy: 2 });
  await eventually(
    'NHC to skip remediation for minHealthy',
    () => nhcEvents(e, nhcName),
    (l) => l.some((ev) => ev.reason === 'RemediationSkipped' && ev.message.includes('should equal or exceed 2')),
    30_000,
  );
  await sleep(2_000);
  assert.equal(await remediationsOf(e, q1), []);
  assert.equal(await remediationsOf(e, q2), []);
  assert.equal(await notifications(e, q1), []);
  assert.equal(await notifications(e, q2), []);

  // One of them recovers: 2 of 3 healthy, NHC remediates the other.
  await setReady(e.kube, q2, true);
  const r = await theRemediation(e, q1);
  await waitingForFencing(e, r.metadata.name!);
  assert.equal(await remediationsOf(e, q2), []);
});

test.run();
