// Masakari's duplicate-notification rule, the pure part.
//
// Rule (masakari/ha/api.py _is_duplicate_notification): a new notification is
// a duplicate when a stored one has the same type, the same source host uuid,
// an identical payload, and generated_time >= new.generated_time - window,
// whatever its status. How the rule is made atomic across API replicas with
// one small claim per fingerprint is in intake.ts.
import { createHash } from 'node:crypto';
import { toEpochMicros } from '../time/format.ts';

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

/** Hex digits of the payload hash in fingerprintKey: 64 bits, so unequal payloads almost never share a key. */
const FINGERPRINT_HASH_DIGITS = 16;

/**
 * The cache index key of a notification's duplicate fingerprint (INDEX.fingerprint):
 * host uuid, type and a prefix of its payload hash. Equal keys are candidates
 * only; isDuplicateOf decides on the full hash and the times.
 */
export function fingerprintKey(hostUuid: string, type: string, hash: string): string {
  // Kept by the cache for every notification, so flattened: V8 would keep a
  // concatenation as a tree of its parts and a slice as a view of the whole
  // 64-digit hash, about 190 bytes a key instead of 80 (10 MiB at 100,000
  // notifications). normalize() returns the flat string (ASCII is normal).
  return `${hostUuid}/${type}/${hash.slice(0, FINGERPRINT_HASH_DIGITS)}`.normalize();
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
