// The validating admission webhook for FailoverSegment, HaHost and
// Notification (kubectl/GitOps writes), served by the api component next to
// the Masakari API and reading the same caches. See docs/design/kubectl-gitops.md, "kubectl
// and GitOps".
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { Repository } from '../domain/repository.ts';
import type { ComputeHostChecker } from '../domain/compute-host-checker.ts';
import { MASAKARI_VALIDATORS } from '../domain/spec-validators.ts';
import type { SpecValidators } from '../domain/spec-validators.ts';
import { WEBHOOK_TIMEOUT_SECONDS } from './configuration.ts';
import { AdmissionRules } from './rules.ts';
import type { RulesDeps, TrustPolicy } from './rules.ts';
import type { WebhookServer } from './server.ts';
import { startWebhookServer } from './server.ts';
import type { WebhookSettings } from './settings.ts';
import { serviceAccountUsername } from './settings.ts';

export { AdmissionRules } from './rules.ts';
export type { RulesDeps, TrustPolicy } from './rules.ts';
export { startWebhookServer, WEBHOOK_PATH } from './server.ts';
export type { WebhookServer, WebhookServerOptions } from './server.ts';
export {
  buildValidatingWebhookConfiguration,
  registerWebhookConfiguration,
  unregisterWebhookConfiguration,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  WEBHOOK_NAME,
  WEBHOOK_TIMEOUT_SECONDS,
} from './configuration.ts';
export type { ValidatingWebhookConfiguration, WebhookConfigurationOptions } from './configuration.ts';
export { kubeUsername, webhookSettingsFromEnv, serviceAccountUsername } from './settings.ts';
export type { WebhookSettings } from './settings.ts';

/** Time left for the API server's round trip and our own work once Nova has had its share. */
const NOVA_BUDGET_MS = (WEBHOOK_TIMEOUT_SECONDS - 1.5) * 1000;

export interface StartWebhookOptions {
  settings: WebhookSettings;
  /** For the one direct lookup (does a segment exist that is not admitted yet); reads are otherwise from repo. */
  kube: KubeClient;
  namespace: string;
  repo: Repository;
  underRecovery: (segmentUuid: string) => boolean;
  /** Undefined when no Nova is configured (host writes are then refused). */
  compute: ComputeHostChecker | undefined;
  log: Logger;
  metrics?: Registry;
  /** Default: Masakari's validators, as the REST facade and the reconcilers use them. */
  validators?: SpecValidators;
  /**
   * Default: the operator's field managers, believed from this pod's service
   * account (when there is one) and settings.operatorUsers; DELETEs from the
   * service account only.
   */
  trust?: TrustPolicy;
  /** Warn about a notification the engine will fail for its generated_time (RulesDeps.freshness). */
  freshness?: RulesDeps['freshness'];
  certPollMs?: number;
}

/**
 * Who the operator is to the webhook: `self` (this pod's service account,
 * undefined outside a pod) and settings.operatorUsers. Only `self` is trusted
 * with DELETEs: the listed names may be shared with people (local runs).
 */
export function defaultTrust(settings: Pick<WebhookSettings, 'operatorUsers'>, self: string | undefined): TrustPolicy {
  const operatorUsers = [...new Set([...(self ? [self] : []), ...(settings.operatorUsers ?? [])])];
  return { fieldManagers: Object.values(FIELD_MANAGERS), operatorUsers, ...(self ? { deleters: [self] } : {}) };
}

export function startWebhook(opts: StartWebhookOptions): Promise<WebhookServer> {
  const trust = opts.trust ?? defaultTrust(opts.settings, serviceAccountUsername());
  opts.log.info(
    { operatorUsers: trust.operatorUsers, deleters: trust.deleters ?? [] },
    'webhook: writes of these users with an operator field manager (deletes: of the deleters) are not re-checked',
  );
  const rules = new AdmissionRules({
    repo: opts.repo,
    segmentExists: (name) =>
      opts.kube.get(RESOURCES.segments, opts.namespace, name).then(
        () => true,
        (e: unknown) => {
          if (isNotFound(e)) return false;
          throw e;
        },
      ),
    underRecovery: opts.underRecovery,
    compute: opts.compute,
    validators: opts.validators ?? MASAKARI_VALIDATORS,
    trust,
    novaTimeoutMs: NOVA_BUDGET_MS,
    ...(opts.freshness ? { freshness: opts.freshness } : {}),
    log: opts.log.child({ component: 'webhook' }),
  });
  return startWebhookServer({
    listen: opts.settings.listen,
    certDir: opts.settings.certDir,
    certPollMs: opts.certPollMs,
    rules,
    log: opts.log,
    metrics: opts.metrics,
  });
}
