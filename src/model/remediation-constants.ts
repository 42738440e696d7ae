// Names of the Medik8s remediator (src/remediation/): our two kinds, the
// annotations NodeHealthCheck sets and reads, and the condition types and
// reasons we report (the resources, ours and those of the other Medik8s
// operators we read as proof of fencing, are REMEDIATION_RESOURCES in
// src/k8s/resources.ts). Reasons are free-form for NHC (it reads only type and
// status); they are the vocabulary people grep for. See docs/medik8s.md.
import { GROUP, KINDS } from './constants.ts';

export const REMEDIATION_KINDS = {
  template: KINDS.remediationTemplate,
  remediation: KINDS.remediation,
} as const;

/** Annotations of the Medik8s external-remediation contract (set by NodeHealthCheck). */
export const MEDIK8S_ANNOTATIONS = {
  /** On the remediation CR: the node to remediate (the name may be generateName'd). */
  nodeName: 'remediation.medik8s.io/node-name',
  /** On the remediation CR: the template NHC generated it from. */
  templateName: 'remediation.medik8s.io/template-name',
  /** On the remediation CR: NHC gave up on this step (RFC 3339 time); stop starting new work. */
  nhcTimedOut: 'remediation.medik8s.io/nhc-timed-out',
  /** On a template: NHC may use several templates of this kind (CRs are then generateName'd). */
  multipleTemplatesSupport: 'remediation.medik8s.io/multiple-templates-support',
} as const;

/** Labels of the Medik8s contract (github.com/medik8s/common pkg/labels). */
export const MEDIK8S_LABELS = {
  /**
   * On a Node, value "true": do not remediate it. NHC creates no new
   * remediation for such a node; SNR leaves one it already has alone while
   * the label is set, and so do we (nothing forced down, nothing filed).
   */
  excludeFromRemediation: 'remediation.medik8s.io/exclude-from-remediation',
} as const;

/** Our own annotations. */
export const REMEDIATION_ANNOTATIONS = {
  /** On a Node: the Masakari host (HaHost spec.name) it runs; default the Node's name. */
  computeHost: `${GROUP}/compute-host`,
  /**
   * On a MasakariRemediation (or, for the API path, a Notification): a person
   * vouches that the node is fenced. The value says who; it is recorded in an
   * Event and in the FencingVerified condition.
   */
  fencingApprovedBy: `${GROUP}/fencing-approved-by`,
  /**
   * On a Notification: a person lets this one recovery pass the brakes on
   * mass failure (FailoverSegment spec.recoveryLimits, the global cap), not
   * the fencing gate. The value says who; it is recorded in the RecoveryHeld
   * condition and an Event.
   */
  recoveryReleasedBy: `${GROUP}/recovery-released-by`,
} as const;

export const REMEDIATION_FINALIZER = `${GROUP}/remediation`;

/** The medik8s node Lease: NHC and Node Maintenance coordinate through it. */
export const MEDIK8S_LEASE_NAMESPACE = 'medik8s-leases';
export const medik8sLeaseName = (node: string): string => `node-${node}`;
/**
 * Holder identities of the health checks that create remediation CRs: NHC's
 * NodeHealthCheck controller takes the lease as "NodeHealthCheck-<name>", its
 * MachineHealthCheck controller (Machine API clusters, same templates) as
 * "MachineHealthCheck-<name>". Such a holder is our creator, not a competitor.
 */
export const HEALTH_CHECK_LEASE_HOLDER_PREFIXES = ['NodeHealthCheck-', 'MachineHealthCheck-'] as const;

/** The FAR condition that proves the fence agent ran successfully. */
export const FAR_FENCED_CONDITION = 'FenceAgentActionSucceeded';

export const REMEDIATION_CONDITIONS = {
  /** Read by NodeHealthCheck: False escalates to the next template, True ends the step. */
  succeeded: 'Succeeded',
  /** Medik8s contract: True while we work, False once finished or aborted. */
  processing: 'Processing',
  /** Ours: the node is proven fenced (reason says by what); the API-path gate reads it too. */
  fencingVerified: 'FencingVerified',
} as const;

export const REMEDIATION_REASONS = {
  started: 'RemediationStarted',
  fencingVerified: 'FencingVerified',
  waitingForFencing: 'WaitingForFencing',
  nodeMappingAmbiguous: 'NodeMappingAmbiguous',
  nodeLeaseHeld: 'NodeLeaseHeld',
  /** The remediator may not read the node's medik8s lease: held, since a maintenance cannot be ruled out. */
  nodeLeaseUnreadable: 'NodeLeaseUnreadable',
  nodeExcluded: 'NodeExcludedFromRemediation',
  fencedByFenceAgent: 'FenceAgentActionSucceeded',
  fencedBySelfNodeRemediation: 'SelfNodeRemediationAssumedRebooted',
  fencedByManualApproval: 'ManualApproval',
  notificationCreated: 'NotificationCreated',
  notificationAdopted: 'NotificationAdopted',
  recoveryInProgress: 'RecoveryInProgress',
  finished: 'RemediationFinishedSuccessfully',
  notificationIgnored: 'NotificationIgnored',
  recoveryFailed: 'RecoveryFailed',
  recoveryError: 'RecoveryError',
  notificationDeleted: 'NotificationDeleted',
  timedOut: 'RemediationTimedOut',
  timeoutByNhc: 'RemediationTimeoutByNHC',
  nodeNotFound: 'RemediationSkippedNodeNotFound',
  hostNotFound: 'HostNotFound',
  hostOnMaintenance: 'HostOnMaintenance',
  notificationRejected: 'NotificationRejected',
  computeServiceNotFound: 'ComputeServiceNotFound',
  computeServiceForceDownFailed: 'ComputeServiceForceDownFailed',
} as const;
export type RemediationReason = (typeof REMEDIATION_REASONS)[keyof typeof REMEDIATION_REASONS];

/** Spec defaults (the CRD applies the same ones; these cover objects written before a default existed). */
export const REMEDIATION_DEFAULTS = {
  fencingProof: 'FenceAgentsRemediation',
  recoveryTimeoutSeconds: 1800,
  forceDownComputeService: true,
} as const;

/** Event messages carry this prefix, as Medik8s remediators do. */
export const EVENT_PREFIX = '[remediation]';

/** Lease held by the replica that runs the remediation controller. */
export const REMEDIATION_LEASE_NAME = 'masakari-remediation';
export const REMEDIATION_CONTROLLER_NAME = 'masakari-remediation';
