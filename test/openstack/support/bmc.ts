// Shared pieces of the scenarios with emulated BMCs (tools/openstack-cloud/bmc/):
// fencing and detection set on the CRs with kubectl (the Masakari API has no
// such fields), the operator's view read back through kubectl, REST and
// /metrics, and what reached Nova read from the recording proxy.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../tools/controlplane/paths.ts';
import { LABELS } from '../../../src/model/constants.ts';
import type { FailoverSegment, HaHost, HostFencing, Notification } from '../../../src/model/types.ts';
import type { BmcDescription, BmcKind, PowerEvent } from '../../../tools/openstack-cloud/bmc/emulated-bmcs.ts';
import type { NovaExchange } from '../../../tools/openstack-cloud/recorder.ts';
import { facade, type Env, type NotificationView } from './scenario.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Operator options of the detection scenarios: the detection component, looking every 2 s. */
export const DETECTION = {
  components: 'api,engine,detection',
  env: { MASAKARI__DETECTION__POLL_INTERVAL: '2' },
};

/** Polls fn until it returns something other than undefined. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs / 1000} s`);
    await sleep(1_000);
  }
}

export async function kubectlJson<T>(e: Env, args: string[]): Promise<T> {
  const r = await e.ns.kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function kubectl(e: Env, args: string[], stdin?: string): Promise<string> {
  const r = await e.ns.kubectl(args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A Secret with the BMC credentials (keys username and password), created or replaced. */
export async function bmcSecret(e: Env, name: string, username: string, password: string): Promise<void> {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: e.ns.namespace },
    stringData: { username, password },
  };
  await kubectl(e, ['apply', '-f', '-'], JSON.stringify(secret));
}

/** HaHost spec.fencing for a host's emulated BMC, credentials from Secret `secret`. */
export function fencingFor(bmcs: BmcDescription, kind: BmcKind, host: string, secret: string): HostFencing {
  const ipmi = bmcs.ipmi[host];
  if (kind === 'ipmi' && !ipmi) throw new Error(`no IPMI BMC for ${host}`);
  return kind === 'redfish'
    ? {
        driver: 'redfish',
        address: bmcs.redfish.url,
        systemId: bmcs.redfish.systems[host] ?? '',
        credentialsSecretRef: { name: secret },
        timeoutSeconds: 5,
        powerOffTimeoutSeconds: 60,
      }
    : { driver: 'ipmi', address: ipmi?.address ?? '', credentialsSecretRef: { name: secret }, timeoutSeconds: 5 };
}

export async function haHost(e: Env, segmentId: string, name: string): Promise<HaHost> {
  const list = await kubectlJson<{ items: HaHost[] }>(e, [
    'get',
    'hahosts',
    '-l',
    `${LABELS.segmentUuid}=${segmentId}`,
  ]);
  const h = list.items.find((x) => x.spec.name === name);
  if (!h) throw new Error(`no HaHost ${name} in segment ${segmentId}`);
  return h;
}

export async function patchHaHost(e: Env, segmentId: string, name: string, spec: Partial<HaHost['spec']>) {
  const h = await haHost(e, segmentId, name);
  await kubectl(e, ['patch', 'hahost', h.metadata.name ?? '', '--type=merge', '-p', JSON.stringify({ spec })]);
}

export async function patchSegment(e: Env, segmentId: string, spec: Partial<FailoverSegment['spec']>) {
  const list = await kubectlJson<{ items: FailoverSegment[] }>(e, [
    'get',
    'failoversegments',
    '-l',
    `${LABELS.uuid}=${segmentId}`,
  ]);
  const name = list.items[0]?.metadata.name;
  if (!name) throw new Error(`no FailoverSegment ${segmentId}`);
  await kubectl(e, ['patch', 'failoversegment', name, '--type=merge', '-p', JSON.stringify({ spec })]);
}

export async function notificationCr(e: Env, uuid: string): Promise<Notification> {
  const list = await kubectlJson<{ items: Notification[] }>(e, [
    'get',
    'notifications',
    '-l',
    `${LABELS.uuid}=${uuid}`,
  ]);
  const n = list.items[0];
  if (!n) throw new Error(`no Notification with uuid ${uuid}`);
  return n;
}

export interface RestNotification extends NotificationView {
  source_host_uuid: string;
  type: string;
  created_at: string;
  generated_time: string;
}

/** The notifications of a host, through REST (newest first, as Masakari lists them). */
export async function notificationsOf(e: Env, hostUuid: string): Promise<RestNotification[]> {
  const { notifications } = (await facade(e, 'GET', `/notifications?source_host_uuid=${hostUuid}`)) as {
    notifications: RestNotification[];
  };
  return notifications;
}

export async function hostUuid(e: Env, segmentId: string, name: string): Promise<string> {
  const { hosts } = (await facade(e, 'GET', `/segments/${segmentId}/hosts`)) as {
    hosts: { name: string; uuid: string; on_maintenance: boolean }[];
  };
  const h = hosts.find((x) => x.name === name);
  if (!h) throw new Error(`no host ${name} in segment ${segmentId}`);
  return h.uuid;
}

/** The samples of a metric on the operator's /metrics, as text lines. */
export async function metric(e: Env, name: string): Promise<string[]> {
  const text = await (await fetch(`${e.operator.metricsUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

/** The value of the first sample of a metric whose labels contain every `labels` pair, or undefined. */
export async function metricValue(
  e: Env,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const lines = await metric(e, name);
  const line = lines.find((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/** Events of an object, as `kubectl events --for kind/name` prints them. */
export async function eventsFor(e: Env, kind: string, name: string): Promise<string> {
  return (await e.ns.kubectl(['events', '--for', `${kind}/${name}`])).stdout;
}

/** The evacuate actions that reached Nova through the recording proxy. */
export function evacuates(exchanges: NovaExchange[]): NovaExchange[] {
  return exchanges.filter(
    (x) =>
      x.method === 'POST' &&
      /\/servers\/[^/]+\/action$/.test(x.url) &&
      typeof x.requestBody === 'object' &&
      x.requestBody !== null &&
      'evacuate' in x.requestBody,
  );
}

/** The os-services PUTs that forced a compute service down. */
export function forcedDowns(exchanges: NovaExchange[]): NovaExchange[] {
  return exchanges.filter(
    (x) =>
      x.method === 'PUT' &&
      /\/os-services\//.test(x.url) &&
      (x.requestBody as { forced_down?: unknown } | undefined)?.forced_down === true,
  );
}

/** The power changes of one host's BMC. */
export function powerOf(events: PowerEvent[], host: string, kind: BmcKind): PowerEvent[] {
  return events.filter((p) => p.host === host && p.bmc === kind);
}

/**
 * The expression of a chart alert (charts/masakari-operator/templates/prometheusrule.yaml), so a test can
 * show that the metric it saw set is the one the alert fires on. No Prometheus runs here: the metric's
 * value is read from /metrics, and the chart's alert expressions are parsed in test/integration/packaging.
 */
export function alertExpr(alert: string): string {
  const text = readFileSync(join(repoRoot(), 'charts/masakari-operator/templates/prometheusrule.yaml'), 'utf8');
  const m = new RegExp(`- alert: ${alert}\\n\\s+expr: (.+)`).exec(text);
  if (!m?.[1]) throw new Error(`no alert ${alert} in the chart's PrometheusRule`);
  return m[1];
}
