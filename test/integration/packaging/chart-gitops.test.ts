// The chart as GitOps tools render it (`helm template`, as Argo CD does;
// helm-controller for Flux): stable output with cert-manager, CRDs as
// templates kept on uninstall, OpenShift-friendly security contexts, a PDB
// only where it cannot block a drain, the NetworkPolicy, and the
// PrometheusRule and Grafana dashboard whose queries parse with the
// Prometheus server's own PromQL parser (hack/promql, built from Go modules).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { byKind, CHART, find, helm, ROOT, run } from './tools.ts';
import type { Manifest } from './tools.ts';
import { renderChart } from './tools.ts';
import { podSpec } from './workloads.ts';

const RELEASE = 'masakari-operator';
const NS = 'masakari';
const CERT_MANAGER = { webhook: { certManager: { enabled: true } } };
const OPENSHIFT_VALUES = join(CHART, 'ci', 'openshift-values.yaml');

const test = suite('helm chart for GitOps');

async function render(values: object[] = [], extra: string[] = []): Promise<{ text: string; manifests: Manifest[] }> {
  const r = await renderChart(RELEASE, NS, values, extra);
  assert.is(r.code, 0, r.stderr);
  return { text: r.stdout, manifests: r.manifests };
}

let promqlPath: Promise<string> | undefined;
function promqlBinary(): Promise<string> {
  promqlPath ??= run(join(ROOT, 'hack', 'promql', 'build.sh'), [], 15 * 60_000).then((r) => {
    const path = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code !== 0 || !path) throw new Error(`hack/promql/build.sh failed (exit ${r.code}):\n${r.stderr}`);
    return path;
  });
  return promqlPath;
}

/** Parses each expression with github.com/prometheus/prometheus/promql/parser; returns the errors (null: parsed). */
async function parsePromql(exprs: string[]): Promise<Array<string | null>> {
  const r = await run(await promqlBinary(), [], 30_000, JSON.stringify(exprs));
  assert.ok(r.code === 0 || r.code === 1, `promql exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Array<string | null>;
}

test('helm template twice with cert-manager gives identical output: Issuer, Certificate, cainjector', async () => {
  const first = await render([CERT_MANAGER]);
  const second = await render([CERT_MANAGER]);
  assert.ok(first.text === second.text, 'two renders differ');
  const m = first.manifests;
  const issuer = find(m, 'Issuer', `${RELEASE}-webhook-selfsigned`);
  assert.equal(issuer.spec, { selfSigned: {} });
  const cert = find(m, 'Certificate', `${RELEASE}-webhook`).spec as {
    secretName: string;
    dnsNames: string[];
    issuerRef: { name: string };
  };
  assert.is(cert.secretName, `${RELEASE}-webhook-tls`);
  assert.ok(cert.dnsNames.includes(`${RELEASE}-webhook.${NS}.svc`), cert.dnsNames.join(', '));
  assert.is(cert.issuerRef.name, `${RELEASE}-webhook-selfsigned`);
  const vwc = byKind(m, 'ValidatingWebhookConfiguration')[0]!;
  assert.is(vwc.metadata.annotations?.['cert-manager.io/inject-ca-from'], `${NS}/${RELEASE}-webhook`);
  const hook = (vwc.webhooks as { clientConfig: { caBundle?: string } }[])[0]!;
  assert.is(hook.clientConfig.caBundle, undefined, 'the cainjector fills caBundle');
  assert.is(byKind(m, 'Secret').length, 0, 'no chart-made certificate Secret');
});

test('an existing issuer is used as given, and no Issuer is created', async () => {
  const { manifests } = await render([
    { webhook: { certManager: { enabled: true, issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer' } } } },
  ]);
  assert.is(byKind(manifests, 'Issuer').length, 0);
  const cert = find(manifests, 'Certificate', `${RELEASE}-webhook`).spec as { issuerRef: object };
  assert.equal(cert.issuerRef, { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
});

test('without cert-manager every helm template makes a new CA (why docs/gitops.md and NOTES.txt say use cert-manager)', async () => {
  const first = await render();
  const second = await render();
  assert.ok(first.text !== second.text, 'the lookup-generated certificate is expected to change between renders');
  const notes = readFileSync(join(CHART, 'templates', 'NOTES.txt'), 'utf8');
  assert.match(notes, 'webhook.certManager.enabled=true');
  assert.match(readFileSync(join(ROOT, 'docs', 'gitops.md'), 'utf8'), 'webhook.certManager.enabled');
});

test('helm lint --strict passes with every GitOps option on, and the schema rejects a misspelt one', async () => {
  const on = [
    '--set',
    'openstack.envSecret=masakari-os-env',
    '--set',
    'webhook.certManager.enabled=true',
    '--set',
    'metrics.prometheusRule.enabled=true',
    '--set',
    'metrics.grafanaDashboard.enabled=true',
    '--set',
    'networkPolicy.enabled=true',
    '--set',
    'networkPolicy.apiServer[0].ipBlock.cidr=10.0.0.0/24',
  ];
  const ok = await helm(['lint', '--strict', CHART, ...on]);
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  const bad = await helm(['lint', '--strict', CHART, '--set', 'webhook.certManager.enable=true']);
  assert.is.not(bad.code, 0);
  assert.match(bad.stdout + bad.stderr, /additional properties? 'enable' not allowed|enable/);
  const badCrds = await helm(['lint', CHART, '--set', 'crds.keep=yes']);
  assert.is.not(badCrds.code, 0, 'crds.keep must be a boolean');
});

test('OpenShift values: no runAsUser, runAsGroup or fsGroup anywhere, runAsNonRoot kept', async () => {
  const r = await helm(['template', RELEASE, CHART, '--namespace', NS, '-f', OPENSHIFT_VALUES]);
  assert.is(r.code, 0, r.stderr);
  assert.not.match(r.stdout, /runAsUser|runAsGroup|fsGroup/);
  const { manifests } = await render([], ['-f', OPENSHIFT_VALUES]);
  for (const d of byKind(manifests, 'Deployment')) {
    const spec = podSpec(d);
    assert.is(spec.securityContext?.runAsNonRoot, true, d.metadata.name);
    for (const c of spec.containers) assert.is(c.securityContext?.runAsNonRoot, true, `${d.metadata.name}/${c.name}`);
  }
});

test('a PodDisruptionBudget only for a component with more than one replica', async () => {
  const one = await render([{ api: { replicas: 1 }, engine: { replicas: 1 } }]);
  assert.is(byKind(one.manifests, 'PodDisruptionBudget').length, 0);
  const mixed = await render([{ api: { replicas: 3 }, engine: { replicas: 1 } }]);
  assert.equal(
    byKind(mixed.manifests, 'PodDisruptionBudget').map((p) => p.metadata.name),
    [`${RELEASE}-api`],
  );
});

test('CRDs are templates that helm upgrade upgrades, kept on uninstall; crds.enabled=false leaves them out', async () => {
  const { manifests } = await render();
  const crds = byKind(manifests, 'CustomResourceDefinition');
  const source = readFileSync(join(ROOT, 'crds', 'masakari.openkeel.io_notifications.yaml'), 'utf8');
  assert.is(crds.length, 5);
  for (const crd of crds) {
    assert.is(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep', crd.metadata.name);
  }
  const notifications = crds.find((c) => c.metadata.name === 'notifications.masakari.openkeel.io');
  assert.ok(notifications && source.includes('name: notifications.masakari.openkeel.io'));
  const noKeep = await render([{ crds: { keep: false } }]);
  for (const crd of byKind(noKeep.manifests, 'CustomResourceDefinition')) {
    assert.is(crd.metadata.annotations?.['helm.sh/resource-policy'], undefined);
  }
  const none = await render([{ crds: { enabled: false } }]);
  assert.is(byKind(none.manifests, 'CustomResourceDefinition').length, 0);
});

test('NetworkPolicy: the REST API from apiClients only, the webhook from the API server only, /metrics from metricsClients only', async () => {
  const apiClients = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openstack' } } }];
  const apiServer = [{ ipBlock: { cidr: '192.0.2.0/28' } }];
  const metricsClients = [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }];
  const { manifests } = await render([{ networkPolicy: { enabled: true, apiClients, apiServer, metricsClients } }]);
  type Rule = { ports: { port: number }[]; from?: object[] };
  const api = find(manifests, 'NetworkPolicy', `${RELEASE}-api`).spec as { ingress: Rule[]; policyTypes: string[] };
  assert.equal(api.policyTypes, ['Ingress']);
  const byPort = (rules: Rule[], port: number) => rules.filter((r) => r.ports.some((p) => p.port === port));
  assert.equal(
    byPort(api.ingress, 15868).map((r) => r.from),
    [apiClients],
  );
  assert.equal(
    byPort(api.ingress, 9443).map((r) => r.from),
    [apiServer],
  );
  const engine = find(manifests, 'NetworkPolicy', `${RELEASE}-engine`).spec as { ingress: Rule[] };
  assert.equal(
    engine.ingress.flatMap((r) => r.ports.map((p) => p.port)),
    [8081, 8082],
  );
  for (const policy of [api, engine]) {
    // The kubelet's probes reach 8081 from anywhere; /metrics on 8082 only from metricsClients.
    assert.equal(
      byPort(policy.ingress, 8081).map((r) => r.from),
      [undefined],
    );
    assert.equal(
      byPort(policy.ingress, 8082).map((r) => r.from),
      [metricsClients],
    );
  }
  const missing = await renderChart(RELEASE, NS, [{ networkPolicy: { enabled: true } }]);
  assert.is.not(missing.code, 0);
  assert.match(missing.stderr, 'networkPolicy.apiServer');
});

test('api.tls: cert-manager issues the API certificate for its Service names; the api pods serve it with use_ssl', async () => {
  const { manifests } = await render([
    { api: { tls: { enabled: true, certManager: { enabled: true, dnsNames: ['masakari.example.com'] } } } },
  ]);
  const cert = find(manifests, 'Certificate', `${RELEASE}-api`).spec as {
    secretName: string;
    dnsNames: string[];
    issuerRef: { name: string };
  };
  assert.is(cert.secretName, `${RELEASE}-api-tls`);
  assert.equal(cert.dnsNames, [
    'masakari-api',
    `masakari-api.${NS}`,
    `masakari-api.${NS}.svc`,
    `masakari-api.${NS}.svc.cluster.local`,
    'masakari.example.com',
  ]);
  assert.is(cert.issuerRef.name, `${RELEASE}-api-selfsigned`);
  find(manifests, 'Issuer', `${RELEASE}-api-selfsigned`);
  const api = podSpec(find(manifests, 'Deployment', `${RELEASE}-api`));
  const env = Object.fromEntries((api.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
  assert.is(env['MASAKARI__DEFAULT__USE_SSL'], 'true');
  assert.is(env['MASAKARI__WSGI__SSL_CERT_FILE'], '/etc/masakari/api-tls/tls.crt');
  assert.is(env['MASAKARI__WSGI__SSL_KEY_FILE'], '/etc/masakari/api-tls/tls.key');
  assert.ok(api.volumes?.some((v) => v.secret?.secretName === `${RELEASE}-api-tls`));
  const engine = podSpec(find(manifests, 'Deployment', `${RELEASE}-engine`));
  assert.not.ok(engine.containers[0]!.env?.some((e) => e.name === 'MASAKARI__DEFAULT__USE_SSL'));
  const svc = find(manifests, 'Service', 'masakari-api').spec as { ports: { name: string; appProtocol: string }[] };
  assert.equal([svc.ports[0]?.name, svc.ports[0]?.appProtocol], ['http', 'https']);

  const own = await render([{ api: { tls: { enabled: true, certSecret: 'my-api-tls' } } }]);
  const mounted = podSpec(find(own.manifests, 'Deployment', `${RELEASE}-api`));
  assert.ok(mounted.volumes?.some((v) => v.secret?.secretName === 'my-api-tls'));
  assert.is(byKind(own.manifests, 'Certificate').filter((c) => c.metadata.name === `${RELEASE}-api`).length, 0);
  const neither = await renderChart(RELEASE, NS, [{ api: { tls: { enabled: true } } }]);
  assert.is.not(neither.code, 0);
  assert.match(neither.stderr, 'api.tls.enabled needs api.tls.certManager.enabled or api.tls.certSecret');
});

test('/metrics has its own container port behind the metrics Service; the probes stay on ops', async () => {
  const { manifests } = await render();
  for (const name of [`${RELEASE}-api`, `${RELEASE}-engine`]) {
    const c = podSpec(find(manifests, 'Deployment', name)).containers[0]!;
    assert.ok(
      c.ports?.some((p) => p.name === 'metrics' && p.containerPort === 8082),
      name,
    );
    assert.is(c.env?.find((e) => e.name === 'MASAKARI_PROMETHEUS_LISTEN')?.value, '0.0.0.0:8082');
  }
  const svc = find(manifests, 'Service', `${RELEASE}-metrics`).spec as { ports: { targetPort: string }[] };
  assert.is(svc.ports[0]?.targetPort, 'metrics');
});

test('the PrometheusRule expressions parse with the Prometheus PromQL parser', async () => {
  const { manifests } = await render([{ metrics: { prometheusRule: { enabled: true } } }]);
  const rule = find(manifests, 'PrometheusRule', RELEASE).spec as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const rules = rule.groups.flatMap((g) => g.rules);
  assert.ok(rules.length >= 8, rules.map((r) => r.alert).join(', '));
  const errors = await parsePromql(rules.map((r) => r.expr));
  const failed = rules.filter((_, i) => errors[i] !== null).map((r, i) => `${r.alert}: ${errors[i]}`);
  assert.equal(failed, []);
  // the parser does reject nonsense (the check is not vacuous)
  assert.is.not((await parsePromql(['sum(rate(x[5m])']))[0], null);
});

test('every alert has a severity by impact and a runbook_url whose anchor is a heading of docs/operations.md', async () => {
  const { manifests } = await render([{ metrics: { prometheusRule: { enabled: true } } }]);
  const rules = (
    find(manifests, 'PrometheusRule', RELEASE).spec as {
      groups: { rules: { alert: string; labels: Record<string, string>; annotations: Record<string, string> }[] }[];
    }
  ).groups.flatMap((g) => g.rules);
  const critical = [
    'MasakariNoEngineLeader',
    'MasakariRecoveryFailed',
    'MasakariEvacuationsFailing',
    'MasakariServerLeftLocked',
    'MasakariRecoveryHeld',
    'MasakariRemediationLeaseUnreadable',
    'MasakariDetectionBlind',
    'MasakariFencingFailed',
    'MasakariApiServerWritesFailing',
  ];
  // GitHub's heading anchors: lower case, spaces to dashes, punctuation dropped
  const anchors = new Set(
    readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .map((l) =>
        l
          .replace(/^#+\s*/, '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
  );
  for (const r of rules) {
    assert.is(r.labels.severity, critical.includes(r.alert) ? 'critical' : 'warning', r.alert);
    const url = r.annotations.runbook_url ?? '';
    assert.match(url, /^https:\/\/.*\/docs\/operations\.md#/, r.alert);
    assert.ok(anchors.has(url.split('#')[1]!), `${r.alert}: no heading for ${url}`);
  }
  // severities and runbookBaseUrl are values
  const { manifests: custom } = await render([
    {
      metrics: {
        prometheusRule: {
          enabled: true,
          severities: { MasakariRecoverySlow: 'critical' },
          alertLabels: { team: 'cloud' },
          runbookBaseUrl: 'https://docs.example.com/ops.html',
        },
      },
    },
  ]);
  const slow = (
    find(custom, 'PrometheusRule', RELEASE).spec as {
      groups: { rules: { alert: string; labels: Record<string, string>; annotations: Record<string, string> }[] }[];
    }
  ).groups
    .flatMap((g) => g.rules)
    .find((r) => r.alert === 'MasakariRecoverySlow')!;
  assert.equal(slow.labels, { severity: 'critical', team: 'cloud' });
  assert.is(slow.annotations.runbook_url, 'https://docs.example.com/ops.html#masakarirecoveryslow');
});

/** Gauges every api replica exports with the same value (docs/operations.md "Metrics"). */
const REPLICATED_GAUGES = ['masakari_hosts', 'masakari_notifications_stored'];

test('with N api replicas the dashboard and alerts count state gauges once: max by their labels before any sum', async () => {
  const { manifests } = await render([
    { metrics: { prometheusRule: { enabled: true }, grafanaDashboard: { enabled: true } } },
  ]);
  const dashboard = JSON.parse(
    (find(manifests, 'ConfigMap', `${RELEASE}-dashboard`).data as Record<string, string>)['masakari-operator.json']!,
  ) as { panels: { targets: { expr: string }[] }[] };
  const rule = find(manifests, 'PrometheusRule', RELEASE).spec as { groups: { rules: { expr: string }[] }[] };
  const exprs = [
    ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
    ...rule.groups.flatMap((g) => g.rules.map((r) => r.expr)),
  ];
  let checked = 0;
  for (const expr of exprs) {
    for (const gauge of REPLICATED_GAUGES) {
      for (const m of expr.matchAll(new RegExp(`(\\S*)\\(${gauge}\\{`, 'g'))) {
        checked++;
        // the innermost aggregation over the gauge collapses the replicas (pod label), keeping the gauge's own labels
        const before = expr.slice(0, m.index);
        assert.match(before, /(max|min|avg) by \([^)]*\) $/, `${gauge} aggregated over replicas without max: ${expr}`);
      }
    }
  }
  assert.ok(checked >= 4, `checked ${checked} uses`);
});

test('the Grafana dashboard ConfigMap holds the dashboard JSON, and its queries parse', async () => {
  const { manifests } = await render([{ metrics: { grafanaDashboard: { enabled: true } } }]);
  const cm = find(manifests, 'ConfigMap', `${RELEASE}-dashboard`);
  assert.is(cm.metadata.labels?.grafana_dashboard, '1');
  const json = (cm.data as Record<string, string>)['masakari-operator.json'] ?? '';
  const dashboard = JSON.parse(json) as { panels: { targets: { expr: string }[] }[] };
  const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr.replaceAll('$namespace', NS)));
  assert.ok(exprs.length >= 8);
  const errors = await parsePromql(exprs);
  assert.equal(
    exprs.filter((_, i) => errors[i] !== null),
    [],
  );
});

test.run();
