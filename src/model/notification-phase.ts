// Which notifications are still being worked on. Masakari's terminal
// statuses are finished, failed and ignored (masakari/objects/fields.py
// NotificationStatus); new, running and error are unfinished (error gets one
// retry from the periodic task). A notification without status.phase has not
// been admitted yet and counts as new.
import type { Notification, NotificationStatus } from './types.ts';

/** Phases a notification never leaves by itself (the only ones retention and purge delete). */
export const FINISHED_PHASES: readonly NotificationStatus[] = ['finished', 'failed', 'ignored'];

export const phaseOfNotification = (n: Notification): NotificationStatus => n.status?.phase ?? 'new';

export const isUnfinishedNotification = (n: Notification): boolean => !FINISHED_PHASES.includes(phaseOfNotification(n));

/**
 * The API-server twin of isUnfinishedNotification, on the CRD's selectable
 * field .status.phase. An object without the field matches (its value is the
 * empty string), and the watch sends DELETED when one stops matching.
 */
export const UNFINISHED_FIELD_SELECTOR = FINISHED_PHASES.map((p) => `status.phase!=${p}`).join(',');
