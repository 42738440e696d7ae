// The ValidatingWebhookConfiguration that routes FailoverSegment, HaHost and
// Notification writes to this webhook. It matches the chart's
// templates/webhook.yaml and config/webhook/manifests.yaml, and is what tests
// and local runs register (with a url and the self-signed caBundle instead of
// a Service).
//
// Only the main resources are listed (no `/status`, no `/*`), so the status
// writes of the store and the engine never reach the webhook.
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { GROUP, KINDS, VERSION } from '../model/constants.ts';
import { WEBHOOK_PATH } from './server.ts';

export const WEBHOOK_NAME = `validate.${GROUP}`;
/** Masakari's in-use and name checks are quick; the Nova host check gets the rest of this budget. */
export const WEBHOOK_TIMEOUT_SECONDS = 5;
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};
/** Field manager for registering the configuration (tests, local runs). */
export const WEBHOOK_FIELD_MANAGER = 'masakari-webhook';

export type WebhookClientConfig =
  { url: string } | { service: { name: string; namespace: string; path?: string; port?: number } };

export interface WebhookConfigurationOptions {
  /** metadata.name of the (cluster-scoped) configuration. */
  name: string;
  /** Only writes in this namespace (the one holding the operator's objects) are sent. */
  namespace: string;
  clientConfig: WebhookClientConfig;
  /** PEM of the CA that signed the serving certificate; base64-encoded into caBundle. */
  caPem?: string;
  failurePolicy?: 'Fail' | 'Ignore';
  timeoutSeconds?: number;
  labels?: Record<string, string>;
}

export interface ValidatingWebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'ValidatingWebhookConfiguration';
  metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
  webhooks: Array<Record<string, unknown>>;
}

export function buildValidatingWebhookConfiguration(opts: WebhookConfigurationOptions): ValidatingWebhookConfiguration {
  const clientConfig: Record<string, unknown> =
    'url' in opts.clientConfig
      ? { url: opts.clientConfig.url }
      : { service: { path: WEBHOOK_PATH, port: 443, ...opts.clientConfig.service } };
  if (opts.caPem) clientConfig.caBundle = Buffer.from(opts.caPem, 'utf8').toString('base64');
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: opts.name, ...(opts.labels ? { labels: opts.labels } : {}) },
    webhooks: [
      {
        name: WEBHOOK_NAME,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: opts.failurePolicy ?? 'Fail',
        timeoutSeconds: opts.timeoutSeconds ?? WEBHOOK_TIMEOUT_SECONDS,
        matchPolicy: 'Equivalent',
        clientConfig,
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': opts.namespace } },
        rules: [
          {
            apiGroups: [GROUP],
            apiVersions: [VERSION],
            resources: [KINDS.segment.plural, KINDS.host.plural, KINDS.notification.plural],
            // DELETE: Masakari refuses deleting a segment or host that is in use to process notifications.
            operations: ['CREATE', 'UPDATE', 'DELETE'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  };
}

/** Creates or replaces the configuration (server-side apply, forced: this manager owns it). */
export async function registerWebhookConfiguration(
  kube: KubeClient,
  config: ValidatingWebhookConfiguration,
): Promise<void> {
  await kube.apply(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, config.metadata.name, config, {
    fieldManager: WEBHOOK_FIELD_MANAGER,
    force: true,
  });
}

/** Deletes the configuration; already gone is fine. */
export async function unregisterWebhookConfiguration(kube: KubeClient, name: string): Promise<void> {
  try {
    await kube.delete(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
