// The Medik8s remediator on the real control plane, with the engine component
// and the Nova simulator: MasakariRemediations created the way NodeHealthCheck
// creates them (generateName, node-name and template-name annotations, an
// ownerReference to the NHC), FenceAgentsRemediation played by a minimal CRD
// of the same group/version/kind. Shows the fencing gate (nothing filed or
// evacuated before FenceAgentActionSucceeded=True), the whole recovery to
// Succeeded=True, the two timeouts, the Node Maintenance lease, the manual
// approval with an absent SelfNodeRemediation CRD, and the finalizer on delete. What the real NHC does with
// the same objects is in nhc-real.test.ts (differences found: docs/medik8s.md, "Tested against the real
// NodeHealthCheck operator").
import { eventually } from '../../support/eventually.ts';

import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  componentEnv,
  createIfAbsent,
  managerWithHold,
  notificationsOf as notifications,
  openCrd,
} from '../../support/component-env.ts';
import {
  conditionOf as cond,
  getRemediation,
  remediationWhen,
  succeededRemediation,
  waitingForFencing,
} from '../../support/remediation.ts';
import type { ComponentEnv } from '../../support/component-env.ts';
import type { Component } from '../../../src/app/component.ts';
import { createComponent as createEngine } from '../../../src/engine/component.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { REMEDIATION_RESOURCES } from '../../../src/k8s/resources.ts';
import type {
  FenceAgentsRemediationLike,
  MasakariRemediation,
  MasakariRemediationSpec,
  MasakariRemediationTemplate,
} from '../../../src/model/remediation-types.ts';
import type { Notification } from '../../../src/model/types.ts';
import { createComponent as createRemediation } from '../../../src/remediation/component.ts';
import type { RemediationComponent } from '../../../src/remediation/component.ts';
import type { Manager } from '../../../src/runtime/manager.ts';
import { startComponent } from '../../../src/testing/component.ts';

// Nodes and medik8s leases are cluster-wide: names carry a per-run suffix.
const SUFFIX = randomBytes(3).toString('hex');
const node = (n: number): string => `rem-${SUFFIX}-w${n}`;

interface Env extends ComponentEnv {
  engine: Component;
  remediation: RemediationComponent;
  /** The remediator's manager; `hold.good = false` is a remediator stalled past its Lease's renew deadline. */
  manager: Manager;
  hold: { good: boolean };
}

const test = suite<{ env?: Env }>('MasakariRemediation as a NodeHealthCheck remediator', {});

// ------------------------------------------------------------------ fixtures

/**
 * What NodeHealthCheck creates from a template with the multiple-templates annotation; `spec` is the
 * template's spec.template.spec (null when the template has none).
 */
async function nhcCreates(env: Env, nodeName: string, spec: MasakariRemediationSpec | null = {}): Promise<string> {
  const created = await env.kube.create<Omit<MasakariRemediation, 'spec'> & { spec: MasakariRemediationSpec | null }>(
    REMEDIATION_RESOURCES.remediations,
    env.ns.namespace,
    {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'MasakariRemediation',
      metadata: {
        generateName: `${nodeName}-`,
        annotations: {
          'remediation.medik8s.io/node-name': nodeName,
          'remediation.medik8s.io/template-name': 'masakari-after-far',
        },
        labels: { 'app.kubernetes.io/part-of': 'node-healthcheck-controller' },
        ownerReferences: [
          {
            apiVersion: 'remediation.medik8s.io/v1alpha1',
            kind: 'NodeHealthCheck',
            name: 'workers',
            uid: randomUUID(),
          },
        ],
      },
      spec,
    },
  );
  return created.metadata.name!;
}

async function farFor(env: Env, nodeName: string, succeeded: boolean | undefined): Promise<void> {
  const ref = REMEDIATION_RESOURCES.fenceAgentsRemediations;
  let far: FenceAgentsRemediationLike;
  try {
    far = await env.kube.get(ref, env.ns.namespace, nodeName);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    far = await env.kube.create(ref, env.ns.namespace, {
      apiVersion: 'fence-agents-remediation.medik8s.io/v1alpha1',
      kind: 'FenceAgentsRemediation',
      metadata: { name: nodeName, annotations: { 'remediation.medik8s.io/node-name': nodeName } },
      spec: { agent: 'fence_ipmilan', sharedparameters: { '--action': 'off' } },
    });
  }
  if (succeeded === undefined) return;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = succeeded ? 'True' : 'False';
  await env.kube.replaceStatus(ref, env.ns.namespace, nodeName, {
    ...far,
    status: {
      conditions: [
        { type: 'Processing', status: 'False', reason: 'FenceAgentSucceeded', message: '', lastTransitionTime: now },
        {
          type: 'FenceAgentActionSucceeded',
          status,
          reason: 'FenceAgentSucceeded',
          message: '',
          lastTransitionTime: now,
        },
        { type: 'Succeeded', status, reason: 'FenceAgentSucceeded', message: '', lastTransitionTime: now },
      ],
    },
  });
}

// ------------------------------------------------------------------ set-up

test.before(async (ctx) => {
  const hosts = [1, 2, 3, 4, 5, 6].map(node);
  const simHosts = [
    ...hosts.slice(0, 4),
    `cmp-${SUFFIX}-5`,
    node(6),
    node(8),
    node(9),
    node(10),
    node(11),
    node(13),
    `spare-${SUFFIX}`,
  ];
  const env = await componentEnv({
    namespace: 'remediation',
    segment: 'workers',
    hosts: simHosts,
    servers: [
      { name: 'vm-a', host: node(1), metadata: { HA_Enabled: 'True' } },
      { name: 'vm-b', host: node(1), metadata: { HA_Enabled: 'True' } },
    ],
    // Host 6 is under maintenance in Masakari: it must not be recovered.
    onMaintenance: [node(6)],
  });
  const { kube } = env;
  // Only FAR's CRD: SelfNodeRemediation stays absent, to show a missing CRD is "no proof", not a failure.
  await createIfAbsent(
    kube,
    RESOURCES.crds,
    undefined,
    openCrd('fence-agents-remediation.medik8s.io', 'FenceAgentsRemediation', 'fenceagentsremediations'),
  );
  await createIfAbsent(kube, RESOURCES.namespaces, undefined, { metadata: { name: 'medik8s-leases' } });
  // Node 7 runs no registered host; node 8 is remediated from a template; node 9 is excluded from remediation;
  // node 10's remediator "crashes" after filing; node 12 is wrongly annotated with node 11's host; node 13's
  // remediator lets its Lease lapse.
  for (const h of [...hosts, node(7), node(8), node(9), node(10), node(11), node(12), node(13)])
    await createIfAbsent(kube, RESOURCES.nodes, undefined, { metadata: { name: h } });
  // Node 5 runs the compute host under another name: the mapping annotation.
  await kube.mergePatch(RESOURCES.nodes, undefined, node(5), {
    metadata: { annotations: { 'masakari.openkeel.io/compute-host': `cmp-${SUFFIX}-5` } },
  });
  const engine = await startComponent(env.appContext('test-engine'), createEngine);
  const { manager, hold } = managerWithHold(env, 'test-remediation');
  const remediation = await createRemediation(
    { ...env.appContext('test-remediation'), manager },
    { followIntervalMs: 300 },
  );
  await manager.start();
  ctx.env = { ...env, engine, remediation, manager, hold };
  await eventually(
    'the remediation leader',
    async () => remediation.isLeading(),
    (l) => l,
  );
});

test.after(async ({ env }) => {
  await env?.close(env.remediation, env.manager, env.engine);
});

// ------------------------------------------------------------------ tests

test('nothing is filed or evacuated before FenceAgentActionSucceeded=True; then the host is recovered', async ({
  env,
}) => {
  const e = env!;
  const w1 = node(1);
  await farFor(e, w1, undefined);
  const name = await nhcCreates(e, w1);
  assert.match(name, new RegExp(`^${w1}-`));

  const waiting = await waitingForFencing(e, name);
  assert.ok(waiting.metadata.finalizers?.includes('masakari.openkeel.io/remediation'));
  assert.equal(cond(waiting, 'Succeeded')?.status, 'Unknown');
  assert.equal(cond(waiting, 'Succeeded')?.reason, 'RemediationStarted');
  assert.equal(waiting.status?.nodeName, w1);
  assert.match(cond(waiting, 'Processing')!.message, 'has not reported FenceAgentActionSucceeded=True yet');

  // The compute node dies; FAR is still fencing. A few gate passes later: still nothing.
  e.sim.state.failHost(w1);
  await new Promise((r) => setTimeout(r, 2_500));
  assert.equal(await notifications(e, w1), []);
  assert.equal(e.sim.state.actionCalls.evacuate ?? {}, {});
  assert.equal(e.sim.state.serviceOf(w1)?.forcedDown, false);

  await farFor(e, w1, true);
  const filed = await remediationWhen(e, name, 'a notification', (r) => !!r.status?.notificationUuid);
  assert.equal(cond(filed, 'FencingVerified')?.status, 'True');
  assert.equal(cond(filed, 'FencingVerified')?.reason, 'FenceAgentActionSucceeded');
  const [n, ...more] = await notifications(e, w1);
  assert.equal(more, []);
  assert.equal(n!.metadata.name, filed.status?.notificationName);
  assert.equal(n!.spec.type, 'COMPUTE_HOST');
  assert.equal(n!.spec.payload, { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' });

  const done = await succeededRemediation(e, name);
  assert.equal(cond(done, 'Succeeded')?.reason, 'RemediationFinishedSuccessfully');
  assert.equal(cond(done, 'Processing')?.status, 'False');
  assert.ok(done.status?.finishedAt);
  assert.equal(e.sim.state.serviceOf(w1)?.forcedDown, true);
  const moved = [...e.sim.state.servers.values()].filter((s) => s.name === 'vm-a' || s.name === 'vm-b');
  assert.equal(moved.length, 2);
  for (const s of moved) assert.not.equal(s.host, w1);
  const finished = await e.kube.get<Notification>(RESOURCES.notifications, e.ns.namespace, n!.metadata.name!);
  assert.equal(finished.status?.phase, 'finished');
});

test('recoveryTimeoutSeconds passing without proof of fencing ends in Succeeded=False/RemediationTimedOut', async ({
  env,
}) => {
  const e = env!;
  const w2 = node(2);
  const name = await nhcCreates(e, w2, { recoveryTimeoutSeconds: 60 });
  const waiting = await waitingForFencing(e, name);
  // Time passes: the start is moved back beyond the timeout instead of waiting a minute.
  await e.kube.replaceStatus(REMEDIATION_RESOURCES.remediations, e.ns.namespace, name, {
    ...waiting,
    status: { ...waiting.status, startedAt: new Date(Date.now() - 120_000).toISOString().replace(/\.\d+Z$/, 'Z') },
  });
  const failed = await remediationWhen(e, name, 'Succeeded=False', (r) => cond(r, 'Succeeded')?.status === 'False');
  assert.equal(cond(failed, 'Succeeded')?.reason, 'RemediationTimedOut');
  assert.match(cond(failed, 'Succeeded')!.message, 'fencing was not proven within recoveryTimeoutSeconds=60');
  assert.equal(cond(failed, 'Processing')?.status, 'False');
  assert.equal(await notifications(e, w2), []);
});

test('the nhc-timed-out annotation stops the remediation with RemediationTimeoutByNHC', async ({ env }) => {
  const e = env!;
  const w3 = node(3);
  const name = await nhcCreates(e, w3);
  await waitingForFencing(e, name);
  await e.kube.mergePatch(REMEDIATION_RESOURCES.remediations, e.ns.namespace, name, {
    metadata: { annotations: { 'remediation.medik8s.io/nhc-timed-out': new Date().toISOString() } },
  });
  const stopped = await remediationWhen(e, name, 'Succeeded=False', (r) => cond(r, 'Succeeded')?.status === 'False');
  assert.equal(cond(stopped, 'Succeeded')?.reason, 'RemediationTimeoutByNHC');
  assert.equal(cond(stopped, 'Processing')?.status, 'False');
  assert.equal(cond(stopped, 'Processing')?.reason, 'RemediationTimeoutByNHC');
  // Fencing proof arriving later starts nothing.
  await farFor(e, w3, true);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(await notifications(e, w3), []);
});

test('a node whose medik8s lease Node Maintenance holds is left alone until the lease is gone', async ({ env }) => {
  const e = env!;
  const w4 = node(4);
  const now = new Date().toISOString().replace('Z', '000Z');
  await e.kube.create(RESOURCES.leases, 'medik8s-leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: `node-${w4}` },
    spec: { holderIdentity: 'node-maintenance', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
  });
  await farFor(e, w4, true);
  const name = await nhcCreates(e, w4);
  const held = await remediationWhen(
    e,
    name,
    'NodeLeaseHeld',
    (r) => cond(r, 'Processing')?.reason === 'NodeLeaseHeld',
  );
  assert.match(cond(held, 'Processing')!.message, 'held by node-maintenance');
  await new Promise((r) => setTimeout(r, 2_500));
  assert.equal(await notifications(e, w4), []);
  assert.equal(e.sim.state.serviceOf(w4)?.forcedDown, false);
  assert.equal(cond(await getRemediation(e, name), 'FencingVerified'), undefined);

  // Maintenance ends: the lease goes, the remediation proceeds (no instances there: finished at once),
  // through a Nova that fails the first force-down attempts (retried with backoff).
  e.sim.state.faults.push({ method: 'PUT', path: '/compute/v2.1/os-services', count: 3, kind: 503 });
  await e.kube.delete(RESOURCES.leases, 'medik8s-leases', `node-${w4}`);
  const done = await succeededRemediation(e, name);
  assert.equal(cond(done, 'FencingVerified')?.status, 'True');
  assert.equal(e.sim.state.faults, []);
  assert.equal(e.sim.state.serviceOf(w4)?.forcedDown, true);
});

test('an absent SelfNodeRemediation CRD is no proof; an annotated approval is, and is recorded', async ({ env }) => {
  const e = env!;
  const w5 = node(5);
  const host = `cmp-${SUFFIX}-5`;
  const name = await nhcCreates(e, w5, { fencingProof: 'SelfNodeRemediation' });
  const waiting = await waitingForFencing(e, name);
  assert.match(cond(waiting, 'Processing')!.message, /SelfNodeRemediation/);
  assert.equal(waiting.status?.hostName, host);

  await e.kube.mergePatch(REMEDIATION_RESOURCES.remediations, e.ns.namespace, name, {
    metadata: { annotations: { 'masakari.openkeel.io/fencing-approved-by': 'alice@ops' } },
  });
  const approved = await remediationWhen(e, name, 'a notification', (r) => !!r.status?.notificationUuid);
  assert.equal(cond(approved, 'FencingVerified')?.reason, 'ManualApproval');
  assert.match(cond(approved, 'FencingVerified')!.message, 'approved by "alice@ops"');
  assert.equal((await notifications(e, host)).length, 1);
  const events = await eventually(
    'the approval event',
    async () =>
      (
        await e.kube.list<{ reason: string; note: string; regarding: { name: string } }>(
          RESOURCES.events,
          e.ns.namespace,
        )
      ).items.filter((ev) => ev.regarding.name === name && ev.reason === 'ManualApproval'),
    (l) => l.length > 0,
  );
  assert.match(events[0]!.note, /^\[remediation\] fencing approved by "alice@ops".*accepted at /);
});

test('a fencing proof taken from the wrong Node: while two Nodes map to the host, nothing is filed', async ({
  env,
}) => {
  const e = env!;
  const [w11, w12] = [node(11), node(12)];
  await e.kube.mergePatch(RESOURCES.nodes, undefined, w12, {
    metadata: { annotations: { 'masakari.openkeel.io/compute-host': w11 } },
  });
  await farFor(e, w11, true);
  const name = await nhcCreates(e, w11, {});
  const held = await remediationWhen(
    e,
    name,
    'NodeMappingAmbiguous',
    (r) => cond(r, 'Processing')?.reason === 'NodeMappingAmbiguous',
  );
  assert.match(cond(held, 'Processing')!.message, `host ${w11} maps to more than one Node: ${w11}, ${w12}`);
  assert.equal(cond(held, 'FencingVerified'), undefined, "node 11's FAR is not taken as the host's proof");
  assert.equal(await notifications(e, w11), []);

  await e.kube.mergePatch(RESOURCES.nodes, undefined, w12, {
    metadata: { annotations: { 'masakari.openkeel.io/compute-host': null } },
  });
  const filed = await remediationWhen(e, name, 'a notification', (r) => !!r.status?.notificationUuid);
  assert.equal(cond(filed, 'FencingVerified')?.reason, 'FenceAgentActionSucceeded');
});

test('a node labelled exclude-from-remediation=true is left alone until the label goes', async ({ env }) => {
  const e = env!;
  const w9 = node(9);
  const label = 'remediation.medik8s.io/exclude-from-remediation';
  await e.kube.mergePatch(RESOURCES.nodes, undefined, w9, { metadata: { labels: { [label]: 'true' } } });
  await farFor(e, w9, true);
  const name = await nhcCreates(e, w9);
  const excluded = await remediationWhen(
    e,
    name,
    'NodeExcludedFromRemediation',
    (r) => cond(r, 'Processing')?.reason === 'NodeExcludedFromRemediation',
  );
  assert.match(cond(excluded, 'Processing')!.message, `${label}=true`);
  await new Promise((r) => setTimeout(r, 2_500));
  assert.equal(await notifications(e, w9), []);
  assert.equal(e.sim.state.serviceOf(w9)?.forcedDown, false);
  assert.equal(cond(await getRemediation(e, name), 'FencingVerified'), undefined);

  await e.kube.mergePatch(RESOURCES.nodes, undefined, w9, { metadata: { labels: { [label]: null } } });
  const done = await succeededRemediation(e, name);
  assert.equal(cond(done, 'FencingVerified')?.status, 'True');
  assert.equal(e.sim.state.serviceOf(w9)?.forcedDown, true);
  assert.equal((await notifications(e, w9)).length, 1);
});

test('a remediator whose Lease lapsed forces nothing down and records no retry; held again, it goes on', async ({
  env,
}) => {
  const e = env!;
  const w = node(13);
  await farFor(e, w, undefined);
  const name = await nhcCreates(e, w);
  await waitingForFencing(e, name);
  e.sim.state.failHost(w);
  // Stalled past its renew deadline, still in its term, when FAR's proof arrives: the forced_down PUT is
  // not sent, and the refusal is not written into Processing as a retry (the Lease holder owns it).
  e.hold.good = false;
  try {
    await farFor(e, w, true);
    await new Promise((r) => setTimeout(r, 2_500));
    assert.equal(e.sim.state.serviceOf(w)?.forcedDown, false);
    assert.equal(await notifications(e, w), []);
    const held = await getRemediation(e, name);
    assert.ok(held.status?.fencedAt, 'the proof is recorded (a Kubernetes write, not a Nova one)');
    assert.not.match(cond(held, 'Processing')!.message, 'retrying after');
  } finally {
    e.hold.good = true;
  }
  await succeededRemediation(e, name);
  assert.equal(e.sim.state.serviceOf(w)?.forcedDown, true);
  assert.equal((await notifications(e, w)).length, 1);
});

test('a remediator that crashed after filing adopts its notification instead of filing another', async ({ env }) => {
  const e = env!;
  const w10 = node(10);
  await farFor(e, w10, true);
  const name = await nhcCreates(e, w10);
  const first = await succeededRemediation(e, name);
  // The engine has put the host on maintenance. Roll the status back to the moment after fencing was proven:
  // what a leader that died between filing and recording the notification left behind.
  const { notificationName, notificationUuid, finishedAt, ...beforeFiling } = first.status!;
  assert.ok(notificationName && notificationUuid && finishedAt);
  await e.kube.replaceStatus(REMEDIATION_RESOURCES.remediations, e.ns.namespace, name, {
    ...first,
    status: {
      ...beforeFiling,
      conditions: first.status!.conditions!.map((c) =>
        c.type === 'Succeeded'
          ? { ...c, status: 'Unknown', reason: 'RemediationStarted' }
          : c.type === 'Processing'
            ? { ...c, status: 'True', reason: 'FencingVerified' }
            : c,
      ),
    },
  });
  const again = await remediationWhen(
    e,
    name,
    'Succeeded=True again',
    (r) => cond(r, 'Succeeded')?.status === 'True',
    60_000,
  );
  assert.equal(again.status?.notificationUuid, notificationUuid);
  assert.equal(again.status?.notificationName, notificationName);
  assert.equal((await notifications(e, w10)).length, 1);
  const adopted = await eventually(
    'the NotificationAdopted event',
    async () =>
      (await e.kube.list<{ reason: string; regarding: { name: string } }>(RESOURCES.events, e.ns.namespace)).items,
    (l) => l.some((ev) => ev.regarding.name === name && ev.reason === 'NotificationAdopted'),
  );
  assert.ok(adopted.length > 0);
});

test('a host on maintenance or not registered fails at once, with nothing forced down', async ({ env }) => {
  const e = env!;
  await farFor(e, node(6), true);
  const onMaintenance = await nhcCreates(e, node(6));
  const unknown = await nhcCreates(e, node(7));
  const m = await remediationWhen(e, onMaintenance, 'Succeeded=False', (r) => cond(r, 'Succeeded')?.status === 'False');
  assert.equal(cond(m, 'Succeeded')?.reason, 'HostOnMaintenance');
  assert.equal(
    cond(m, 'Succeeded')?.message,
    `Notification received from host ${node(6)} of type 'COMPUTE_HOST' is ignored as the host is already under maintenance.`,
  );
  assert.equal(e.sim.state.serviceOf(node(6))?.forcedDown, false);
  const u = await remediationWhen(e, unknown, 'Succeeded=False', (r) => cond(r, 'Succeeded')?.status === 'False');
  assert.equal(cond(u, 'Succeeded')?.reason, 'HostNotFound');
  assert.match(cond(u, 'Succeeded')!.message, `Host with name ${node(7)} could not be found`);
});

test("a template's spec.template.spec survives the API server and is what NodeHealthCheck copies", async ({ env }) => {
  const e = env!;
  const templateSpec: MasakariRemediationSpec = {
    fencingProof: 'ManualApproval',
    recoveryTimeoutSeconds: 900,
    forceDownComputeService: false,
    segmentNamespace: e.ns.namespace,
  };
  const template = (name: string, spec: MasakariRemediationTemplate['spec']) =>
    e.kube.create<MasakariRemediationTemplate>(REMEDIATION_RESOURCES.templates, e.ns.namespace, {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'MasakariRemediationTemplate',
      metadata: { name, annotations: { 'remediation.medik8s.io/multiple-templates-support': 'true' } },
      spec,
    });
  await template('masakari-manual', { template: { spec: templateSpec } });
  // FAR's README form, spec.template without a spec: NHC accepts it, so must the CRD.
  await template('masakari-defaults', { template: {} });
  const stored = await e.kube.get<MasakariRemediationTemplate>(
    REMEDIATION_RESOURCES.templates,
    e.ns.namespace,
    'masakari-manual',
  );
  assert.equal(stored.spec.template.spec, templateSpec);

  // NHC: the remediation's spec is a deep copy of the template's spec.template.spec.
  const name = await nhcCreates(e, node(8), { ...stored.spec.template.spec });
  const waiting = await waitingForFencing(e, name);
  assert.equal(waiting.spec, templateSpec);
  assert.match(cond(waiting, 'Processing')!.message, 'fencingProof is ManualApproval');

  // From the template without spec.template.spec NHC copies a null spec: accepted, and the defaults apply.
  const fromDefaults = await nhcCreates(e, node(8), null);
  const defaulted = await waitingForFencing(e, fromDefaults);
  assert.match(cond(defaulted, 'Processing')!.message, 'no FenceAgentsRemediation exists for node');
});

test('deleting a remediation (as NHC does once the node is healthy) removes the finalizer and the object', async ({
  env,
}) => {
  const e = env!;
  const list = await e.kube.list<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, e.ns.namespace);
  assert.ok(list.items.length >= 10);
  for (const r of list.items) {
    assert.ok(r.metadata.finalizers?.includes('masakari.openkeel.io/remediation'));
    await e.kube.delete(REMEDIATION_RESOURCES.remediations, e.ns.namespace, r.metadata.name!);
  }
  await eventually(
    'every remediation gone',
    async () =>
      (await e.kube.list<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, e.ns.namespace)).items.length,
    (n) => n === 0,
  );
});

test.run();
