// Masakari's duplicate-notification rule, the pure part.
//
// Rule (masakari/ha/api.py _is_duplicate_notification): a new notification is
// a duplicate when a stored one has the same type, the same source host uuid,
// an identical payload, and generated_time >= new.generated_time - window,
// whatever its status. How the rule is made atomic across API replicas with
// one small claim per fingerprint is in duplicate-claim.ts.
import { hash } from 'node:crypto';
import { toEpochMicros } from '../../time/format.ts';

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

// One-shot crypto.hash: no Hash object per call. The cache hashes every
// notification it files (100,000 in one loop at start-up), so what each call
// allocates is what that loop leaves for the garbage collector.
export function payloadHash(payload: Record<string, string>): string {
  return hash('sha256', canonicalJson(payload), 'hex');
}

/**
 * Recently hashed cached payloads. Bounded, not one entry per cached payload:
 * a VM payload names its instance, so a hash kept for each would grow with
 * the stored notifications; the repeats worth catching are close together.
 */
const RECENT_HASHES_LIMIT = 4_096;
const recentHashes = new Map<Record<string, string>, string>();

/**
 * payloadHash of a cached payload, once per payload object while it is
 * recent: the cache files a notification again on every status write (its
 * old and new version share the payload object, as equal payloads do,
 * slim-notification.ts). Only for cached objects, never changed in place.
 */
export function cachedPayloadHash(payload: Record<string, string>): string {
  let h = recentHashes.get(payload);
  if (h === undefined) {
    h = payloadHash(payload);
    if (recentHashes.size >= RECENT_HASHES_LIMIT) recentHashes.clear();
    recentHashes.set(payload, h);
  }
  return h;
}

/** Characters of fingerprintKey: 72 bits of base64url, so unequal fingerprints almost never share a key. */
const FINGERPRINT_KEY_CHARS = 12;

/**
 * The cache index key of a notification's duplicate fingerprint (INDEX.fingerprint):
 * a digest of host uuid, type and payload hash. Equal keys are candidates
 * only; the duplicate check compares the host, and isDuplicateOf the type,
 * the full hash and the times. Kept by the cache for every notification, so
 * short and flat: V8 would keep a concatenation as a tree of its parts and a
 * long slice as a view of its whole source (a host/type/hash text was several
 * times this digest's size per key).
 * normalize() returns the flat string (ASCII is normal).
 */
export function fingerprintKey(hostUuid: string, type: string, payloadDigest: string): string {
  return hash('sha256', `${hostUuid}/${type}/${payloadDigest}`, 'base64url')
    .slice(0, FINGERPRINT_KEY_CHARS)
    .normalize();
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
