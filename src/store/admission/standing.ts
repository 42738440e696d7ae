// The intake protocol's end for a notification the REST path created sealed
// (seal.ts): where it stands with its duplicate claim (duplicate-claim.ts)
// while the engine has not written its status yet, and the delete of one that
// yielded. Sealed visibility (visibility.ts) and the engine ask this.
import type { KubeClient } from '../../k8s/client.ts';
import { isConflict, isNotFound } from '../../k8s/client.ts';
import { getIfExists } from '../../k8s/get-if-exists.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification } from '../../model/types.ts';
import { notificationHostUuids } from '../caches.ts';
import type { ConfigMap } from '../configmap.ts';
import { isDuplicateOf, payloadHash } from './fingerprints.ts';
import { claimNameFor, dataOf } from './claim-record.ts';

/** Where a sealed notification stands with its duplicate claim (sealedIntakeStanding). */
export type Standing = 'accepted' | 'yielded' | 'undecided';

/** A sealed notification without its claim is taken as accepted after this long (the claim was swept, or never written). */
export const SEALED_CLAIM_GRACE_MS = 10_000;

/** Is `n` younger than SEALED_CLAIM_GRACE_MS (by its creationTimestamp), so its claim may still be on its way? */
export function withinSealedClaimGrace(n: Notification, now: Date): boolean {
  const age = now.getTime() - Date.parse(n.metadata.creationTimestamp ?? '');
  return !Number.isNaN(age) && age < SEALED_CLAIM_GRACE_MS;
}

/**
 * Where a notification the REST path created sealed (src/store/admission/seal.ts)
 * stands with its duplicate claim. The REST path creates it alongside the claim
 * and deletes it again when the claim makes it a duplicate, so until the engine
 * has written its status, its seal alone does not say it was accepted. The
 * engine asks this before it runs one:
 *   - 'accepted': the claim names it; or names a notification it is more
 *     than the window older than (it was accepted before that one); or, once
 *     it is older than SEALED_CLAIM_GRACE_MS, there is no claim (swept long
 *     after its accept, or its creator died before the claim was sent: a retry
 *     of that POST meets it in the cache and is the duplicate) or the claim
 *     names one it is more than the window newer than (its creator died
 *     before its compare-and-swap of the claim);
 *   - 'yielded': the claim names another notification within its window
 *     (Masakari's rule, isDuplicateOf, both ways): its creator lost the race,
 *     and it must not run;
 *   - 'undecided': younger than the grace, with no claim yet or a claim its
 *     own compare-and-swap has still to replace.
 */
export async function sealedIntakeStanding(
  kube: KubeClient,
  namespace: string,
  n: Notification,
  windowSeconds: number,
  now: Date,
): Promise<Standing> {
  const hostUuid = notificationHostUuids(n)[0] ?? '';
  const hash = payloadHash(n.spec.payload ?? {});
  const claimName = claimNameFor(n.spec.type, hostUuid, hash, n.spec.generatedTime);
  const claim = await getIfExists<ConfigMap>(kube, RESOURCES.configMaps, namespace, claimName);
  const young = withinSealedClaimGrace(n, now);
  if (!claim) return young ? 'undecided' : 'accepted';
  const holder = dataOf(claim);
  if (holder.notification === n.metadata.name) return 'accepted';
  const mine = { type: n.spec.type, payloadHash: hash, generatedTime: n.spec.generatedTime };
  const theirs = { ...mine, generatedTime: holder.generatedTime };
  // More than the window older than the holder: accepted before it (the register only moves forward).
  if (!isDuplicateOf(theirs, mine, windowSeconds)) return 'accepted';
  // Inside the holder's window: the holder won the race it lost.
  if (isDuplicateOf(mine, theirs, windowSeconds)) return 'yielded';
  // More than the window newer: its own compare-and-swap of the claim is in flight (or its creator died).
  return young ? 'undecided' : 'accepted';
}

/**
 * Deletes a Notification whose claim yielded to another (a duplicate that
 * lost the race, never shown): its creator does at once
 * (notification-intake.ts deleteYielded), the engine when it meets one whose creator
 * did not (notification-processor.ts sealedIntake). Only that object (uid
 * precondition); already gone or replaced counts as done.
 */
export async function deleteYieldedNotification(kube: KubeClient, namespace: string, n: Notification): Promise<void> {
  try {
    await kube.delete(RESOURCES.notifications, namespace, n.metadata.name ?? '', {
      preconditionUid: n.metadata.uid,
    });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}
