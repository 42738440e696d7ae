// The gate's fencing step (reconciler.ts): before a remediation files a
// notification, the remediated Node must be proven fenced, as the segment's
// fencingProof requires (the rules in src/fencing/proof.ts). Its own module
// because it is the safety decision of the remediator: the one-Node-per-host
// rule, the manual approval and its guard, and the audit trail of who vouched
// all live here and nowhere else in src/remediation/.
import type { Logger } from 'pino';
import { evaluateFencing, gatherEvidence, manualApproval } from '../fencing/proof.ts';
import { hostNodes } from '../fencing/node.ts';
import type { KubeClient } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import {
  REMEDIATION_ANNOTATIONS,
  REMEDIATION_CONDITIONS,
  REMEDIATION_KINDS,
  REMEDIATION_REASONS,
} from '../model/remediation-constants.ts';
import type { MasakariRemediation, NodeLike } from '../model/remediation-types.ts';
import { rfc3339Seconds } from '../time/format.ts';
import type { EffectiveSpec } from './decide.ts';
import type { RemediationStatusWriter } from './status-writer.ts';

export interface ProveFencingDeps {
  kube: KubeClient;
  /** Why a fencing-approved-by may not be honoured now (ApprovalGuard); absent: always honoured. */
  approvalGuard?: { unguardedReason(): Promise<string | undefined> } | undefined;
  status: RemediationStatusWriter;
  log: Logger;
  now: () => number;
}

/**
 * Records the fencing proof (status.fencedAt, FencingVerified) and returns
 * the updated remediation, or undefined when the Node is not proven fenced
 * yet: Processing then says what is missing and the caller waits.
 */
export async function proveFencing(
  d: ProveFencingDeps,
  r: MasakariRemediation,
  spec: EffectiveSpec,
  nodeName: string,
  hostName: string,
): Promise<MasakariRemediation | undefined> {
  // One Node per host, as the engine's gate: if another Node also maps to this host, fencing this Node
  // proves nothing about the host, and no proof (nor an approval) is taken until the mapping is fixed.
  const mapped = hostNodes((await d.kube.list<NodeLike>(RESOURCES.nodes, undefined)).items, hostName);
  if (mapped.nodes.length > 1) {
    const message = mapped.problem ?? `host ${hostName} maps to more than one Node`;
    await d.status.setProcessing(r, REMEDIATION_REASONS.nodeMappingAmbiguous, message, hostName);
    d.status.event(r, 'Warning', REMEDIATION_REASONS.nodeMappingAmbiguous, 'Wait', message);
    return undefined;
  }
  const approval = manualApproval(r.metadata, REMEDIATION_KINDS.remediation.kind);
  const unguarded = approval ? await d.approvalGuard?.unguardedReason() : undefined;
  const verdict = evaluateFencing({
    required: spec.fencingProof,
    node: nodeName,
    nowMs: d.now(),
    selfNodeRemediationSafeTimeSeconds: spec.selfNodeRemediationSafeTimeSeconds,
    ...(unguarded ? {} : { approvalOn: { meta: r.metadata, kind: REMEDIATION_KINDS.remediation.kind } }),
    ...(await gatherEvidence(d.kube, spec.fencingProof)),
  });
  if (!verdict.proven) {
    const missing = unguarded
      ? `${REMEDIATION_ANNOTATIONS.fencingApprovedBy} ("${approval?.approvedBy}") is not honoured: ${unguarded}; ${verdict.missing}`
      : verdict.missing;
    await d.status.setProcessing(r, REMEDIATION_REASONS.waitingForFencing, missing, hostName);
    return undefined;
  }
  const fencedAt = rfc3339Seconds(new Date(d.now()));
  const { proof } = verdict;
  const updated = await d.status.write(r, {
    ...r.status,
    hostName,
    fencedAt,
    conditions: d.status.conditions(r, [
      {
        type: REMEDIATION_CONDITIONS.fencingVerified,
        status: 'True',
        reason: proof.reason,
        message: proof.message,
      },
      {
        type: REMEDIATION_CONDITIONS.processing,
        status: 'True',
        reason: REMEDIATION_REASONS.fencingVerified,
        message: `node ${nodeName} is fenced (${proof.source}); notifying Masakari about host ${hostName}`,
      },
    ]),
  });
  if (proof.kind === 'ManualApproval') {
    // The audit trail: who vouched, when we acted on it, and which writer set the annotation.
    d.log.warn({ remediation: updated.metadata.name, node: nodeName, approvedBy: proof.approvedBy }, proof.message);
    d.status.event(updated, 'Warning', proof.reason, 'ApproveFencing', `${proof.message}, accepted at ${fencedAt}`);
  } else {
    d.status.event(updated, 'Normal', REMEDIATION_REASONS.fencingVerified, 'VerifyFencing', proof.message);
  }
  return updated;
}
