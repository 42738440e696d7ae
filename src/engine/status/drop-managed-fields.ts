// An ended notification (finished, failed or ignored) is never written again:
// only retention deletes it. From then on its metadata.managedFields (the
// API server's record of which manager set which field) serve no one, yet
// they are about half of the stored object's JSON values (a host
// notification: 59 of 104), and every stored notification pays for them:
// etcd keeps them, kube-apiserver holds them decoded in its watch cache, and
// decodes them again on every list from etcd, including its watch-cache
// consistency check, which lists every object of the resource every 5 to 7.5
// minutes (docs/operations.md, "Many stored notifications"). So once the
// final status is written the engine drops them with one metadata patch.
//
// Not when someone applies the notification server-side (GitOps): the
// appliers' entries are what their next apply and diff compare against, and
// dropping them would make that apply write the object again.

import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { isConflict, isNotFound } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { FIELD_MANAGERS } from '../../model/constants.ts';
import { isUnfinishedNotification } from '../../model/notification-phase.ts';
import type { Notification } from '../../model/types.ts';

interface ManagedFieldsEntry {
  operation?: string;
}

/** Does the object as stored carry managedFields that nobody's server-side apply needs? */
export function managedFieldsDroppable(n: Notification): boolean {
  const entries = (n.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  // Masakari's terminal statuses: the engine never writes the notification again.
  if (isUnfinishedNotification(n)) return false;
  return entries.length > 0 && !entries.some((e) => e.operation === 'Apply');
}

/**
 * Drops the managedFields of an ended notification, as stored in `n` (the
 * answer to its final status write). Kubernetes' documented reset: a
 * managedFields of one empty entry, in a write that changes nothing else,
 * leaves none. Conditional on n's resourceVersion, so a write in between
 * (someone labelling it) keeps its record. Best effort: a failure is logged,
 * and the object stays as it was.
 */
export async function dropManagedFields(
  kube: KubeClient,
  namespace: string,
  n: Notification,
  log: Logger,
): Promise<void> {
  if (!managedFieldsDroppable(n)) return;
  const name = n.metadata.name ?? '';
  try {
    await kube.mergePatch(
      RESOURCES.notifications,
      namespace,
      name,
      { metadata: { managedFields: [{}], resourceVersion: n.metadata.resourceVersion } },
      { fieldManager: FIELD_MANAGERS.engine },
    );
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return; // written or deleted meanwhile: nothing of ours to tidy
    log.warn({ err, notification: name }, 'could not drop the managedFields of an ended notification');
  }
}
