// Least privilege: the chart's and the kustomize config's RBAC grant each
// ServiceAccount exactly REQUIRED_PERMISSIONS (rbac-model.ts), no wildcard,
// no built-in role; then the chart's RBAC is applied for real and the RBAC
// authorizer of the real API server answers `kubectl auth can-i`.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { REMEDIATION_RESOURCES } from '../../../src/k8s/resources.ts';
import { runKubectl, useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { effectiveGrants, minus, REQUIRED_PERMISSIONS, requiredGrants, wildcardRules } from './rbac-model.ts';
import type { RbacLayout } from './rbac-model.ts';
import { byKind, find, renderChart, renderKustomize, ROOT, toYaml } from './tools.ts';
import type { Manifest } from './tools.ts';
import { envValue, podSpec } from './workloads.ts';

const LEASE_NAMESPACE = 'medik8s-leases';
const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
const BUILT_IN_ROLES = new Set(['cluster-admin', 'admin', 'edit', 'view']);
const NHC_LABEL = 'rbac.ext-remediation/aggregate-to-ext-remediation';

const test = suite<{ ns: TestNamespace; leases: TestNamespace }>('rbac', {
  ns: undefined as unknown as TestNamespace,
  leases: undefined as unknown as TestNamespace,
});
test.before(async (ctx) => {
  ctx.ns = await useNamespace('pkg-rbac');
  ctx.leases = await useNamespace('pkg-rbac-leases');
});
test.after(async ({ ns, leases }) => {
  await ns.cleanup();
  await leases.cleanup();
});

function assertExactly(manifests: Manifest[], layout: RbacLayout, what: string): void {
  const granted = effectiveGrants(manifests, layout);
  const required = requiredGrants(layout);
  assert.equal(minus(required, granted), [], `${what}: needed but not granted`);
  assert.equal(minus(granted, required), [], `${what}: granted but not needed`);
}

const chartLayout = (
  release: string,
  namespace: string,
  crNamespace = namespace,
  leaseNamespace = LEASE_NAMESPACE,
) => ({
  serviceAccounts: { api: `${release}-masakari-operator-api`, controller: `${release}-masakari-operator-controller` },
  saNamespace: namespace,
  namespaces: { crNamespace, keyNamespace: namespace, leaseNamespace },
});
const KUSTOMIZE_LAYOUT: RbacLayout = {
  serviceAccounts: { api: 'masakari-operator-api', controller: 'masakari-operator-controller' },
  saNamespace: 'masakari',
  namespaces: { crNamespace: 'masakari', keyNamespace: 'masakari', leaseNamespace: LEASE_NAMESPACE },
};

/**
 * As rendered for a cluster where NodeHealthCheck runs: `helm template` cannot look the lease namespace
 * up, so readMedik8sLeases true stands for auto finding it (the lease Role test below covers auto).
 */
async function chart(release: string, namespace: string, values: object[] = []): Promise<Manifest[]> {
  const r = await renderChart(release, namespace, [{ remediation: { readMedik8sLeases: true } }, ...values]);
  assert.is(r.code, 0, r.stderr);
  return r.manifests;
}

test('REQUIRED_PERMISSIONS covers every resource src/ calls the API for', () => {
  // every RESOURCES.<key> and REMEDIATION_RESOURCES.<key> named outside tests
  // (the test control plane is in tools/, not src/)
  const used = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'testing') walk(path);
      } else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/\b((?:REMEDIATION_)?RESOURCES)\.(\w+)/g))
          used.add(`${m[1]}.${m[2]} (${relative(ROOT, path)})`);
      }
    }
  };
  walk(join(ROOT, 'src'));
  assert.ok(used.size > 0, 'src/ names RESOURCES.*');
  for (const entry of used) {
    const [table, key] = entry.split(' ')[0]!.split('.') as [string, string];
    const refs: Record<string, { group: string; plural: string }> =
      table === 'RESOURCES' ? RESOURCES : REMEDIATION_RESOURCES;
    const ref = refs[key];
    assert.ok(ref, `${table}.${key} is defined`);
    assert.ok(
      REQUIRED_PERMISSIONS.some((p) => p.apiGroup === ref.group && p.resource === ref.plural),
      `${entry}: ${ref.group || 'core'}/${ref.plural} has no row in REQUIRED_PERMISSIONS`,
    );
  }
});

test('chart, default values: each ServiceAccount gets exactly REQUIRED_PERMISSIONS', async ({ ns }) => {
  assertExactly(await chart('mo', ns.namespace), chartLayout('mo', ns.namespace), 'chart');
});

test('chart, objects in another namespace and a custom lease namespace: still exactly', async ({ ns }) => {
  const m = await chart('mo', ns.namespace, [
    { crNamespace: 'openstack-ha', remediation: { leaseNamespace: 'leases' } },
  ]);
  assertExactly(m, chartLayout('mo', ns.namespace, 'openstack-ha', 'leases'), 'chart (crNamespace)');
  assert.is(find(m, 'Role', 'mo-masakari-operator').metadata.namespace, 'openstack-ha');
  // the admission key stays with the operator, out of reach of who may edit the objects' namespace
  assert.is(find(m, 'Role', 'mo-masakari-operator-admission-key').metadata.namespace, ns.namespace);
});

test('kustomize config/default: each ServiceAccount gets exactly REQUIRED_PERMISSIONS', async () => {
  const r = await renderKustomize();
  assert.is(r.code, 0, r.stderr);
  assertExactly(r.manifests, KUSTOMIZE_LAYOUT, 'kustomize');
});

test('no wildcard apiGroups, resources or verbs in any Role or ClusterRole; no built-in role bound', async ({ ns }) => {
  const renders = [
    await chart('mo', ns.namespace, [{ webhook: { enabled: true, certSecret: 'tls', caBundle: 'Zm9v' } }]),
    (await renderKustomize({ webhook: true })).manifests,
  ];
  for (const m of renders) {
    assert.ok(m.some((x) => x.kind === 'ClusterRole'));
    assert.equal(wildcardRules(m), []);
    for (const b of m.filter((x) => x.kind === 'RoleBinding' || x.kind === 'ClusterRoleBinding')) {
      const ref = b.roleRef as { name: string };
      assert.not.ok(BUILT_IN_ROLES.has(ref.name), `${b.kind} ${b.metadata.name} binds ${ref.name}`);
    }
  }
});

test('the only ClusterRole bound to the operator reads nodes, the Medik8s fencing proofs and the safety-overrides binding', async ({
  ns,
}) => {
  const m = await chart('mo', ns.namespace);
  const bindings = m.filter((x) => x.kind === 'ClusterRoleBinding');
  assert.equal(
    bindings.map((b) => (b.roleRef as { name: string }).name),
    [`${ns.namespace}-mo-masakari-operator-controller`],
  );
  assert.equal(find(m, 'ClusterRole', `${ns.namespace}-mo-masakari-operator-controller`).rules, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['fence-agents-remediation.medik8s.io'], resources: ['fenceagentsremediations'], verbs: ['list'] },
    { apiGroups: ['self-node-remediation.medik8s.io'], resources: ['selfnoderemediations'], verbs: ['list'] },
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingadmissionpolicybindings'],
      verbs: ['get'],
    },
  ]);
});

test('the aggregated ClusterRole for NodeHealthCheck is labelled and grants exactly the remediation kinds', async ({
  ns,
}) => {
  const expected = [
    {
      apiGroups: ['masakari.openkeel.io'],
      resources: ['masakariremediationtemplates'],
      verbs: ['get', 'list', 'watch'],
    },
    {
      apiGroups: ['masakari.openkeel.io'],
      resources: ['masakariremediations'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
  ];
  const fromChart = find(await chart('mo', ns.namespace), 'ClusterRole', `${ns.namespace}-mo-masakari-operator-nhc`);
  const fromKustomize = find((await renderKustomize()).manifests, 'ClusterRole', 'masakari-operator-nhc');
  for (const role of [fromChart, fromKustomize]) {
    assert.is(role.metadata.labels?.[NHC_LABEL], 'true', role.metadata.name);
    assert.equal(role.rules, expected, role.metadata.name);
  }
});

test('who may override safety: the approver ClusterRole (not aggregated) and the safety-overrides policy, alike in the chart and config/default', async ({
  ns,
}) => {
  const fromChart = await chart('mo', ns.namespace);
  const fromKustomize = (await renderKustomize()).manifests;
  const approvers = [
    find(fromChart, 'ClusterRole', `${ns.namespace}-mo-masakari-operator-approver`),
    find(fromKustomize, 'ClusterRole', 'masakari-operator-approver'),
  ];
  for (const r of approvers) {
    const labels = Object.keys(r.metadata.labels ?? {});
    assert.equal(
      labels.filter((l) => l.includes('aggregate')),
      [],
      `${r.metadata.name} must not be aggregated into edit or admin`,
    );
    assert.equal(r.rules, [
      {
        apiGroups: ['masakari.openkeel.io'],
        resources: ['notifications/approval', 'masakariremediations/approval'],
        verbs: ['approve'],
      },
      {
        apiGroups: ['masakari.openkeel.io'],
        resources: ['notifications', 'masakariremediations'],
        verbs: ['get', 'list', 'watch', 'patch'],
      },
    ]);
  }
  // Nothing the editor (aggregated into edit and admin) or the viewer grants is an approval.
  for (const m of [fromChart, fromKustomize]) {
    for (const r of m.filter((x) => x.kind === 'ClusterRole' && /-(editor|viewer|nhc)$/.test(x.metadata.name))) {
      for (const rule of (r.rules as { resources?: string[]; verbs?: string[] }[] | undefined) ?? []) {
        assert.not.ok(rule.verbs?.includes('approve'), `${r.metadata.name} grants approve`);
        assert.not.ok(
          rule.resources?.some((x) => x.endsWith('/approval')),
          `${r.metadata.name} names an approval subresource`,
        );
      }
    }
  }
  const policies = [
    find(fromChart, 'ValidatingAdmissionPolicy', `${ns.namespace}-mo-masakari-operator-safety-overrides`),
    find(fromKustomize, 'ValidatingAdmissionPolicy', 'masakari-operator-safety-overrides'),
  ];
  const bindings = [
    find(fromChart, 'ValidatingAdmissionPolicyBinding', `${ns.namespace}-mo-masakari-operator-safety-overrides`),
    find(fromKustomize, 'ValidatingAdmissionPolicyBinding', 'masakari-operator-safety-overrides'),
  ];
  const withoutRoleName = (spec: unknown) =>
    JSON.stringify(spec).replace(/([a-z0-9-]+-mo-)?masakari-operator-approver/g, 'ROLE');
  assert.equal(
    JSON.parse(withoutRoleName(policies[0]!.spec)),
    JSON.parse(withoutRoleName(policies[1]!.spec)),
    'one policy, two packagings',
  );
  for (const [i, b] of bindings.entries()) {
    assert.is(b.metadata.namespace, undefined, 'cluster-scoped');
    assert.equal(b.spec, { policyName: policies[i]!.metadata.name, validationActions: ['Deny'] });
  }
  // [operator] safety_overrides_policy names the binding that exists: a name the packaging renamed (the chart's
  // <namespace>-<fullname>- prefix, kustomize's namePrefix) but the setting did not leaves every override unhonoured.
  for (const [i, m] of [fromChart, fromKustomize].entries()) {
    const named = byKind(m, 'Deployment')
      .flatMap((d) =>
        podSpec(d).containers.map((c) => [d.metadata.name, envValue(c, 'MASAKARI_SAFETY_OVERRIDES_POLICY')]),
      )
      .filter(([, v]) => v !== undefined);
    assert.ok(named.length > 0, 'some Deployment sets MASAKARI_SAFETY_OVERRIDES_POLICY');
    for (const [deployment, value] of named) assert.is(value, bindings[i]!.metadata.name, deployment);
  }
  const off = await chart('mo', ns.namespace, [{ rbac: { safetyOverridesPolicy: false } }]);
  assert.equal(byKind(off, 'ValidatingAdmissionPolicy'), []);
});

test('RBAC applied for real: kubectl auth can-i allows what the code needs and denies the rest', async ({
  ns,
  leases,
}) => {
  // A release name of its own: ClusterRoles are cluster-wide and outlive the namespace.
  const release = `mo-${ns.namespace.split('-').pop()}`;
  const m = (
    await chart(release, ns.namespace, [
      { remediation: { leaseNamespace: leases.namespace, nhcAggregatedRole: false }, rbac: { userRoles: false } },
    ])
  ).filter((x) => RBAC_KINDS.has(x.kind));
  const apply = await runKubectl(
    ns.kubeconfigPath,
    ['apply', '--server-side', '--field-manager=packaging-test', '-f', '-'],
    toYaml(m),
  );
  assert.is(apply.code, 0, apply.stderr);
  try {
    const sa = (name: string) => `--as=system:serviceaccount:${ns.namespace}:${release}-masakari-operator-${name}`;
    const canI = async (who: string, args: string[], namespace = ns.namespace) => {
      const r = await runKubectl(ns.kubeconfigPath, ['auth', 'can-i', sa(who), `--namespace=${namespace}`, ...args]);
      const answer = r.stdout.trim();
      if (answer !== 'yes' && answer !== 'no') throw new Error(`kubectl auth can-i ${args.join(' ')}: ${r.stderr}`);
      return answer === 'yes';
    };
    const G = 'masakari.openkeel.io';
    const allowed: [string, string[], string?][] = [
      ['api', ['create', `failoversegments.${G}`]],
      ['api', ['delete', `hahosts.${G}`]],
      ['api', ['patch', `notifications.${G}`, '--subresource=status']],
      ['api', ['update', 'configmaps']],
      ['api', ['create', 'leases.coordination.k8s.io']],
      ['controller', ['update', `notifications.${G}`, '--subresource=status']],
      ['controller', ['watch', `hahosts.${G}`]],
      ['controller', ['create', 'events.events.k8s.io']],
      ['controller', ['patch', `masakariremediations.${G}`]],
      ['controller', ['update', `masakariremediations.${G}`, '--subresource=status']],
      ['controller', ['list', 'nodes']],
      ['controller', ['watch', 'nodes']],
      ['controller', ['get', 'leases.coordination.k8s.io'], leases.namespace],
      ['api', ['get', 'secrets/masakari-admission-seal']],
      ['controller', ['get', 'secrets/masakari-admission-seal']],
      ['api', ['create', 'secrets']],
      // the BMC credentials of HaHost spec.fencing, in the objects' namespace (the engine)
      ['controller', ['get', 'secrets/bmc-compute-1']],
    ];
    const denied: [string, string[], string?][] = [
      ['api', ['list', 'nodes']],
      ['api', ['get', 'secrets']],
      ['api', ['get', 'secrets/some-other-secret']],
      ['api', ['list', 'secrets']],
      ['api', ['patch', `masakariremediations.${G}`]],
      ['api', ['get', `failoversegments.${G}`], 'default'],
      ['controller', ['list', 'secrets']],
      ['controller', ['watch', 'secrets']],
      ['controller', ['get', 'secrets'], 'default'],
      ['controller', ['list', 'pods']],
      ['controller', ['delete', 'nodes']],
      ['controller', ['patch', 'nodes']],
      ['controller', ['create', `masakariremediations.${G}`]],
      ['controller', ['delete', `masakariremediations.${G}`]],
      ['controller', ['create', 'leases.coordination.k8s.io'], leases.namespace],
      ['controller', ['update', 'leases.coordination.k8s.io'], leases.namespace],
      ['controller', ['list', 'leases.coordination.k8s.io'], 'default'],
      ['controller', ['escalate', 'roles.rbac.authorization.k8s.io']],
      ['controller', ['*', '*']],
      // the operator never overrides safety itself (docs/operations.md "Who may override safety")
      ['controller', ['approve', `notifications.${G}`, '--subresource=approval']],
      ['controller', ['approve', `masakariremediations.${G}`, '--subresource=approval']],
      ['api', ['approve', `notifications.${G}`, '--subresource=approval']],
    ];
    // kubectl auth can-i cannot name a resource the server does not serve (the
    // FenceAgentsRemediation CRD is not installed here): ask with a SubjectAccessReview
    const review = async (who: string, group: string, resource: string, verb: string) => {
      const user = sa(who).slice('--as='.length);
      const body = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${ns.namespace}`, 'system:authenticated'],
          resourceAttributes: { group, resource, verb },
        },
      };
      const r = await runKubectl(
        ns.kubeconfigPath,
        ['create', '-f', '-', '-o', 'jsonpath={.status.allowed}'],
        JSON.stringify(body),
      );
      assert.is(r.code, 0, r.stderr);
      return r.stdout.trim() === 'true';
    };
    const FAR = 'fence-agents-remediation.medik8s.io';
    const SNR = 'self-node-remediation.medik8s.io';
    const reviews: [string, string, string, string, boolean][] = [
      ['controller', FAR, 'fenceagentsremediations', 'list', true],
      ['controller', SNR, 'selfnoderemediations', 'list', true],
      ['controller', FAR, 'fenceagentsremediations', 'update', false],
      ['controller', SNR, 'selfnoderemediations', 'delete', false],
      ['api', FAR, 'fenceagentsremediations', 'list', false],
    ];
    for (const [who, group, resource, verb, expected] of reviews) {
      assert.is(await review(who, group, resource, verb), expected, `${who} ${verb} ${resource}.${group}`);
    }
    for (const [who, args, namespace] of allowed) {
      assert.ok(await canI(who, args, namespace), `${who} may ${args.join(' ')} in ${namespace ?? ns.namespace}`);
    }
    for (const [who, args, namespace] of denied) {
      assert.not.ok(
        await canI(who, args, namespace),
        `${who} must not ${args.join(' ')} in ${namespace ?? ns.namespace}`,
      );
    }
  } finally {
    await runKubectl(ns.kubeconfigPath, [
      'delete',
      'clusterrole,clusterrolebinding',
      '-l',
      `app.kubernetes.io/instance=${release}`,
      '--ignore-not-found',
    ]);
  }
});

test('the Medik8s lease Role: only where its namespace is known to exist or is created, so a cluster without NHC installs', async ({
  ns,
}) => {
  const leaseObjects = (m: Manifest[]) =>
    m
      .filter((o) => o.metadata.namespace === LEASE_NAMESPACE || o.metadata.name === LEASE_NAMESPACE)
      .map((o) => `${o.kind}/${o.metadata.name}`);
  // auto (the default): `helm template` cannot look the namespace up, so nothing is made there
  const auto = await renderChart('mo', ns.namespace);
  assert.is(auto.code, 0, auto.stderr);
  assert.equal(leaseObjects(auto.manifests), []);
  // true: the Role and its binding, the namespace left to NHC
  assert.equal(leaseObjects(await chart('mo', ns.namespace)), [
    'Role/mo-masakari-operator-medik8s-leases',
    'RoleBinding/mo-masakari-operator-medik8s-leases',
  ]);
  // createLeaseNamespace: the namespace too, kept on uninstall (NHC uses it)
  const created = await renderChart('mo', ns.namespace, [{ remediation: { createLeaseNamespace: true } }]);
  assert.is(created.code, 0, created.stderr);
  assert.equal(leaseObjects(created.manifests), [
    `Namespace/${LEASE_NAMESPACE}`,
    'Role/mo-masakari-operator-medik8s-leases',
    'RoleBinding/mo-masakari-operator-medik8s-leases',
  ]);
  assert.is(
    find(created.manifests, 'Namespace', LEASE_NAMESPACE).metadata.annotations?.['helm.sh/resource-policy'],
    'keep',
  );
  // false: never
  const off = await renderChart('mo', ns.namespace, [
    { remediation: { readMedik8sLeases: false, createLeaseNamespace: true } },
  ]);
  assert.is(off.code, 0, off.stderr);
  assert.equal(leaseObjects(off.manifests), []);
});

test('two releases of one name in two namespaces share no cluster-scoped object name', async ({ ns, leases }) => {
  const values = [{ webhook: { enabled: true } }];
  const clusterNames = async (namespace: string) =>
    (await chart('mo', namespace, values))
      .filter((o) => !o.metadata.namespace && o.kind !== 'CustomResourceDefinition')
      .map((o) => `${o.kind}/${o.metadata.name}`);
  const first = await clusterNames(ns.namespace);
  const second = await clusterNames(leases.namespace);
  assert.ok(
    first.some((n) => n.startsWith('ClusterRole/')) &&
      first.some((n) => n.startsWith('ValidatingWebhookConfiguration/')),
    first.join(', '),
  );
  assert.ok(
    first.some((n) => n.startsWith('ValidatingAdmissionPolicy/')),
    first.join(', '),
  );
  assert.equal(
    first.filter((n) => second.includes(n)),
    [],
  );
  for (const n of first) assert.ok(n.split('/')[1]!.startsWith(`${ns.namespace}-mo-masakari-operator`), n);
});

test.run();
