// Masakari's duplicate-notification rule, made atomic.
//
// Rule (masakari/ha/api.py _is_duplicate_notification): a new notification is
// a duplicate when a stored one has the same type, the same source host uuid,
// an identical payload, and generated_time >= new.generated_time - window,
// whatever its status. A sliding window cannot become a deterministic object
// name, so creators of one host's notifications serialise on a per-host
// ConfigMap instead: each appends its fingerprint with a resourceVersion-
// checked update; a concurrent creator gets 409, re-reads, and re-checks.
// This file holds the pure part (matching, pruning, encoding).
import { createHash } from 'node:crypto';
import { toEpochMicros } from './time.ts';

export interface Fingerprint {
  type: string;
  /** sha256 of the canonical JSON of the payload. */
  payloadHash: string;
  generatedTime: string;
  /** metadata.name of the Notification this fingerprint stands for. */
  name: string;
  uuid: string;
  /** When the fingerprint was written (RFC 3339, this process's clock). */
  recordedAt: string;
}

export interface FingerprintBook {
  /** Largest duplicate window (seconds) any writer has used: pruning keeps at least this much history. */
  maxWindowSeconds: number;
  entries: Fingerprint[];
}

/** JSON with object keys sorted at every level, so equal payloads hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function payloadHash(payload: Record<string, string>): string {
  return createHash('sha256').update(canonicalJson(payload), 'utf8').digest('hex');
}

export interface Candidate {
  type: string;
  payloadHash: string;
  generatedTime: string;
}

/** Does `existing` make `candidate` a duplicate under Masakari's rule? */
export function isDuplicateOf(candidate: Candidate, existing: Candidate, windowSeconds: number): boolean {
  if (candidate.type !== existing.type || candidate.payloadHash !== existing.payloadHash) return false;
  const newAt = toEpochMicros(candidate.generatedTime);
  const oldAt = toEpochMicros(existing.generatedTime);
  // Unparseable times cannot be ordered: count them as inside the window (the safe side is a 409).
  if (newAt === undefined || oldAt === undefined) return true;
  return oldAt >= newAt - BigInt(Math.round(windowSeconds * 1e6));
}

export function findDuplicate(
  book: FingerprintBook,
  candidate: Candidate,
  windowSeconds: number,
): Fingerprint | undefined {
  return book.entries.find((e) => isDuplicateOf(candidate, e, windowSeconds));
}

/**
 * Minimum time a fingerprint is kept after it was written, whatever the
 * window. Older notifications are checked through the informer cache (every
 * replica has long since seen them), so the book only needs to cover writes
 * that may still be in flight or not yet watched.
 */
export const MIN_RETENTION_SECONDS = 600;

/**
 * Hard cap on a book's entries (about 250 bytes each, far below a
 * ConfigMap's 1 MiB) against a flood of distinct notifications from one
 * host; the oldest go first, and those are already in every cache.
 */
export const MAX_BOOK_ENTRIES = 2000;

/**
 * Drops fingerprints written longer ago than the retention: the largest window
 * ever used, and at least MIN_RETENTION_SECONDS. Pruning uses the WRITE time,
 * not generated_time, because a new notification may carry any generated_time
 * (the sender's clock), so no generated_time is ever safely "too old".
 */
export function prune(book: FingerprintBook, now: Date): FingerprintBook {
  const keepMs = Math.max(book.maxWindowSeconds, MIN_RETENTION_SECONDS) * 1000;
  const entries = book.entries.filter((e) => {
    const at = Date.parse(e.recordedAt);
    return Number.isNaN(at) || now.getTime() - at <= keepMs;
  });
  return { ...book, entries: entries.slice(-MAX_BOOK_ENTRIES) };
}

export const FINGERPRINTS_KEY = 'fingerprints.json';

export function decodeBook(data: Record<string, string> | undefined): FingerprintBook {
  const raw = data?.[FINGERPRINTS_KEY];
  if (!raw) return { maxWindowSeconds: 0, entries: [] };
  try {
    const parsed = JSON.parse(raw) as Partial<FingerprintBook>;
    return {
      maxWindowSeconds: typeof parsed.maxWindowSeconds === 'number' ? parsed.maxWindowSeconds : 0,
      entries: Array.isArray(parsed.entries) ? parsed.entries : [],
    };
  } catch {
    // A hand-edited, unreadable book is replaced on the next write; the cache check still applies meanwhile.
    return { maxWindowSeconds: 0, entries: [] };
  }
}

export function encodeBook(book: FingerprintBook): Record<string, string> {
  return { [FINGERPRINTS_KEY]: JSON.stringify(book) };
}
