// Atomic duplicate detection for one notification: append its fingerprint
// to the source host's book with a compare-and-swap, or find the fingerprint
// that makes it a duplicate. Used by the REST create path (repository.ts) and
// by the reconciler that admits kubectl-created Notifications, so both paths
// serialise on the same per-host object.
import type { KubeClient } from '../k8s/client.ts';
import type { HaHost, Notification } from '../model/types.ts';
import { isRefused } from './mapping.ts';
import { readBook, writeBook, type BookVersion } from './fingerprint-book.ts';
import type { Candidate, Fingerprint, FingerprintBook } from './fingerprints.ts';
import { decodeBook, isDuplicateOf, payloadHash, prune } from './fingerprints.ts';
import { nowRfc3339 } from './time.ts';

/** Attempts to append to a host's book; each conflict means another notification of that host got in first. */
const MAX_BOOK_ATTEMPTS = 200;

export type IntakeOutcome =
  /** Our fingerprint is in the book: create the Notification under its name. */
  | { kind: 'reserved'; entry: Fingerprint }
  /** An existing Notification makes ours a duplicate. */
  | { kind: 'duplicate'; of: Fingerprint }
  /** A fingerprint inside the window points at a Notification that does not exist yet: its creator crashed or is in flight. */
  | { kind: 'pending'; of: Fingerprint };

export interface IntakeRequest {
  kube: KubeClient;
  namespace: string;
  host: HaHost;
  hostUuid: string;
  candidate: Candidate;
  windowSeconds: number;
  /** Name and uuid our Notification has (or will have). */
  name: string;
  uuid: string;
  /** Does a Notification with this metadata.name exist? (cache first, then the API server) */
  exists: (name: string) => Promise<boolean>;
  /** Past this age a fingerprint without its Notification means "deleted", not "pending". */
  pendingMs: number;
  now: () => Date;
}

/**
 * The last version of each host's book this process wrote. The first attempt
 * of the next intake for that host starts from it instead of reading the book
 * again, saving a round trip; this is safe because the write is a
 * compare-and-swap: if anyone wrote the book since, the write fails with a
 * conflict and the next attempt reads it fresh.
 */
const lastWritten = new Map<string, BookVersion>();
const LAST_WRITTEN_MAX = 10_000;

export async function reserveFingerprint(req: IntakeRequest): Promise<IntakeOutcome> {
  const { kube, namespace, host, hostUuid, candidate, windowSeconds } = req;
  const cacheKey = `${namespace}/${hostUuid}`;
  for (let attempt = 1; attempt <= MAX_BOOK_ATTEMPTS; attempt++) {
    // First attempt without a read: from the version we last wrote, or — for a
    // host we have not written yet — assuming it has no book (most hosts get
    // their first notification here). A wrong guess only costs the failed
    // compare-and-swap; the next attempt reads the book.
    const cached = attempt === 1 ? (lastWritten.get(cacheKey) ?? { book: decodeBook(undefined) }) : undefined;
    lastWritten.delete(cacheKey);
    const base = cached ?? (await readBook(kube, namespace, hostUuid));
    const now = req.now();
    const mine = base.book.entries.find((e) => e.name === req.name);
    if (mine) return { kind: 'reserved', entry: mine };
    let entries = base.book.entries;
    for (const match of entries.filter((e) => isDuplicateOf(candidate, e, windowSeconds))) {
      if (await req.exists(match.name)) return { kind: 'duplicate', of: match };
      const age = now.getTime() - Date.parse(match.recordedAt);
      if (!(age > req.pendingMs)) return { kind: 'pending', of: match };
      // Older than any retry of its creator: that notification was deleted and no longer counts.
      entries = entries.filter((e) => e !== match);
    }
    const entry: Fingerprint = { ...candidate, name: req.name, uuid: req.uuid, recordedAt: nowRfc3339(now) };
    const book: FingerprintBook = prune(
      { maxWindowSeconds: Math.max(base.book.maxWindowSeconds, windowSeconds), entries: [...entries, entry] },
      now,
    );
    const written = await writeBook(kube, namespace, host, hostUuid, base, book);
    if (written) {
      if (lastWritten.size >= LAST_WRITTEN_MAX) lastWritten.clear();
      lastWritten.set(cacheKey, written);
      return { kind: 'reserved', entry };
    }
    if (attempt > 3) await jitter(attempt);
  }
  throw new Error(
    `notification intake for host ${host.spec.name}: ${MAX_BOOK_ATTEMPTS} conflicting writes of its fingerprint book`,
  );
}

/**
 * The same rule against stored Notifications of the host (the informer
 * cache): covers history older than the book's retention. Notifications
 * being deleted or flagged Ready=False do not count; neither does `self`.
 */
export function findCachedDuplicate(
  hostNotifications: Notification[],
  candidate: Candidate,
  windowSeconds: number,
  self?: string,
): Notification | undefined {
  return hostNotifications.find(
    (o) =>
      o.metadata.name !== self &&
      !o.metadata.deletionTimestamp &&
      !isRefused(o) &&
      isDuplicateOf(
        candidate,
        { type: o.spec.type, payloadHash: payloadHash(o.spec.payload), generatedTime: o.spec.generatedTime },
        windowSeconds,
      ),
  );
}

/** Spreads retries on a hot book so N writers do not collide in lockstep (only after a few conflicts). */
function jitter(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(100, attempt * 5);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
