// TypeScript shapes of the custom resources. The CRD schemas in crds/ are the
// authoritative contract; these types mirror them field for field.
//
// Split between spec and status: spec holds only what a person or a GitOps
// tool declares. Everything the system assigns (uuid, integer id, timestamps,
// notification state, progress, VM moves) lives in status or in metadata
// labels. See docs/design.md.

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.Condition */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type RecoveryMethod = 'auto' | 'reserved_host' | 'auto_priority' | 'rh_priority';
export type NotificationType = 'COMPUTE_HOST' | 'VM' | 'PROCESS';
export type NotificationStatus = 'new' | 'running' | 'error' | 'failed' | 'ignored' | 'finished';
export type VMoveStatus = 'pending' | 'ongoing' | 'ignored' | 'failed' | 'succeeded';
export type VMoveType = 'evacuation' | 'migration' | 'live_migration';

/** Status fields every kind shares: what the system assigned. */
export interface AssignedStatus {
  /** Masakari uuid (also in label masakari.openkeel.io/uuid). */
  uuid?: string;
  /** Masakari integer id (also in label masakari.openkeel.io/id). */
  id?: number;
  /** Masakari updated_at (ISO 8601, second precision, UTC); null until first update. */
  updatedAt?: string | null;
  /**
   * Masakari created_at, copied from metadata.creationTimestamp at admission:
   * a restore (Velero) re-creates the object with a new creationTimestamp
   * but writes status back, so created_at survives it.
   */
  createdAt?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

// ---------------------------------------------------------------- segment

export interface FailoverSegmentSpec {
  /** Masakari name: free text, 1..255 characters, unique among live segments of the namespace. */
  name: string;
  recoveryMethod: RecoveryMethod;
  /** Free text, 1..255. */
  serviceType: string;
  description?: string | null;
  /** Microversion 1.2 'enabled'; default true. */
  enabled?: boolean;
  /** OpenKeel extension: notifications from the API need proof of fencing (issue 5). */
  requireFencing?: boolean;
  /** OpenKeel extension (kubectl/GitOps only, not in the Masakari API): brakes on mass failure. */
  recoveryLimits?: RecoveryLimits;
  /** OpenKeel extension (kubectl/GitOps only): find failed hosts from Nova's service states and Nodes. */
  detection?: SegmentDetection;
  /** OpenKeel extension (kubectl/GitOps only): what happens when a recovered host comes back. */
  returnToService?: ReturnToService;
}

/** Built-in failure detection for a segment's hosts (src/detection/). Off unless enabled. */
export interface SegmentDetection {
  enabled: boolean;
  /** How long a host must stay down before a COMPUTE_HOST notification is raised; default 60. */
  gracePeriodSeconds?: number;
}

/**
 * Restore: once the host is back (BMC on, nova-compute reporting), clear forced_down, enable the
 * compute service and clear on_maintenance. LeaveDisabled (the default): leave it, with an Event.
 */
export interface ReturnToService {
  policy: 'Restore' | 'LeaveDisabled';
}

/**
 * A count (3) or a percentage of the segment's hosts ("40%"), as
 * NodeHealthCheck's maxUnhealthy; a percentage is rounded down.
 */
export type IntOrPercent = number | string;

/** Per-segment brakes on host recoveries (src/engine/gates/recovery-brake.ts). Unset: no limit, as Masakari. */
export interface RecoveryLimits {
  /** The most hosts of the segment admitted to host recovery and not back (on_maintenance cleared) at once. */
  maxUnhealthyHosts?: IntOrPercent;
  /** The most host recoveries of the segment running at once. */
  maxRecoveringHosts?: IntOrPercent;
}

export type FailoverSegmentStatus = AssignedStatus;

export interface FailoverSegment {
  apiVersion: string;
  kind: 'FailoverSegment';
  metadata: ObjectMeta;
  spec: FailoverSegmentSpec;
  status?: FailoverSegmentStatus;
}

// ---------------------------------------------------------------- host

export interface HaHostSpec {
  /**
   * Masakari host name = Nova compute service host; unique in the namespace.
   * 1..255 printable characters, no leading/trailing whitespace (Masakari's
   * host schema uses the free-text `name` type; only notification hostnames
   * are held to ^[a-zA-Z0-9-._]*$).
   */
  name: string;
  /** metadata.name of the FailoverSegment (same namespace). Immutable. */
  segmentRef: { name: string };
  /** ^[a-zA-Z0-9]*$, 0..255 (Masakari accepts the empty string). */
  type: string;
  /** Free text. */
  controlAttributes: string;
  /** Declared value; see HaHostStatus for the effective one. */
  reserved?: boolean;
  /** Declared value; see HaHostStatus for the effective one. */
  onMaintenance?: boolean;
  /** OpenKeel extension (kubectl/GitOps only): how the engine powers this host off before evacuating it. */
  fencing?: HostFencing;
}

/** A BMC the engine powers the host off through (src/fencing/bmc/). */
export interface HostFencing {
  driver: 'redfish' | 'ipmi';
  /** redfish: the BMC's base URL (https://10.0.0.5:8000); ipmi: host or host:port (lanplus). */
  address: string;
  /** redfish: the member id under /redfish/v1/Systems/. */
  systemId?: string;
  /** A Secret in the HaHost's namespace with keys username and password. */
  credentialsSecretRef: { name: string };
  /** redfish over https: a CA bundle (Secret key, default ca.crt) or no verification at all. */
  tls?: { caSecretRef?: { name: string; key?: string }; insecure?: boolean };
  /** Timeout of each BMC call; default 10. */
  timeoutSeconds?: number;
  /** How long to poll for PowerState Off after the power-off; default 60. */
  powerOffTimeoutSeconds?: number;
}

export interface HaHostStatus extends AssignedStatus {
  /** uuid of the segment, copied when the host is admitted. */
  segmentUuid?: string;
  /**
   * Effective flags. They are valid only while flagsGeneration equals
   * metadata.generation: a newer spec (a person's or GitOps' later intent)
   * overrides whatever the engine latched. The engine writes only here, never spec.
   */
  reserved?: boolean;
  onMaintenance?: boolean;
  flagsGeneration?: number;
}

export interface HaHost {
  apiVersion: string;
  kind: 'HaHost';
  metadata: ObjectMeta;
  spec: HaHostSpec;
  status?: HaHostStatus;
}

// ---------------------------------------------------------------- notification

export interface NotificationSpec {
  type: NotificationType;
  /** Masakari host name of the source host. */
  hostname: string;
  /** ISO 8601 as given by the sender (naive times are UTC). */
  generatedTime: string;
  /** Every value is a string (Masakari coerces). */
  payload: Record<string, string>;
}

export interface ProgressDetail {
  timestamp: string;
  progress: string;
  message: string;
}

export interface WorkflowTaskRecord {
  /** Task class name, e.g. DisableComputeServiceTask. */
  name: string;
  progress: number;
  progressDetails: ProgressDetail[];
  /** taskflow atom state: PENDING RUNNING SUCCESS FAILURE REVERTED ... */
  state: string;
  /** Which run of the notification (0-based) produced this entry. */
  run?: number;
}

export interface VMoveRecord {
  id: number;
  uuid: string;
  instanceUuid: string;
  instanceName: string | null;
  sourceHost: string | null;
  destHost: string | null;
  /** With microseconds, as the engine writes them. */
  startTime: string | null;
  endTime: string | null;
  type: VMoveType;
  status: VMoveStatus;
  message: string | null;
  createdAt: string;
  updatedAt: string | null;
  /** Which run of the notification created this move. */
  run?: number;
}

export interface NotificationStatusBlock extends AssignedStatus {
  /** Masakari notification status; absent means new. */
  phase?: NotificationStatus;
  message?: string | null;
  sourceHostUuid?: string;
  failoverSegmentUuid?: string;
  /** Number of engine runs so far (first run, retries, fallbacks). */
  runs?: number;
  recoveryWorkflowDetails?: WorkflowTaskRecord[];
  vmoves?: VMoveRecord[];
  /** Engine bookkeeping for crash-safe resumption (side effects in flight). */
  engine?: Record<string, unknown>;
  /** The engine's own power-off of the source host in this recovery, as its BMC confirmed it. */
  fencing?: FencingRecord;
  /**
   * Never stored: set on the in-process view of a sealed Notification whose
   * status the API server does not hold yet (src/store/admission/seal.ts), so
   * a status writer knows there is nothing to patch against.
   */
  admittedBySeal?: true;
}

export interface Notification {
  apiVersion: string;
  kind: 'Notification';
  metadata: ObjectMeta;
  spec: NotificationSpec;
  status?: NotificationStatusBlock;
}

/** Proof of a BMC fence, recorded on the Notification beside the FAR/SNR/manual proofs. */
export interface FencingRecord {
  driver: 'redfish' | 'ipmi';
  /** The BMC address (and system id for redfish). */
  bmc: string;
  /** When the power-off was sent. */
  poweredOffAt: string;
  /** When the BMC first reported the power state below. */
  confirmedAt: string;
  powerState: 'Off';
}

export type MasakariObject = FailoverSegment | HaHost | Notification;
