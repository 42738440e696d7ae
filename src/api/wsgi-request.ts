// A request as Masakari's WSGI stack sees it: PATH_INFO decoded the way a
// WSGI server decodes it, the headers webob reads (content type, Accept,
// OpenStack-API-Version) and the body oslo's sizelimit lets through.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ApiVersion } from '../domain/api-version.ts';
import { versionString } from '../domain/api-version.ts';
import type { Reply } from './replies.ts';
import { bestMatch } from './replies.ts';

export const SUPPORTED_CONTENT_TYPES = ['application/json', 'application/vnd.openstack.masakari+json'];
const VERSION_HEADER = 'OpenStack-API-Version';

export interface Incoming {
  method: string;
  /** Decoded path (what a WSGI server hands over as PATH_INFO). */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** scheme://host of the request, for links. */
  baseUrl: string;
  requestId: string;
  /** The caller's X-OpenStack-Request-ID when well-formed, passed on to Nova. */
  globalRequestId?: string;
  raw: IncomingMessage;
}

export class PayloadTooLarge extends Error {}

/**
 * PATH_INFO as Masakari routes it. The WSGI server (PEP 3333) unquotes each
 * valid %XX escape to one byte and hands the bytes over as latin-1 text, so
 * `%C3%A9` is two characters, `%FF` is 'ÿ' and an invalid escape such as
 * `%ZZ` stays as it is; error messages echo ids exactly so. Then every run of
 * slashes is collapsed to one (paste's URLMap.normalize_url), so
 * `//v1/segments` and `/v1/segments/{id}//hosts` reach the same handlers as
 * their clean forms.
 */
export function decodePath(raw: string): string {
  return raw
    .replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\/{2,}/g, '/');
}

/** webob's Request.path: PATH_INFO's bytes quoted again, keeping what a path may hold unescaped. */
export function requotePath(path: string): string {
  return path.replace(/[^A-Za-z0-9_.~\-/!$&'()*+,;=:@]/g, (ch) => {
    const code = ch.charCodeAt(0);
    // Only latin-1 can reach here through decodePath; a raw wider character is sent as its UTF-8 bytes.
    const bytes = code <= 0xff ? [code] : [...Buffer.from(ch, 'utf8')];
    return bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  });
}

/** The request as the WSGI stack receives it: PATH_INFO, the query, a fresh request id. */
export function incomingOf(raw: IncomingMessage, url: string): Incoming {
  const q = url.indexOf('?');
  const inbound = raw.headers['x-openstack-request-id'];
  const globalId = typeof inbound === 'string' && /^req-[0-9a-f-]{36}$/.test(inbound) ? inbound : undefined;
  return {
    // Routes' conditions list GET, so HEAD finds no route, as in Masakari.
    method: raw.method ?? 'GET',
    path: decodePath(q >= 0 ? url.slice(0, q) : url),
    query: new URLSearchParams(q >= 0 ? url.slice(q + 1) : ''),
    headers: raw.headers,
    baseUrl: `http://${raw.headers.host ?? 'localhost'}`,
    requestId: `req-${randomUUID()}`,
    ...(globalId ? { globalRequestId: globalId } : {}),
    raw,
  };
}

export function headerValue(req: Incoming, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * A request body as Python decodes it before json.loads: strictly UTF-8 (bytes
 * that are not UTF-8 make the body malformed instead of turning into U+FFFD
 * inside stored names), and a byte-order mark is kept, which JSON refuses.
 */
export function decodeUtf8(raw: Buffer): string {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw);
}

/** Reads the body, refusing more than `limit` bytes (oslo sizelimit's LimitingReader). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new PayloadTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** microversion_parse.get_version for service type instance-ha (last matching entry wins). */
export function requestedVersion(req: Incoming): string | undefined {
  const header = headerValue(req, 'openstack-api-version');
  if (header === undefined) return undefined;
  for (const entry of header.split(',').reverse()) {
    const parts = entry.trim().split(/\s+/);
    if (parts.length >= 2 && parts[0]!.toLowerCase() === 'instance-ha') return parts.slice(1).join(' ').trim();
  }
  return undefined;
}

/**
 * wsgi.py Request.get_content_type: webob's content type (the media type
 * without parameters, compared case-sensitively as Masakari does) is refused
 * unless absent, empty, text/plain or one of the JSON types.
 */
export function hasUnsupportedContentType(req: Incoming): boolean {
  const header = headerValue(req, 'content-type');
  if (header === undefined) return false;
  const type = header.split(';')[0]!.trim();
  return type !== '' && type !== 'text/plain' && !SUPPORTED_CONTENT_TYPES.includes(type);
}

/** wsgi.py Request.best_match_content_type: the path suffix, then Accept, then JSON. */
export function responseContentType(req: Incoming): string {
  const dot = req.path.lastIndexOf('.');
  if (dot >= 0) {
    const candidate = `application/${req.path.slice(dot + 1)}`;
    if (SUPPORTED_CONTENT_TYPES.includes(candidate)) return candidate;
  }
  return bestMatch(headerValue(req, 'accept'), SUPPORTED_CONTENT_TYPES, 'application/json') ?? 'application/json';
}

/** The microversion middleware's answer headers (Vary always, the version unless it was refused). */
export function withVersionHeaders(reply: Reply, version: ApiVersion | undefined, includeVersion = true): Reply {
  if (!version) return reply;
  const headers: Record<string, string> = { ...reply.headers, vary: VERSION_HEADER };
  if (includeVersion) headers['openstack-api-version'] = `instance-ha ${versionString(version)}`;
  return { ...reply, headers };
}
