// When a custom resource is a Masakari object: the one home of "admitted" and
// the predicates next to it, so store, reconcilers, webhook and engine cannot
// drift apart. Admission (src/reconcilers/admission.ts, the REST path,
// import) writes the system-assigned identity to status in one status write;
// a reconciler that refuses an object flags it Ready=False with one of REASONS
// instead, and never writes ids.
import { CONDITIONS } from '../model/constants.ts';
import type { Condition, MasakariObject, Notification } from '../model/types.ts';

/** Condition reasons the store and its reconcilers set on Ready when they refuse an object. */
export const REASONS = {
  nameConflict: 'NameConflict',
  segmentNotFound: 'SegmentNotFound',
  hostNotFound: 'HostNotFound',
  hostOnMaintenance: 'HostOnMaintenance',
  duplicate: 'DuplicateNotification',
  invalidSpec: 'InvalidSpec',
} as const;

export function readyCondition(obj: MasakariObject): Condition | undefined {
  return obj.status?.conditions?.find((c) => c.type === CONDITIONS.ready);
}

const REFUSALS = new Set<string>(Object.values(REASONS));

/**
 * Flagged by a reconciler: Ready=False with one of the admission refusals of
 * REASONS. A Notification whose recovery failed is Ready=False too (its
 * outcome, src/store/conditions.ts) but stays a Masakari notification.
 */
export function isRefused(obj: MasakariObject): boolean {
  const ready = readyCondition(obj);
  return ready?.status === 'False' && REFUSALS.has(ready.reason);
}

/**
 * Admitted, i.e. visible through the Masakari API: the system has assigned
 * its uuid and id (status, which a kubectl author cannot set on create), it
 * is not being deleted, and no reconciler has flagged it (Ready=False
 * NameConflict, SegmentNotFound, HostNotFound, ...). A CR that lost its name
 * claim never had an id written to status, so it can never be listed.
 */
export function isAdmitted(obj: MasakariObject): boolean {
  if (obj.metadata.deletionTimestamp) return false;
  if (typeof obj.status?.id !== 'number' || !obj.status.uuid) return false;
  return !isRefused(obj);
}

/**
 * The admission of a Notification is written in full (ids, source host and
 * Ready): the kubectl-path reconciler has nothing left to do for it, whatever
 * happens to it later (deletion, a failed recovery).
 */
export function isAdmittedNotification(n: Notification): boolean {
  return (
    !!n.status?.uuid && typeof n.status.id === 'number' && !!n.status.sourceHostUuid && readyCondition(n) !== undefined
  );
}

/**
 * The engine may run the notification's recovery: status names it (uuid) and
 * its source host. Deletion is handled by the engine itself (it still has to
 * finish or hand over a run of a notification being deleted).
 */
export function isRunnableNotification(n: Notification): boolean {
  return Boolean(n.status?.uuid && n.status.sourceHostUuid);
}
