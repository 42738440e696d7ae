// The duplicate claim as stored: its ConfigMap's name and data, read alike by
// the intake (duplicate-claim.ts), a sealed notification's standing
// (standing.ts) and the claims' lifetime (claim-lifetime.ts).
import type { ConfigMap } from '../configmap.ts';
import { notificationClaimName } from '../names.ts';
import { toEpochMicros } from '../../time/format.ts';

/** Claims are kept at least this long after their last accept, whatever the window (the cache covers older ones). */
export const CLAIM_MIN_AGE_MS = 600_000;

export interface ClaimData {
  generatedTime: string;
  notification: string;
  uuid: string;
  /** When the holder was accepted (ms since the epoch, this writer's clock): pendingMs and the sweep count from it. */
  acceptedAt: number;
}

export const dataOf = (c: ConfigMap): ClaimData => ({
  generatedTime: c.data?.generatedTime ?? '',
  notification: c.data?.notification ?? '',
  uuid: c.data?.uuid ?? '',
  acceptedAt: Number(c.data?.acceptedAt ?? Date.parse(c.metadata.creationTimestamp ?? '')),
});

/** The claim a notification's fingerprint is decided by (intake, retention and purge alike). */
export function claimNameFor(type: string, hostUuid: string, hash: string, generatedTime: string): string {
  // An unparseable time cannot be ordered against others: it gets a claim of its own exact text.
  const exactText = toEpochMicros(generatedTime) === undefined ? generatedTime : undefined;
  return notificationClaimName(type, hostUuid, hash, exactText);
}
