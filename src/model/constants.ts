// Names shared by every part of the operator: the API group, the kinds, and
// the labels/annotations that carry system-assigned metadata.

export const GROUP = 'masakari.openkeel.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const KINDS = {
  segment: { kind: 'FailoverSegment', plural: 'failoversegments', singular: 'failoversegment' },
  host: { kind: 'HaHost', plural: 'hahosts', singular: 'hahost' },
  notification: { kind: 'Notification', plural: 'notifications', singular: 'notification' },
  // Added for the Medik8s remediator (src/remediation/, src/model/remediation-constants.ts):
  // every CRD in crds/ has its kind here.
  remediation: { kind: 'MasakariRemediation', plural: 'masakariremediations', singular: 'masakariremediation' },
  remediationTemplate: {
    kind: 'MasakariRemediationTemplate',
    plural: 'masakariremediationtemplates',
    singular: 'masakariremediationtemplate',
  },
} as const;
export type KindKey = keyof typeof KINDS;

/** Labels (indexed by the API server, so lookups by them are cheap). */
export const LABELS = {
  /** Masakari uuid of the object (segment uuid, host uuid, notification_uuid). */
  uuid: `${GROUP}/uuid`,
  /** Masakari integer id of the object, as a decimal string. */
  id: `${GROUP}/id`,
  /** On HaHost and Notification: the uuid of the segment they belong to. */
  segmentUuid: `${GROUP}/segment-uuid`,
  /** On Notification: the uuid of the source host. */
  hostUuid: `${GROUP}/host-uuid`,
  /**
   * On a notification's duplicate claim (src/store/admission/duplicate-claim.ts) and journal pages
   * (src/store/journal-pages.ts): the uuid of the Notification they belong to.
   */
  notificationUuid: `${GROUP}/notification-uuid`,
  /** On internal bookkeeping ConfigMaps: what the object is for. */
  role: `${GROUP}/role`,
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const MANAGED_BY = 'masakari-operator';

/** Annotations the operator writes on its own objects. */
export const ANNOTATIONS = {
  /**
   * On Notification: the payload's key order as the sender wrote it (JSON
   * array). The API server stores maps with sorted keys; Masakari returns the
   * payload in the sender's order, so the facade restores it from here.
   */
  payloadOrder: `${GROUP}/payload-order`,
  /**
   * Added for `masakari-operator import` (src/cli/import/): on a FailoverSegment
   * or HaHost it created, the Masakari endpoint it was read from (no credentials).
   */
  importedFrom: `${GROUP}/imported-from`,
  /**
   * On an imported FailoverSegment or HaHost: Masakari's created_at (RFC 3339),
   * shown as the record's created_at instead of metadata.creationTimestamp.
   */
  createdAt: `${GROUP}/created-at`,
  /**
   * On a Notification the REST path created: an HMAC of its name, identity
   * labels and spec under the operator's admission key, which admits it
   * without a status write (src/store/admission/seal.ts).
   */
  admissionSeal: `${GROUP}/admission-seal`,
} as const;

/** Field managers used for every write, so server-side apply ownership is legible. */
export const FIELD_MANAGERS = {
  api: 'masakari-api',
  engine: 'masakari-engine',
  reconciler: 'masakari-reconciler',
  remediation: 'masakari-remediation',
  /** Added for `masakari-operator import` (src/store/import.ts): objects copied from a running Masakari. */
  import: 'masakari-import',
} as const;

export const FINALIZERS = {
  /** On FailoverSegment: its hosts are removed before the segment goes away. */
  segmentCascade: `${GROUP}/cascade-hosts`,
  /** On HaHost: the host's name claim is released. */
  hostCleanup: `${GROUP}/release-claims`,
} as const;

/** Condition types used on our objects (metav1.Condition conventions). */
export const CONDITIONS = {
  ready: 'Ready',
  // Added for kstatus (Flux health checks): set next to Ready=False by the
  // store reconcilers (src/reconcilers/admission.ts), absent once admitted.
  /** True while a refused object waits for another object (its segment or host). */
  reconciling: 'Reconciling',
  /** True when a refused object needs a person (name taken, invalid spec, ...). */
  stalled: 'Stalled',
  /**
   * On a Notification the engine does not start because of a brake on mass
   * failure (src/engine/gates/recovery-brake.ts): True while held, False once it
   * started or left new.
   */
  recoveryHeld: 'RecoveryHeld',
  /**
   * On a COMPUTE_HOST Notification whose source HaHost has spec.fencing: True
   * once the engine powered the host off through its BMC in this recovery and
   * the BMC confirmed it (status.fencing), False while a fence fails (the
   * reason says how: src/engine/gates/bmc-fence.ts BMC_FENCE_REASONS).
   */
  fencingVerified: 'FencingVerified',
} as const;
