// How long a notification's duplicate claim (duplicate-claim.ts) lives: the sweeper
// removes claims not accepted into for max(window, CLAIM_MIN_AGE_MS), and
// retention and purge remove a notification's claim with it.
import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { listAllPages } from '../../k8s/list-pages.ts';
import { getIfExists } from '../../k8s/get-if-exists.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { LABELS } from '../../model/constants.ts';
import type { Notification } from '../../model/types.ts';
import type { ConfigMap } from '../configmap.ts';
import { deleteExactly, ROLES } from '../configmap.ts';
import { payloadHash } from './fingerprints.ts';
import { CLAIM_MIN_AGE_MS, claimNameFor, dataOf } from './claim-record.ts';

/**
 * Removes claims not accepted into for max(their window, CLAIM_MIN_AGE_MS):
 * by then their holder is in every replica's cache. Claims of the earlier
 * per-bucket protocol (no acceptedAt) count from their creation. Lists in
 * pages; returns how many were removed. The store reconcilers run this
 * periodically (leader only).
 */
export async function sweepNotificationClaims(
  kube: KubeClient,
  namespace: string,
  now: Date,
  log: Logger,
): Promise<number> {
  const expired = (claim: ConfigMap): boolean => {
    const { acceptedAt } = dataOf(claim);
    const windowMs = Number(claim.data?.window ?? 0) * 1000;
    const keepMs = Math.max(Number.isFinite(windowMs) ? windowMs : 0, CLAIM_MIN_AGE_MS);
    return Number.isNaN(acceptedAt) || now.getTime() - acceptedAt > keepMs;
  };
  // A storm leaves tens of thousands of claims: only the expired ones are kept from the list, by name and version.
  const list = await listAllPages<ConfigMap>(
    kube,
    RESOURCES.configMaps,
    namespace,
    { labelSelector: `${LABELS.role}=${ROLES.notificationClaim}` },
    undefined,
    (claim) => (expired(claim) ? nameAndVersion(claim) : undefined),
  );
  let removed = 0;
  for (const claim of list.items) {
    if (await deleteExactly(kube, namespace, claim)) removed++;
  }
  if (removed) log.debug({ removed }, 'removed expired notification claims');
  return removed;
}

/**
 * Removes the claim whose holder is `n` (retention, purge), if it still is:
 * its name follows from the notification, and its data must name `n` (a
 * later notification of the same fingerprint may hold it by now). Older
 * notifications of the fingerprint are in the cache, so nothing is lost.
 */
export async function deleteClaimOf(kube: KubeClient, namespace: string, n: Notification): Promise<void> {
  const hostUuid = n.status?.sourceHostUuid ?? n.metadata.labels?.[LABELS.hostUuid];
  if (!hostUuid) return;
  const name = claimNameFor(n.spec.type, hostUuid, payloadHash(n.spec.payload), n.spec.generatedTime);
  const claim = await getIfExists<ConfigMap>(kube, RESOURCES.configMaps, namespace, name);
  if (!claim || claim.data?.notification !== n.metadata.name) return;
  await deleteExactly(kube, namespace, claim);
}

/** A claim reduced to what a conditional delete needs (deleteExactly). */
function nameAndVersion(claim: ConfigMap): ConfigMap {
  const { name, resourceVersion } = claim.metadata;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion } };
}
