// The few ConfigMap fields the store's bookkeeping objects use
// (name claims, id sequences, notification duplicate claims, journal pages).
import type { KubeClient } from '../k8s/client.ts';
import { isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
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

/** Deletes exactly the version we looked at; true when it is gone, false when it changed meanwhile. */
export async function deleteExactly(kube: KubeClient, namespace: string, claim: ConfigMap): Promise<boolean> {
  try {
    await kube.delete(RESOURCES.configMaps, namespace, claim.metadata.name ?? '', {
      preconditionResourceVersion: claim.metadata.resourceVersion,
    });
    return true;
  } catch (e) {
    if (isNotFound(e)) return true;
    if (isConflict(e)) return false;
    throw e;
  }
}
