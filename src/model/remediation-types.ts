// TypeScript shapes of MasakariRemediation(Template) (crds/masakari.openkeel.io_masakariremediation*.yaml)
// and the few fields we read from other Medik8s operators' objects.
import type { Condition, ObjectMeta } from './types.ts';

/** Which proof that the node is fenced must exist before Masakari evacuates it. */
export type FencingProofKind = 'FenceAgentsRemediation' | 'SelfNodeRemediation' | 'ManualApproval';
export const FENCING_PROOF_KINDS: readonly FencingProofKind[] = [
  'FenceAgentsRemediation',
  'SelfNodeRemediation',
  'ManualApproval',
];

export interface MasakariRemediationSpec {
  /** Default FenceAgentsRemediation. A fencing-approved-by annotation is accepted whatever this says. */
  fencingProof?: FencingProofKind;
  /** SelfNodeRemediation: a node whose SNR is older than this counts as rebooted even before SNR says so. */
  selfNodeRemediationSafeTimeSeconds?: number;
  /** Namespace of the FailoverSegment/HaHost; default the operator's namespace. */
  segmentNamespace?: string;
  /** From start to a finished notification; past it Succeeded=False/RemediationTimedOut. Default 1800. */
  recoveryTimeoutSeconds?: number;
  /** Force the nova-compute service down before notifying (Nova refuses to evacuate from an "up" host). Default true. */
  forceDownComputeService?: boolean;
}

export interface MasakariRemediationStatus {
  conditions?: Condition[];
  /** The Node being remediated (from the node-name annotation). */
  nodeName?: string;
  /** The Masakari host the Node maps to. */
  hostName?: string;
  /** metadata.name of the Notification in segmentNamespace. */
  notificationName?: string;
  notificationUuid?: string;
  /** When fencing was proven (also the notification's generated_time, so a retried create is a duplicate). */
  fencedAt?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface MasakariRemediation {
  apiVersion: string;
  kind: 'MasakariRemediation';
  metadata: ObjectMeta;
  spec?: MasakariRemediationSpec;
  status?: MasakariRemediationStatus;
}

export interface MasakariRemediationTemplate {
  apiVersion: string;
  kind: 'MasakariRemediationTemplate';
  metadata: ObjectMeta;
  spec: { template: { spec?: MasakariRemediationSpec } };
}

/** fence-agents-remediation.medik8s.io/v1alpha1 FenceAgentsRemediation: only what the fencing gate reads. */
export interface FenceAgentsRemediationLike {
  metadata: ObjectMeta;
  status?: { conditions?: Condition[] };
}

/** self-node-remediation.medik8s.io/v1alpha1 SelfNodeRemediation: only what the fencing gate reads. */
export interface SelfNodeRemediationLike {
  metadata: ObjectMeta;
  status?: { timeAssumedRebooted?: string; phase?: string; conditions?: Condition[] };
}

/** coordination.k8s.io/v1 Lease. */
export interface LeaseLike {
  metadata: ObjectMeta;
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number | null;
    acquireTime?: string | null;
    renewTime?: string | null;
  };
}

/** core/v1 Node: metadata, and the Ready condition (built-in detection, return to service). */
export interface NodeLike {
  metadata: ObjectMeta;
  status?: { conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> };
}
