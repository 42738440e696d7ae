// The Helm chart: helm lint, the rendered objects with default and with
// non-default values, values.schema.json, and a server-side dry-run apply of
// every render against the real API server.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump, load } from 'js-yaml';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import {
  byKind,
  CHART,
  dryRunApply,
  ensureNamespace,
  find,
  helm,
  isNamespaced,
  renderChart,
  renderChartBare,
} from './tools.ts';
import type { Manifest } from './tools.ts';
import { assertProbes, assertRestricted, container, envValue, loadRenderedConfig, podSpec } from './workloads.ts';

const RELEASE = 'masakari-operator';
const FULLNAME = 'masakari-operator'; // a release name containing the chart name is used as is
const LEASE_NAMESPACE = 'medik8s-leases';
const FIXTURES = fileURLToPath(new URL('../../../src/config/testdata/', import.meta.url));

/** Values a production install would set: everything optional switched on. */
const PRODUCTION_VALUES = {
  image: { repository: 'registry.example.com/masakari-operator', tag: '0.1.0' },
  auth: { strategy: 'keystone' },
  openstack: { cloudsSecret: 'masakari-clouds', cloud: 'openstack', envSecret: 'masakari-os-env' },
  config: {
    DEFAULT: { host_failure_recovery_threads: 5, os_region_name: 'RegionOne' },
    host_failure: { evacuate_all_instances: false },
    keystone_authtoken: { token_cache_time: 300 },
  },
  policy: { rules: { 'os_masakari_api:segments:index': 'rule:admin_api' } },
  logLevel: 'debug',
  ingress: {
    enabled: true,
    className: 'nginx',
    hosts: [{ host: 'masakari.example.com' }],
    tls: [{ secretName: 'masakari-tls', hosts: ['masakari.example.com'] }],
  },
  metrics: { serviceMonitor: { enabled: true } },
  webhook: { enabled: true, certSecret: 'masakari-webhook-tls', caBundle: Buffer.from('test CA').toString('base64') },
  api: {
    replicas: 3,
    nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
    tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }],
  },
  extraEnv: [
    {
      name: 'MASAKARI__DEFAULT__OS_PRIVILEGED_USER_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'masakari-privileged', key: 'password' } },
    },
  ],
};

// The Prometheus Operator's ServiceMonitor CRD, reduced to what the API server
// needs to accept a ServiceMonitor (the test control plane has none).
const SERVICE_MONITOR_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: { kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;

const test = suite<{ ns: TestNamespace }>('helm chart', { ns: undefined as unknown as TestNamespace });
test.before(async (ctx) => {
  ctx.ns = await useNamespace('pkg-chart');
  await ensureNamespace(ctx.ns, LEASE_NAMESPACE);
});
test.after(async ({ ns }) => {
  // the ServiceMonitor CRD is cluster-wide: leave the shared control plane as it was
  await ns.kubectl(['delete', 'crd', 'servicemonitors.monitoring.coreos.com', '--ignore-not-found']);
  await ns.cleanup();
});

async function render(ns: TestNamespace, values: object[] = [], extra: string[] = []): Promise<Manifest[]> {
  const r = await renderChart(RELEASE, ns.namespace, values, extra);
  assert.is(r.code, 0, r.stderr);
  return r.manifests;
}

test('helm lint passes with the minimal values (defaults and credentials) and with production values', async () => {
  const plain = await helm(['lint', '--strict', CHART, '--set', 'openstack.envSecret=masakari-os-env']);
  assert.is(plain.code, 0, plain.stdout + plain.stderr);
  assert.match(plain.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  const dir = mkdtempSync(join(tmpdir(), 'masakari-lint-'));
  try {
    writeFileSync(join(dir, 'values.yaml'), dump(PRODUCTION_VALUES));
    const full = await helm(['lint', '--strict', CHART, '-f', join(dir, 'values.yaml')]);
    assert.is(full.code, 0, full.stdout + full.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('default values: an api Deployment and an engine + remediation Deployment, two replicas each', async ({ ns }) => {
  const m = await render(ns);
  const api = find(m, 'Deployment', `${FULLNAME}-api`);
  const engine = find(m, 'Deployment', `${FULLNAME}-engine`);
  assert.is((api.spec as { replicas: number }).replicas, 2);
  assert.is((engine.spec as { replicas: number }).replicas, 2);
  assert.is(envValue(container(api), 'MASAKARI_COMPONENTS'), 'api');
  assert.is(envValue(container(engine), 'MASAKARI_COMPONENTS'), 'engine,remediation,detection');
  assert.is(podSpec(api).serviceAccountName, `${FULLNAME}-api`);
  assert.is(podSpec(engine).serviceAccountName, `${FULLNAME}-controller`);
  for (const d of [api, engine]) {
    assert.is(envValue(container(d), 'MASAKARI_NAMESPACE'), ns.namespace);
    assert.is(envValue(container(d), 'MASAKARI_AUTH_STRATEGY'), 'keystone');
    assert.is(envValue(container(d), 'MASAKARI_METRICS_LISTEN'), '0.0.0.0:8081');
    assert.is(container(d).image, 'masakari-operator:0.1.0');
    assert.ok(
      container(d).env?.some((e) => e.name === 'POD_NAME' && e.valueFrom?.fieldRef?.fieldPath === 'metadata.name'),
    );
    assertRestricted(d);
    assertProbes(d);
  }
  // only the api pods serve the Masakari API
  assert.ok(container(api).ports?.some((p) => p.name === 'http' && p.containerPort === 15868));
  assert.not.ok(container(engine).ports?.some((p) => p.name === 'http'));
});

test('default values: the Masakari API Service, the metrics Service and PodDisruptionBudgets', async ({ ns }) => {
  const m = await render(ns);
  const svc = find(m, 'Service', 'masakari-api');
  const spec = svc.spec as {
    ports: { name: string; port: number; targetPort: string }[];
    selector: Record<string, string>;
  };
  assert.equal(spec.ports, [{ name: 'http', port: 15868, targetPort: 'http', protocol: 'TCP' }]);
  assert.is(spec.selector['app.kubernetes.io/component'], 'api');
  const metrics = find(m, 'Service', `${FULLNAME}-metrics`).spec as typeof spec;
  assert.is(metrics.ports[0]?.port, 8081);
  assert.is(metrics.selector['app.kubernetes.io/component'], undefined, 'metrics of api and engine pods');
  const pdb = find(m, 'PodDisruptionBudget', `${FULLNAME}-api`).spec as { minAvailable: number };
  assert.is(pdb.minAvailable, 1);
  find(m, 'PodDisruptionBudget', `${FULLNAME}-engine`);
});

test('default values: no Ingress, ServiceMonitor, ConfigMap or OpenStack Secret of the chart', async ({ ns }) => {
  const m = await render(ns);
  for (const kind of ['Ingress', 'ServiceMonitor', 'ConfigMap']) {
    assert.equal(byKind(m, kind), [], kind);
  }
  // The only Secret is the webhook's generated certificate (next test).
  assert.equal(
    byKind(m, 'Secret').map((o) => o.metadata.name),
    [`${FULLNAME}-webhook-tls`],
  );
  const api = container(find(m, 'Deployment', `${FULLNAME}-api`));
  assert.is(envValue(api, 'MASAKARI_CONFIG'), undefined);
  assert.is(envValue(api, 'OS_CLOUD'), undefined);
  // the credentials of MINIMAL_VALUES, nothing else
  assert.equal(api.envFrom, [{ secretRef: { name: 'masakari-os-env' } }]);
});

test('default values: the webhook is on, with a CA and serving certificate the chart made for its Service', async ({
  ns,
}) => {
  const m = await render(ns);
  const secret = find(m, 'Secret', `${FULLNAME}-webhook-tls`) as Manifest & {
    type: string;
    data: Record<string, string>;
  };
  assert.is(secret.type, 'kubernetes.io/tls');
  const pem = (k: string) => Buffer.from(secret.data[k] ?? '', 'base64').toString();
  const ca = new X509Certificate(pem('ca.crt'));
  const cert = new X509Certificate(pem('tls.crt'));
  assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), 'the serving certificate is signed by the CA');
  assert.ok(createPrivateKey(pem('tls.key')).type === 'private');
  const host = `${FULLNAME}-webhook.${ns.namespace}.svc`;
  assert.ok(cert.checkHost(host), `${cert.subjectAltName} covers ${host}`);
  const vwc = find(m, 'ValidatingWebhookConfiguration', `${ns.namespace}-${FULLNAME}`);
  const hook = (vwc.webhooks as { clientConfig: { caBundle: string; service: { name: string } } }[])[0]!;
  assert.is(hook.clientConfig.caBundle, secret.data['ca.crt']);
  assert.is(hook.clientConfig.service.name, `${FULLNAME}-webhook`);
  const apiDeployment = find(m, 'Deployment', `${FULLNAME}-api`);
  assert.ok(podSpec(apiDeployment).volumes?.some((v) => v.secret?.secretName === `${FULLNAME}-webhook-tls`));
  assert.is(envValue(container(apiDeployment), 'MASAKARI_WEBHOOK_CERT_DIR'), '/etc/masakari/webhook-tls');
});

test('default values: every namespaced object is in the release namespace, except the Medik8s lease Role', async ({
  ns,
}) => {
  const m = await render(ns);
  for (const o of m.filter(isNamespaced)) {
    const expected = o.metadata.name.endsWith('-medik8s-leases') ? LEASE_NAMESPACE : ns.namespace;
    assert.is(o.metadata.namespace, expected, `${o.kind}/${o.metadata.name}`);
  }
});

test('default values: the process accepts the rendered environment', async ({ ns }) => {
  const m = await render(ns);
  const loaded = loadRenderedConfig(find(m, 'Deployment', `${FULLNAME}-engine`), m);
  assert.equal(loaded.config.operator.components, ['engine', 'remediation', 'detection']);
  assert.is(loaded.config.operator.namespace, ns.namespace);
});

test('config as a masakari.conf string is rendered as masakari.conf and loaded as one', async ({ ns }) => {
  const conf = readFileSync(join(FIXTURES, 'kolla-ansible.masakari.conf'), 'utf8');
  const m = await render(ns, [{ config: conf }]);
  const cm = find(m, 'ConfigMap', `${FULLNAME}-config`);
  assert.is((cm.data as Record<string, string>)['masakari.conf'], conf);
  const api = find(m, 'Deployment', `${FULLNAME}-api`);
  assert.is(envValue(container(api), 'MASAKARI_CONFIG'), '/etc/masakari/config/masakari.conf');
  assert.equal(container(api).args, ['run']);
  const loaded = loadRenderedConfig(api, m);
  assert.is(loaded.config.oslo_middleware.enable_proxy_headers_parsing, true);
  assert.is(loaded.config.keystone_authtoken.www_authenticate_uri, 'https://openstack.example.com:5000');
  assert.is(loaded.config.operator.log_level, 'debug');
});

test('configSecret: a masakari.conf in an existing Secret is mounted and passed as --config-file after config', async ({
  ns,
}) => {
  const m = await render(ns, [
    { config: { operator: { max_concurrent_recoveries: 2 } }, configSecret: { name: 'site-masakari-conf' } },
  ]);
  for (const name of [`${FULLNAME}-api`, `${FULLNAME}-engine`]) {
    const d = find(m, 'Deployment', name);
    const c = container(d);
    assert.equal(c.args, ['run', '--config-file', '/etc/masakari/site/masakari.conf'], name);
    assert.ok(
      c.volumeMounts?.some((v) => v.name === 'site-config' && v.mountPath === '/etc/masakari/site' && v.readOnly),
    );
    assert.ok(
      podSpec(d).volumes?.some((v) => v.name === 'site-config' && v.secret?.secretName === 'site-masakari-conf'),
    );
    const loaded = loadRenderedConfig(d, m, {
      'site-masakari-conf': { 'masakari.conf': readFileSync(join(FIXTURES, 'openstack-helm.masakari.conf'), 'utf8') },
    });
    assert.is(loaded.config.DEFAULT.host_failure_recovery_threads, 1, name);
    assert.is(loaded.config.operator.max_concurrent_recoveries, 2, name);
    assert.equal(loaded.files, ['/etc/masakari/config/config.yaml', '/etc/masakari/site/masakari.conf']);
  }
  const r = await dryRunApply(ns, m);
  assert.is(r.code, 0, r.stderr);
});

test('default values apply with kubectl apply --server-side --dry-run=server (CRDs included)', async ({ ns }) => {
  const m = await render(ns, [], ['--include-crds']);
  assert.ok(byKind(m, 'CustomResourceDefinition').length >= 3);
  const r = await dryRunApply(ns, m);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /deployment\.apps\/masakari-operator-api serverside-applied \(server dry run\)/);
});

test('production values: Keystone auth, clouds.yaml Secret, OS_* Secret, config and policy', async ({ ns }) => {
  const m = await render(ns, [PRODUCTION_VALUES]);
  const apiDeployment = find(m, 'Deployment', `${FULLNAME}-api`);
  const api = container(apiDeployment);
  assert.is(api.image, 'registry.example.com/masakari-operator:0.1.0');
  assert.is(envValue(api, 'MASAKARI_AUTH_STRATEGY'), 'keystone');
  assert.is(envValue(api, 'OS_CLOUD'), 'openstack');
  assert.is(envValue(api, 'OS_CLIENT_CONFIG_FILE'), '/etc/openstack/clouds.yaml');
  assert.is(envValue(api, 'MASAKARI_LOG_LEVEL'), 'debug');
  assert.ok(api.volumeMounts?.some((v) => v.name === 'openstack' && v.mountPath === '/etc/openstack' && v.readOnly));
  assert.ok(podSpec(apiDeployment).volumes?.some((v) => v.secret?.secretName === 'masakari-clouds'));
  assert.equal(api.envFrom, [{ secretRef: { name: 'masakari-os-env' } }]);
  // config: rendered into a ConfigMap the process reads as MASAKARI_CONFIG
  const cm = find(m, 'ConfigMap', `${FULLNAME}-config`);
  assert.equal(load((cm.data as Record<string, string>)['config.yaml']!), PRODUCTION_VALUES.config);
  for (const name of [`${FULLNAME}-api`, `${FULLNAME}-engine`]) {
    const loaded = loadRenderedConfig(find(m, 'Deployment', name), m);
    assert.is(loaded.config.DEFAULT.host_failure_recovery_threads, 5, name);
    assert.is(loaded.config.host_failure.evacuate_all_instances, false, name);
  }
  // policy: only the API enforces it
  assert.is(envValue(api, 'MASAKARI_POLICY_FILE'), '/etc/masakari/policy/policy.yaml');
  const policy = find(m, 'ConfigMap', `${FULLNAME}-policy`);
  assert.equal(load((policy.data as Record<string, string>)['policy.yaml']!), PRODUCTION_VALUES.policy.rules);
  assert.is(envValue(container(find(m, 'Deployment', `${FULLNAME}-engine`)), 'MASAKARI_POLICY_FILE'), undefined);
  // Secrets come from the operator's own env entries
  assert.ok(api.env?.some((e) => e.valueFrom?.secretKeyRef?.name === 'masakari-privileged'));
  assert.is((apiDeployment.spec as { replicas: number }).replicas, 3);
});

test('production values: Ingress to the API, ServiceMonitor on the metrics Service', async ({ ns }) => {
  const m = await render(ns, [PRODUCTION_VALUES]);
  const ingress = find(m, 'Ingress', FULLNAME).spec as {
    ingressClassName: string;
    rules: { host: string; http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }[];
  };
  assert.is(ingress.ingressClassName, 'nginx');
  assert.is(ingress.rules[0]?.host, 'masakari.example.com');
  assert.equal(ingress.rules[0]?.http.paths[0]?.backend.service, { name: 'masakari-api', port: { name: 'http' } });
  const sm = find(m, 'ServiceMonitor', FULLNAME).spec as {
    selector: { matchLabels: Record<string, string> };
    endpoints: { port: string }[];
  };
  assert.is(sm.endpoints[0]?.port, 'metrics');
  const metrics = find(m, 'Service', `${FULLNAME}-metrics`);
  for (const [k, v] of Object.entries(sm.selector.matchLabels)) {
    assert.is(metrics.metadata.labels?.[k], v, `ServiceMonitor selects the metrics Service by ${k}`);
  }
});

test('production values: the webhook is served by the api pods on 9443 with the certificate Secret', async ({ ns }) => {
  const m = await render(ns, [PRODUCTION_VALUES]);
  const vwc = find(m, 'ValidatingWebhookConfiguration', `${ns.namespace}-${FULLNAME}`);
  const hook = (
    vwc.webhooks as {
      clientConfig: { service: { name: string; namespace: string; path: string; port: number }; caBundle: string };
      rules: { resources: string[]; operations: string[] }[];
      sideEffects: string;
    }[]
  )[0]!;
  assert.equal(hook.clientConfig.service, {
    name: `${FULLNAME}-webhook`,
    namespace: ns.namespace,
    path: '/validate',
    port: 443,
  });
  assert.is(hook.clientConfig.caBundle, PRODUCTION_VALUES.webhook.caBundle);
  assert.equal(hook.rules[0]?.resources, ['failoversegments', 'hahosts', 'notifications']);
  assert.is(hook.sideEffects, 'None');
  const svc = find(m, 'Service', `${FULLNAME}-webhook`).spec as { ports: { port: number; targetPort: string }[] };
  assert.equal(svc.ports[0]?.targetPort, 'webhook');
  const apiDeployment = find(m, 'Deployment', `${FULLNAME}-api`);
  const api = container(apiDeployment);
  assert.ok(api.ports?.some((p) => p.name === 'webhook' && p.containerPort === 9443));
  assert.is(envValue(api, 'MASAKARI_WEBHOOK_LISTEN'), '0.0.0.0:9443');
  assert.ok(podSpec(apiDeployment).volumes?.some((v) => v.secret?.secretName === 'masakari-webhook-tls'));
  // the engine serves no webhook
  assert.not.ok(container(find(m, 'Deployment', `${FULLNAME}-engine`)).ports?.some((p) => p.name === 'webhook'));
});

test('production values apply with a server-side dry run (with a ServiceMonitor CRD installed)', async ({ ns }) => {
  const crd = await ns.kubectl(
    ['apply', '--server-side', '--field-manager=packaging-test', '-f', '-'],
    SERVICE_MONITOR_CRD,
  );
  assert.is(crd.code, 0, crd.stderr);
  const established = await ns.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=30s',
    'crd/servicemonitors.monitoring.coreos.com',
  ]);
  assert.is(established.code, 0, established.stderr);
  const m = await render(ns, [PRODUCTION_VALUES], ['--include-crds']);
  const r = await dryRunApply(ns, m);
  assert.is(r.code, 0, r.stderr);
  for (const kind of [
    'ingress.networking.k8s.io',
    'servicemonitor.monitoring.coreos.com',
    'validatingwebhookconfiguration',
  ]) {
    assert.match(r.stdout, new RegExp(`^${kind.replace(/\./g, '\\.')}[^ ]* serverside-applied`, 'm'), kind);
  }
});

test('values.schema.json and the templates reject bad values with a clear message', async ({ ns }) => {
  const cases: [object, RegExp][] = [
    [{ auth: { strategy: 'basic' } }, /auth\/strategy.*keystone.*noauth2/],
    [{ replicaCount: 3 }, /additional properties 'replicaCount' not allowed/],
    [{ logLevel: 'verbose' }, /logLevel/],
    [{ webhook: { certSecret: 'tls' } }, /webhook\.caBundle or webhook\.certManagerCertificate/],
    [{ webhook: { enabled: true, caBundle: 'Zm9v' } }, /webhook\.certSecret is required/],
    [{ webhook: { certManagerCertificate: 'ns/cert' } }, /webhook\.certSecret is required/],
    [{ openstack: { cloudsSecret: 'clouds' } }, /openstack\.cloud is required/],
    [{ ingress: { enabled: true } }, /ingress\.hosts needs at least one host/],
    [{ api: { podDisruptionBudget: { maxUnavailable: 1 } } }, /set only one of minAvailable and maxUnavailable/],
    [
      { metrics: { service: { enabled: false }, serviceMonitor: { enabled: true } } },
      /needs metrics\.service\.enabled/,
    ],
  ];
  for (const [values, message] of cases) {
    const r = await renderChart(RELEASE, ns.namespace, [values]);
    assert.is.not(r.code, 0, JSON.stringify(values));
    assert.match(r.stderr, message, `${JSON.stringify(values)}: ${r.stderr}`);
  }
});

test('keystone auth with no OpenStack credentials stops the render with what to set, instead of crash-looping pods', async ({
  ns,
}) => {
  const r = await renderChartBare(RELEASE, ns.namespace);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /auth\.strategy is keystone but no OpenStack credentials are given/);
  assert.match(
    r.stderr,
    /openstack\.cloudsSecret.*openstack\.envSecret.*os_privileged_user_\*.*auth\.strategy=noauth2/,
  );
  // any one source of credentials is enough; noauth2 needs none to render
  const enough: object[] = [
    { openstack: { cloudsSecret: 'clouds', cloud: 'openstack' } },
    { openstack: { envSecret: 'os-env' } },
    { extraEnvFrom: [{ secretRef: { name: 'os-env' } }] },
    { extraEnv: [{ name: 'OS_AUTH_URL', value: 'https://keystone.example.com/v3' }] },
    {
      config: {
        DEFAULT: {
          os_privileged_user_name: 'masakari',
          os_privileged_user_password: 'secret',
          os_privileged_user_auth_url: 'https://keystone.example.com/v3',
          os_privileged_user_tenant: 'service',
        },
      },
    },
    { auth: { strategy: 'noauth2' } },
  ];
  for (const values of enough) {
    const ok = await renderChartBare(RELEASE, ns.namespace, [values]);
    assert.is(ok.code, 0, `${JSON.stringify(values)}: ${ok.stderr}`);
  }
});

test('keystone credentials given only as configSecret or as [keystone_authtoken] options pass the render check', async ({
  ns,
}) => {
  // A site's masakari.conf in a Secret, or its [keystone_authtoken] service user, is how a Masakari
  // migration brings its credentials (src/config/openstack-auth.ts reads both).
  const enough: object[] = [
    { configSecret: { name: 'site-masakari-conf' } },
    { extraEnv: [{ name: 'MASAKARI__KEYSTONE_AUTHTOKEN__USERNAME', value: 'masakari' }] },
    {
      config: {
        keystone_authtoken: {
          auth_url: 'https://keystone.example.com/v3',
          username: 'masakari',
          password: 'secret',
          project_name: 'service',
        },
      },
    },
  ];
  for (const values of enough) {
    const ok = await renderChartBare(RELEASE, ns.namespace, [values]);
    assert.is(ok.code, 0, `${JSON.stringify(values)}: ${ok.stderr}`);
  }
  const r = await renderChartBare(RELEASE, ns.namespace);
  assert.match(r.stderr, /configSecret.*keystone_authtoken/);
});

test("NODE_OPTIONS: V8 heap sized from each container's memory limit (limit less 128 MiB, at least half)", async ({
  ns,
}) => {
  const nodeOptions = async (values: object[]) => {
    const m = await render(ns, values);
    return ['api', 'engine'].map((c) => envValue(container(find(m, 'Deployment', `${FULLNAME}-${c}`)), 'NODE_OPTIONS'));
  };
  const defaults = '--max-semi-space-size=8 --max-old-space-size=384';
  assert.equal(await nodeOptions([]), [defaults, defaults]);
  assert.equal(
    await nodeOptions([
      { api: { resources: { limits: { memory: '1Gi' } } }, engine: { resources: { limits: { memory: '200Mi' } } } },
    ]),
    ['--max-semi-space-size=8 --max-old-space-size=896', '--max-semi-space-size=8 --max-old-space-size=100'],
  );
  assert.equal(
    await nodeOptions([
      { api: { resources: { limits: { memory: '1.5Gi' } } }, engine: { resources: { limits: { memory: '600M' } } } },
    ]),
    ['--max-semi-space-size=8 --max-old-space-size=1408', '--max-semi-space-size=8 --max-old-space-size=444'],
  );
  // no limit: the old space is left to V8; an explicit nodeOptions is used as is
  assert.equal(
    await nodeOptions([{ api: { resources: { limits: null } }, engine: { nodeOptions: '--max-old-space-size=2000' } }]),
    ['--max-semi-space-size=8', '--max-old-space-size=2000'],
  );
  // NODE_OPTIONS in extraEnv wins, without a second NODE_OPTIONS entry
  const m = await render(ns, [{ extraEnv: [{ name: 'NODE_OPTIONS', value: '--trace-gc' }] }]);
  const env = container(find(m, 'Deployment', `${FULLNAME}-api`)).env ?? [];
  assert.equal(
    env.filter((e) => e.name === 'NODE_OPTIONS'),
    [{ name: 'NODE_OPTIONS', value: '--trace-gc' }],
  );
  const bad = await renderChart(RELEASE, ns.namespace, [{ api: { resources: { limits: { memory: '1e9' } } } }]);
  assert.is.not(bad.code, 0);
  assert.match(bad.stderr, /api\.resources\.limits\.memory "1e9".*or set api\.nodeOptions/);
});

test('noauth2 with OS_* variables from a Secret renders without clouds.yaml', async ({ ns }) => {
  const m = await render(ns, [{ auth: { strategy: 'noauth2' }, openstack: { envSecret: 'os-env' } }]);
  const api = container(find(m, 'Deployment', `${FULLNAME}-api`));
  assert.is(envValue(api, 'MASAKARI_AUTH_STRATEGY'), 'noauth2');
  assert.is(envValue(api, 'OS_CLOUD'), undefined);
  assert.equal(api.envFrom, [{ secretRef: { name: 'os-env' } }]);
  assert.not.ok(api.volumeMounts?.some((v) => v.name === 'openstack'));
});

test.run();
