// The kustomize config (kubebuilder layout): `kubectl kustomize config/default`
// renders, its objects are what the operator needs, and the render (moved into
// the test namespace) passes a server-side dry-run apply, with and without the
// webhook component.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { byKind, dryRunApply, ensureNamespace, find, isNamespaced, moveNamespace, renderKustomize } from './tools.ts';
import { assertProbes, assertRestricted, container, envValue, loadRenderedConfig, podSpec } from './workloads.ts';

const NAMESPACE = 'masakari';
const PREFIX = 'masakari-operator-';
const LEASE_NAMESPACE = 'medik8s-leases';

const test = suite<{ ns: TestNamespace }>('kustomize', { ns: undefined as unknown as TestNamespace });
test.before(async (ctx) => {
  ctx.ns = await useNamespace('pkg-kustomize');
  await ensureNamespace(ctx.ns, LEASE_NAMESPACE);
});
test.after(async ({ ns }) => ns.cleanup());

async function render(webhook = false) {
  const r = await renderKustomize({ webhook });
  assert.is(r.code, 0, r.stderr);
  return r.manifests;
}

test('config/default renders: namespace masakari, prefix masakari-operator-, every CRD', async () => {
  const m = await render();
  find(m, 'Namespace', NAMESPACE);
  for (const o of m.filter(isNamespaced)) {
    const expected = o.metadata.name === `${PREFIX}medik8s-leases` ? LEASE_NAMESPACE : NAMESPACE;
    assert.is(o.metadata.namespace, expected, `${o.kind}/${o.metadata.name}`);
  }
  for (const o of m.filter((x) => x.kind !== 'Namespace' && x.kind !== 'CustomResourceDefinition')) {
    assert.ok(o.metadata.name.startsWith(PREFIX), `${o.kind}/${o.metadata.name} has the prefix`);
  }
  assert.equal(
    byKind(m, 'CustomResourceDefinition')
      .map((c) => c.metadata.name)
      .sort(),
    [
      'failoversegments.masakari.openkeel.io',
      'hahosts.masakari.openkeel.io',
      'masakariremediations.masakari.openkeel.io',
      'masakariremediationtemplates.masakari.openkeel.io',
      'notifications.masakari.openkeel.io',
    ],
  );
  assert.equal(byKind(m, 'ValidatingWebhookConfiguration'), [], 'the webhook is off by default');
});

test('config/default: the api and the engine + remediation Deployments, restricted, with probes', async () => {
  const m = await render();
  const api = find(m, 'Deployment', `${PREFIX}api`);
  const engine = find(m, 'Deployment', `${PREFIX}engine`);
  assert.is(envValue(container(api), 'MASAKARI_COMPONENTS'), 'api');
  assert.is(envValue(container(engine), 'MASAKARI_COMPONENTS'), 'engine,remediation,detection');
  assert.is(podSpec(api).serviceAccountName, `${PREFIX}api`);
  assert.is(podSpec(engine).serviceAccountName, `${PREFIX}controller`);
  for (const d of [api, engine]) {
    assert.is((d.spec as { replicas: number }).replicas, 2);
    assertRestricted(d);
    assertProbes(d);
    // the generated ConfigMap's hashed name reaches the volume
    const volume = podSpec(d).volumes?.find((v) => v.name === 'config');
    assert.match(volume?.configMap?.name ?? '', new RegExp(`^${PREFIX}config-`));
    // OpenStack credentials are optional Secrets the operator's namespace may hold
    assert.equal(container(d).envFrom, [{ secretRef: { name: 'masakari-openstack', optional: true } }]);
    const loaded = loadRenderedConfig(d, m);
    assert.is(loaded.config.operator.namespace, NAMESPACE);
  }
  const svc = find(m, 'Service', `${PREFIX}masakari-api`).spec as { ports: { name: string; port: number }[] };
  assert.equal(
    svc.ports.map((p) => [p.name, p.port]),
    [['http', 15868]],
  );
  find(m, 'PodDisruptionBudget', `${PREFIX}api`);
});

test('config/default: NODE_OPTIONS sizes the V8 heap for the memory limit, as the chart does', async () => {
  const m = await render();
  for (const name of ['api', 'engine']) {
    const c = container(find(m, 'Deployment', `${PREFIX}${name}`));
    const limit = c.resources?.limits?.memory;
    assert.is(limit, '512Mi', name);
    // the chart's rule: the limit less 128 MiB, at least half of it
    assert.is(envValue(c, 'NODE_OPTIONS'), '--max-semi-space-size=8 --max-old-space-size=384', name);
  }
});

test('config/default applies with a server-side dry run (moved into the test namespace)', async ({ ns }) => {
  const m = moveNamespace(await render(), NAMESPACE, ns.namespace);
  const r = await dryRunApply(ns, m);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /deployment\.apps\/masakari-operator-engine serverside-applied \(server dry run\)/);
  assert.match(r.stdout, /clusterrole\.rbac\.authorization\.k8s\.io\/masakari-operator-nhc serverside-applied/);
});

test('the webhook component: Service, ValidatingWebhookConfiguration and the api pods on port 9443', async ({ ns }) => {
  const m = await render(true);
  const vwc = find(m, 'ValidatingWebhookConfiguration', `${PREFIX}validating-webhook`);
  const hook = (vwc.webhooks as { clientConfig: { service: Record<string, unknown> } }[])[0]!;
  assert.equal(hook.clientConfig.service, {
    name: `${PREFIX}webhook`,
    namespace: NAMESPACE,
    path: '/validate',
    port: 443,
  });
  find(m, 'Service', `${PREFIX}webhook`);
  const api = find(m, 'Deployment', `${PREFIX}api`);
  assert.ok(container(api).ports?.some((p) => p.name === 'webhook' && p.containerPort === 9443));
  assert.ok(podSpec(api).volumes?.some((v) => v.secret?.secretName === 'masakari-webhook-tls'));
  assert.not.ok(container(find(m, 'Deployment', `${PREFIX}engine`)).ports?.some((p) => p.name === 'webhook'));
  const r = await dryRunApply(ns, moveNamespace(m, NAMESPACE, ns.namespace));
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /validatingwebhookconfiguration\S* serverside-applied \(server dry run\)/);
});

test.run();
