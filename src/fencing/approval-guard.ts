// Is a safety override on an object trustworthy? The annotations
// fencing-approved-by and recovery-released-by are only as good as the rule
// about who may write them: the ValidatingAdmissionPolicy safety-overrides
// (config/policy, the chart's admission-policies.yaml) lets only approvers set
// them. If its binding is gone (deleted, never installed, a cluster before
// 1.30), anyone who may patch a Notification could have written one, so an
// override is not honoured and the wait says why (docs/operations.md "Who may
// override safety"). Checked by reading the binding by name: at the first
// question, then at most once per recheck interval, so a deleted policy is
// noticed within it.
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { isNotFound, KubeError } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { gauge } from '../runtime/metric-registry.ts';
import { systemNowMs } from '../time/clock.ts';

/** How long one answer about the binding is reused. */
export const APPROVAL_GUARD_RECHECK_MS = 60_000;

export const APPROVAL_GUARD_METRIC = 'masakari_safety_overrides_guarded';

interface Binding {
  metadata: { name?: string; deletionTimestamp?: string };
  spec?: { policyName?: string; validationActions?: string[] };
}

export interface ApprovalGuardOptions {
  kube: KubeClient;
  /** [operator] safety_overrides_policy: the ValidatingAdmissionPolicyBinding's name; null: overrides are not checked. */
  bindingName: string | null;
  log: Logger;
  metrics?: Registry;
  now?: () => number;
  recheckMs?: number;
}

export class ApprovalGuard {
  private checked: { at: number; reason: string | undefined } | undefined;
  private readonly now: () => number;
  private readonly guarded;

  constructor(private readonly o: ApprovalGuardOptions) {
    this.now = o.now ?? systemNowMs;
    this.guarded = gauge(
      o.metrics,
      APPROVAL_GUARD_METRIC,
      '1 while the ValidatingAdmissionPolicyBinding that lets only approvers write the safety-override annotations ' +
        'exists and denies; 0 while it does not (overrides are then not honoured), or cannot be read',
    );
  }

  /**
   * Undefined when an override may be honoured (the binding exists and denies,
   * or no binding is configured); otherwise why not, for the wait's message.
   */
  async unguardedReason(): Promise<string | undefined> {
    const name = this.o.bindingName;
    if (!name) return undefined;
    const now = this.now();
    if (this.checked && now - this.checked.at < (this.o.recheckMs ?? APPROVAL_GUARD_RECHECK_MS)) {
      return this.checked.reason;
    }
    const reason = await this.read(name);
    if (reason !== this.checked?.reason) {
      if (reason) this.o.log.error({ binding: name }, `safety overrides are not honoured: ${reason}`);
      else if (this.checked) this.o.log.info({ binding: name }, 'safety overrides are guarded again');
    }
    this.checked = { at: now, reason };
    this.guarded.set(reason ? 0 : 1);
    return reason;
  }

  private async read(name: string): Promise<string | undefined> {
    const what = `ValidatingAdmissionPolicyBinding ${name}`;
    const consequence =
      'anyone who may patch a Notification or MasakariRemediation could have written the override, so it is not ' +
      'honoured until the binding is restored (chart value rbac.safetyOverridesPolicy, or config/policy)';
    try {
      const b = await this.o.kube.get<Binding>(RESOURCES.validatingAdmissionPolicyBindings, undefined, name);
      if (b.metadata.deletionTimestamp) return `${what} is being deleted: ${consequence}`;
      if (!b.spec?.validationActions?.includes('Deny')) {
        return `${what} does not deny (validationActions ${JSON.stringify(b.spec?.validationActions ?? [])}): ${consequence}`;
      }
      return undefined;
    } catch (err) {
      if (isNotFound(err)) return `${what} does not exist: ${consequence}`;
      if (err instanceof KubeError && err.code === 403) {
        return `${what} cannot be read (RBAC: get validatingadmissionpolicybindings): ${consequence}`;
      }
      return `${what} could not be read (${(err as Error).message}): ${consequence}`;
    }
  }
}
