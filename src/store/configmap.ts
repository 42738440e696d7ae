// The few ConfigMap fields the store's bookkeeping objects use
// (name claims, id sequences, notification duplicate claims, journal pages).
import type { ObjectMeta } from '../model/types.ts';

export interface ConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

/** Values of the masakari.openkeel.io/role label on bookkeeping ConfigMaps. */
export const ROLES = {
  nameClaim: 'name-claim',
  idSequence: 'id-sequence',
  notificationClaim: 'notification-claim',
  /** Recovery history of a Notification that does not fit its status (src/store/journal-pages.ts). */
  journalPage: 'notification-journal',
} as const;
