// Texts only the admission webhook sends. Masakari's own texts (name taken,
// in use, unknown compute service) come from src/domain/messages.ts, so a
// kubectl user reads the same words a Masakari API client does.

/** Nova did not answer the host check (fail-closed: the write is refused). */
export const novaUnavailable = (host: string, detail: string) =>
  `Cannot check with Nova that compute service ${host} exists (${detail}); ` +
  'the host is refused until Nova answers. Try again later.';

/** No Nova configured for this operator: the host check cannot run. */
export const novaNotConfigured = (host: string) =>
  `Cannot check that compute service ${host} exists: this operator has no Nova configured.`;

/** Immutability, worded as the CRDs' CEL rules word it (the webhook repeats them for clusters without CEL). */
export const segmentRefImmutable = () => 'segmentRef is immutable; a host cannot move to another segment';
export const notificationSpecImmutable = () => 'spec is immutable; a notification cannot be changed once received';

/** The object in the review has no spec (the CRD schema requires one; only a malformed review gets here). */
export const missingSpec = (kind: string) => `${kind} has no spec`;

/** Warnings: the write is allowed, the reconciler will report the outcome in the Ready condition. */
export const segmentNotYetThere = (segment: string) =>
  `FailoverSegment ${segment} (spec.segmentRef) does not exist yet: the host stays Ready=False ` +
  '(SegmentNotFound) and invisible to the Masakari API until it does.';
export const notificationWillFail = (reason: string) =>
  `${reason} The engine ends this notification failed when it first looks at it (notifications_expired_interval).`;
export const notificationRefusedForGood = (message: string) =>
  `${message} The notification is refused (Ready=False HostOnMaintenance) and never processed, even after the host leaves maintenance; send a new one if a recovery is needed then.`;
export const notificationWillBeFlagged = (message: string) =>
  `${message} The notification stays Ready=False and is not processed until this is resolved.`;

/** An unexpected failure inside the webhook itself. */
export const internalError = () => 'masakari-operator webhook failed to validate the request; see its log.';
