// Who may override safety: the ValidatingAdmissionPolicy safety-overrides
// (config/policy/safety_overrides.yaml, installed by the test control plane
// with the CRDs) and the approver ClusterRole (config/rbac), on the real
// kube-apiserver with RBAC. Users are impersonated with kubectl --as; the
// roles under test are bound directly (there is no kube-controller-manager,
// so the built-in edit is not aggregated here: the editor role is bound
// beside it, as aggregation would grant it).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ApprovalGuard } from '../../../src/fencing/approval-guard.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import { useNamespace } from '../../support/cluster.ts';
import type { KubectlResult, TestNamespace } from '../../support/cluster.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const FENCING = 'masakari.openkeel.io/fencing-approved-by';
const RELEASE = 'masakari.openkeel.io/recovery-released-by';
// ClusterRoles are cluster-wide: names carry a per-run suffix.
const SUFFIX = randomBytes(3).toString('hex');
const role = (name: string) => `masakari-${name}-${SUFFIX}`;
const EDITOR = `editor-${SUFFIX}`;
const APPROVER = `approver-${SUFFIX}`;
const NHC = `nhc-${SUFFIX}`;

const test = suite<{ ns: TestNamespace }>('who may override safety', { ns: undefined as unknown as TestNamespace });

/** A shipped ClusterRole (config/rbac/<file>) under a per-run name, without aggregation labels. */
function shippedRole(file: string, name: string): object {
  const doc = load(readFileSync(join(ROOT, 'config', 'rbac', file), 'utf8')) as {
    metadata: { name: string; labels?: Record<string, string> };
  };
  return { ...doc, metadata: { name } };
}

const binding = (ns: string, clusterRole: string, user: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: `${clusterRole}-${user}`, namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
});

const notification = (name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'Notification',
  metadata: { name, annotations },
  spec: {
    type: 'COMPUTE_HOST',
    hostname: 'compute-1',
    generatedTime: '2026-11-29T10:00:00Z',
    payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
  },
});

const remediation = (name: string) => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'MasakariRemediation',
  metadata: { name, annotations: { 'remediation.medik8s.io/node-name': 'worker-1' } },
  spec: {},
});

async function apply(ns: TestNamespace, docs: object[]): Promise<void> {
  const r = await ns.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }));
  assert.is(r.code, 0, r.stderr);
}

const as = (ns: TestNamespace, user: string, args: string[], stdin?: string): Promise<KubectlResult> =>
  ns.kubectl([`--as=${user}`, ...args], stdin);

function refused(r: KubectlResult, user: string, key: string, resource = 'notifications'): void {
  assert.is.not(r.code, 0, `${user} was allowed: ${r.stdout}`);
  assert.match(r.stderr, 'denied request');
  assert.match(r.stderr, `only an approver may set, change or remove ${key} on ${resource}: ${user} may not approve`);
}

test.before(async (ctx) => {
  ctx.ns = await useNamespace('rbac-overrides');
  const ns = ctx.ns.namespace;
  await apply(ctx.ns, [
    shippedRole('masakari_editor_role.yaml', role('editor')),
    shippedRole('masakari_approver_role.yaml', role('approver')),
    shippedRole('nhc_aggregated_clusterrole.yaml', role('nhc')),
    binding(ns, 'edit', EDITOR),
    binding(ns, role('editor'), EDITOR),
    binding(ns, 'edit', APPROVER),
    binding(ns, role('editor'), APPROVER),
    binding(ns, role('approver'), APPROVER),
    binding(ns, role('nhc'), NHC),
  ]);
});

test.after(async ({ ns }) => {
  await ns.kubectl(['delete', 'clusterrole', role('editor'), role('approver'), role('nhc'), '--ignore-not-found']);
  await ns.cleanup();
});

test('the policy is installed and bound, and the operator honours approvals only while its binding is there', async ({
  ns,
}) => {
  const r = await ns.kubectl(['get', 'validatingadmissionpolicybinding', 'safety-overrides', '-o', 'name']);
  assert.is(r.code, 0, r.stderr);
  const kube = createKubeClient(ns.kc);
  const log = pino({ level: 'silent' });
  assert.is(await new ApprovalGuard({ kube, bindingName: 'safety-overrides', log }).unguardedReason(), undefined);
  const missing = await new ApprovalGuard({ kube, bindingName: `gone-${SUFFIX}`, log }).unguardedReason();
  assert.match(missing ?? '', `ValidatingAdmissionPolicyBinding gone-${SUFFIX} does not exist`);
});

test('an editor edits Notifications as before: create, annotate, delete', async ({ ns }) => {
  const created = await as(ns, EDITOR, ['create', '-f', '-'], JSON.stringify(notification('plain')));
  assert.is(created.code, 0, created.stderr);
  const annotated = await as(ns, EDITOR, ['annotate', 'notification', 'plain', 'team=ops']);
  assert.is(annotated.code, 0, annotated.stderr);
  const deleted = await as(ns, EDITOR, ['delete', 'notification', 'plain']);
  assert.is(deleted.code, 0, deleted.stderr);
});

test('a user with only edit and the editor role cannot set fencing-approved-by nor recovery-released-by: the API server refuses', async ({
  ns,
}) => {
  await apply(ns, [notification('held')]);
  for (const key of [FENCING, RELEASE]) {
    refused(await as(ns, EDITOR, ['annotate', 'notification', 'held', `${key}=mallory`]), EDITOR, key);
  }
  // nor by creating a Notification that carries one
  const withApproval = notification('pre-approved', { [FENCING]: 'mallory' });
  refused(await as(ns, EDITOR, ['create', '-f', '-'], JSON.stringify(withApproval)), EDITOR, FENCING);
  const stored = await ns.kubectl(['get', 'notification', 'held', '-o', 'jsonpath={.metadata.annotations}']);
  assert.not.match(stored.stdout, 'approved-by');
  assert.not.match(stored.stdout, 'released-by');
});

test('the approver can set both; an editor can then neither change nor remove them, but may edit the rest', async ({
  ns,
}) => {
  await apply(ns, [notification('approved')]);
  for (const key of [FENCING, RELEASE]) {
    const r = await as(ns, APPROVER, ['annotate', 'notification', 'approved', `${key}=alice@ops`]);
    assert.is(r.code, 0, r.stderr);
  }
  refused(
    await as(ns, EDITOR, ['annotate', '--overwrite', 'notification', 'approved', `${FENCING}=mallory`]),
    EDITOR,
    FENCING,
  );
  refused(await as(ns, EDITOR, ['annotate', 'notification', 'approved', `${RELEASE}-`]), EDITOR, RELEASE);
  const other = await as(ns, EDITOR, ['annotate', 'notification', 'approved', 'team=ops']);
  assert.is(other.code, 0, `an unrelated annotation is not an override: ${other.stderr}`);
  const removed = await as(ns, APPROVER, ['annotate', 'notification', 'approved', `${FENCING}-`]);
  assert.is(removed.code, 0, removed.stderr);
});

test('on a MasakariRemediation, patch rights (NodeHealthCheck role) do not include approval; the approver has it', async ({
  ns,
}) => {
  await apply(ns, [remediation('worker-1-abcde')]);
  refused(
    await as(ns, NHC, ['annotate', 'masakariremediation', 'worker-1-abcde', `${FENCING}=nhc`]),
    NHC,
    FENCING,
    'masakariremediations',
  );
  const r = await as(ns, APPROVER, ['annotate', 'masakariremediation', 'worker-1-abcde', `${FENCING}=alice@ops`]);
  assert.is(r.code, 0, r.stderr);
});

test.run();
