// The engine works only on notifications it may run (src/domain/admitted.ts
// isRunnableNotification: the REST path or the kubectl-path reconciler wrote
// their uuid, source host and segment into status). The processor narrows a
// cached Notification once, at its entry, to this type, and everything
// downstream reads the narrowed fields without fallbacks.

import { isRunnableNotification } from '../../domain/admitted.ts';
import type { Notification, NotificationStatus, NotificationStatusBlock } from '../../model/types.ts';

export type AdmittedNotification = Notification & {
  metadata: Notification['metadata'] & { name: string };
  status: NotificationStatusBlock & { uuid: string; sourceHostUuid: string; failoverSegmentUuid: string };
};

/** Masakari's notification status; a notification without one is `new`. */
export const phaseOf = (n: Notification): NotificationStatus => n.status?.phase ?? 'new';

/**
 * The notification as the engine may process it, or undefined while it is not
 * admitted yet. Both admission paths write the three fields together (the
 * segment uuid may be empty; the segment lookup then fails with Masakari's
 * "could not be found" error, as before).
 */
export function admitted(n: Notification | undefined): AdmittedNotification | undefined {
  if (!n?.metadata.name || !isRunnableNotification(n) || typeof n.status?.failoverSegmentUuid !== 'string')
    return undefined;
  return n as AdmittedNotification;
}

/** The phases the expiry task turns into `failed` (Masakari's _check_expired_notifications). */
export const EXPIRABLE_PHASES: readonly NotificationStatus[] = ['new', 'running', 'error'];

/**
 * The object an engine status write of an admitted notification returned:
 * the engine never touches uuid, source host or segment, so it is admitted
 * still.
 */
export const writtenBack = (stored: Notification): AdmittedNotification => stored as AdmittedNotification;
