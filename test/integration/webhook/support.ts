// An operator for the webhook and GitOps tests: the api component (REST
// facade + store reconcilers + admission webhook on 127.0.0.1 with a
// self-signed certificate) on a fresh namespace, Nova played by the
// simulator, and the webhook registered for that namespace only (other tests
// on the shared control plane never reach it). The operator's identity is the
// kubeconfig's user; kubectl runs as that user too unless it impersonates.
import { callApi } from '../../support/api-call.ts';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { createKubeClient } from '../../../src/k8s/kube-client.ts';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION } from '../../../src/model/constants.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { createComponent } from '../../../src/api/component.ts';
import type { ApiComponent } from '../../../src/api/component.ts';
import { createNovaClient } from '../../../src/openstack/index.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import type { Simulator } from '../../../tools/simulator/server.ts';
import {
  buildValidatingWebhookConfiguration,
  kubeUsername,
  registerWebhookConfiguration,
  unregisterWebhookConfiguration,
} from '../../../src/webhook/index.ts';

export interface OperatorEnv {
  ns: TestNamespace;
  kube: KubeClient;
  api: ApiComponent;
  sim: Simulator;
  /** The API component's Prometheus registry (what its /metrics serves). */
  metrics: Registry;
  /** Masakari REST call against the facade; the body is parsed JSON. */
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; json: Doc }>;
  kubectl(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Masakari documents are checked field by field
export type Doc = any;

export const COMPUTE_HOSTS = ['compute-1', 'compute-2', 'compute-3', 'compute-4'];

const call = callApi;

/** The message of a Masakari error body ({"conflictingRequest": {"message": …, "code": 409}}). */
export function restMessage(json: Doc): string {
  const fault = Object.values(json ?? {})[0] as { message?: string } | undefined;
  return fault?.message ?? '';
}

/** What the webhook said, out of kubectl's "… denied the request: <message>". */
export function deniedMessage(stderr: string): string | undefined {
  return /denied the request: (.*)$/m.exec(stderr)?.[1];
}

import { eventually } from '../../support/eventually.ts';
import { startComponent } from '../../../src/testing/component.ts';
export { eventually };

/**
 * The API server picks a new webhook configuration up asynchronously: wait
 * until a server-side dry-run create of a segment with a taken name is
 * refused by the webhook.
 */
async function waitUntilEnforced(env: Pick<OperatorEnv, 'rest' | 'kube' | 'ns'>): Promise<void> {
  const probe = 'webhook-probe';
  const created = await env.rest('POST', '/v1/segments', {
    segment: { name: probe, recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  if (created.status !== 201) throw new Error(`probe segment not created: ${JSON.stringify(created.json)}`);
  const body = {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name: 'probe-copy' },
    spec: { name: probe, recoveryMethod: 'auto', serviceType: 'COMPUTE' },
  };
  await eventually(
    'the webhook to be enforced',
    () =>
      env.kube.create(RESOURCES.segments, env.ns.namespace, body, { dryRun: true }).then(
        () => 'allowed',
        (e: Error) => e.message,
      ),
    (m) => m.includes('already exists'),
  );
  const removed = await env.rest('DELETE', `/v1/segments/${created.json.segment.uuid}`);
  if (removed.status !== 204) throw new Error(`probe segment not deleted: ${JSON.stringify(removed.json)}`);
}

/** Starts the operator in a new namespace, or in `existing` (e.g. one a test has restored objects into). */
export async function operatorEnv(prefix: string, existing?: TestNamespace): Promise<OperatorEnv> {
  const ns = existing ?? (await useNamespace(prefix));
  const kube = createKubeClient(ns.kc);
  const sim = await startSimulator({ hosts: COMPUTE_HOSTS });
  const config = loadConfig({ env: {} }).config;
  config.DEFAULT.auth_strategy = 'noauth2';
  let api: ApiComponent | undefined;
  const metrics = new Registry();
  const webhookName = `masakari-${ns.namespace}`;
  const close = async () => {
    await unregisterWebhookConfiguration(kube, webhookName).catch(() => undefined);
    await api?.stop();
    await sim.stop();
    await ns.cleanup();
  };
  try {
    const operatorUsers = [await kubeUsername(kube)];
    api = await startComponent(
      {
        config,
        namespace: ns.namespace,
        kube,
        nova: createNovaClient(sim.clientCredentials, { timeoutMs: 2_000, maxRetries: 1 }),
        log: pino({ level: process.env.MASAKARI_TEST_LOG ?? 'silent' }),
        metrics,
        identity: `${prefix}-api`,
        signal: new AbortController().signal,
      },
      (app) =>
        createComponent(app, {
          listen: { host: '127.0.0.1', port: 0 },
          // The operator's writes carry this kubeconfig's user, as in `make run`
          // (kubectl here is the same user; it passes --as=... to be someone else).
          webhook: { listen: { host: '127.0.0.1', port: 0 }, operatorUsers },
        }),
    );
    const started = api;
    const webhook = started.webhook!;
    await registerWebhookConfiguration(
      kube,
      buildValidatingWebhookConfiguration({
        name: webhookName,
        namespace: ns.namespace,
        clientConfig: { url: webhook.url() },
        caPem: webhook.caPem,
      }),
    );
    const rest = (method: string, path: string, body?: unknown) => call(started, method, path, body);
    await waitUntilEnforced({ rest, kube, ns });
    return { ns, kube, api: started, sim, metrics, rest, kubectl: (args, stdin) => ns.kubectl(args, stdin), close };
  } catch (e) {
    await close();
    throw e;
  }
}
