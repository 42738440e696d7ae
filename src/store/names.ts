// How the store names the Kubernetes objects it creates. Every name is a
// valid DNS-1123 subdomain (lowercase alphanumerics and '-', at most 253
// characters) and starts with something a person can read in `kubectl get`.
import { createHash } from 'node:crypto';

/** Longest readable part kept from a Masakari name; the rest is carried by the hash or uuid suffix. */
const SLUG_MAX = 40;

/**
 * A readable, DNS-safe rendering of free text: lowercase, runs of anything
 * else than [a-z0-9] become one '-', no leading/trailing '-'. Empty when the
 * text has no ASCII letters or digits (callers then use a fallback word).
 */
export function slugify(text: string, max = SLUG_MAX): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug.slice(0, max).replace(/-+$/g, '');
}

/** First `length` hex digits of sha256(text): names claims by the EXACT name (case and spaces matter). */
export function shortHash(text: string, length = 12): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, length);
}

export type ClaimKind = 'segment' | 'host';

/**
 * metadata.name of the ConfigMap that reserves a unique Masakari name, e.g.
 * `claim-segment-my-seg-5d41402abc12`. The hash makes two names that slugify
 * alike ("A b" and "a-b") claim different objects; the claim's data.name holds
 * the exact text so a (48-bit) hash collision is detected, not silently shared.
 */
export function claimObjectName(kind: ClaimKind, masakariName: string): string {
  const slug = slugify(masakariName) || 'x';
  return `claim-${kind}-${slug}-${shortHash(masakariName)}`;
}

/**
 * metadata.name for an object created through the REST API: a slug of its
 * Masakari name plus the first `hexDigits` (8) hex digits of its uuid, e.g.
 * `seg-a-3f2a9c1b`. It never changes, even when the Masakari name is renamed
 * with PUT.
 */
export function restObjectName(masakariName: string, uuid: string, fallback: string, hexDigits = 8): string {
  const slug = slugify(masakariName) || fallback;
  return `${slug}-${uuid.replace(/-/g, '').slice(0, hexDigits)}`;
}

/**
 * metadata.name of a REST-created Notification: `<host>-<type>-<uuid16>`,
 * e.g. `compute-1-compute-host-3f2a9c1b5d41402a`. Sixteen hex digits, not
 * eight: every notification of a host and type shares the slug, and with 8
 * (32 bits) a storm of 20,000 on one host had a 5 % chance of two random
 * uuids naming the same object (at 100,000, 69 %); the second create then
 * failed AlreadyExists and was answered 409 as if a duplicate. With 16 (60
 * random bits), a million notifications on one host collide with a chance
 * of about 1 in 2 million.
 */
export function notificationObjectName(hostname: string, type: string, uuid: string): string {
  return restObjectName(`${hostname} ${type}`, uuid, 'notification', 16);
}

/**
 * metadata.name of a notification's duplicate-detection claim
 * (src/store/admission/duplicate-claim.ts): `nfp-<hash of type, host uuid and payload hash>`,
 * e.g. `nfp-3f2a9c1b5d41402abc12e0aa`; a notification whose generated_time
 * cannot be parsed gets one of its own exact text, `nfp-<hash>-t<hash of the text>`.
 * (The earlier per-bucket claims were `dup-<hash>-<bucket>`; the sweeper removes them.)
 */
export function notificationClaimName(
  type: string,
  hostUuid: string,
  payloadHash: string,
  unparseableTime?: string,
): string {
  const key = shortHash(`${type}\n${hostUuid}\n${payloadHash}`, 24);
  return unparseableTime === undefined ? `nfp-${key}` : `nfp-${key}-t${shortHash(unparseableTime)}`;
}

export type IdKind = 'segments' | 'hosts' | 'notifications' | 'vmoves';

/** Per-kind id sequence ConfigMap, e.g. `masakari-ids-segments`. */
export function sequenceObjectName(kind: IdKind): string {
  return `masakari-ids-${kind}`;
}
