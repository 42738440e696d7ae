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
  /** URL of the root application (webob's application_url there), for links: `GET /` and the 300 choices. */
  baseUrl: string;
  /** URL of the /v1 application, for the v1 version document's self link. */
  v1Url: string;
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

/** How links are built: Masakari's [oslo_middleware] and [DEFAULT] options of that name. */
export interface LinkSettings {
  /** enable_proxy_headers_parsing: trust Forwarded / X-Forwarded-* (oslo.middleware HTTPProxyToWSGI). */
  proxyHeaders: boolean;
  /** osapi_masakari_link_prefix; null: links keep the request's own scheme, host and port. */
  linkPrefix: string | null;
}

export const DIRECT_LINKS: LinkSettings = { proxyHeaders: false, linkPrefix: null };

function single(headers: IncomingMessage['headers'], name: string): string | undefined {
  const v = headers[name];
  const text = Array.isArray(v) ? v.join(', ') : v;
  return text === '' ? undefined : text;
}

/** oslo_middleware/http_proxy_to_wsgi.py _parse_rfc7239_header: one entry per proxy, keys lower-cased. */
export function parseForwarded(header: string): Array<Record<string, string>> {
  return header.split(',').map((proxy) => {
    const entry: Record<string, string> = {};
    for (const pair of proxy.split(';')) {
      const eq = pair.indexOf('=');
      const key = (eq >= 0 ? pair.slice(0, eq) : pair).trim().toLowerCase();
      entry[key] = eq >= 0 ? pair.slice(eq + 1).trim() : '';
    }
    return entry;
  });
}

/**
 * The WSGI environ's wsgi.url_scheme, HTTP_HOST and SCRIPT_NAME prefix after
 * oslo.middleware's HTTPProxyToWSGI (oslo_middleware/http_proxy_to_wsgi.py
 * process_request): with parsing on, the first proxy of `Forwarded` gives
 * proto and host; without that header, X-Forwarded-Proto and X-Forwarded-Host
 * do. X-Forwarded-Prefix goes before SCRIPT_NAME either way. An empty value
 * changes nothing, as in Python.
 */
export function proxiedOrigin(
  headers: IncomingMessage['headers'],
  scheme: string,
  proxyHeaders: boolean,
): { scheme: string; host: string | undefined; scriptPrefix: string } {
  let host = single(headers, 'host');
  if (!proxyHeaders) return { scheme, host, scriptPrefix: '' };
  const forwarded = single(headers, 'forwarded');
  if (forwarded) {
    const first = parseForwarded(forwarded)[0] ?? {};
    if (first['proto']) scheme = first['proto'];
    if (first['host']) host = first['host'];
  } else {
    scheme = single(headers, 'x-forwarded-proto') ?? scheme;
    host = single(headers, 'x-forwarded-host') ?? host;
  }
  return { scheme, host, scriptPrefix: single(headers, 'x-forwarded-prefix') ?? '' };
}

/** webob's Request.host_url: scheme://host, the port left out when it is the scheme's default. */
export function hostUrl(scheme: string, host: string): string {
  let name = host;
  let port: string | undefined;
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !host.endsWith(']')) [name, port] = [host.slice(0, colon), host.slice(colon + 1)];
  if ((scheme === 'https' && port === '443') || (scheme === 'http' && port === '80')) port = undefined;
  return `${scheme}://${name}${port ? `:${port}` : ''}`;
}

/**
 * masakari/api/openstack/common.py ViewBuilder._update_link_prefix with
 * osapi_masakari_link_prefix: the prefix's scheme and host replace the URL's,
 * its path goes before the URL's path, and trailing slashes are dropped.
 */
export function withLinkPrefix(url: string, prefix: string | null): string {
  if (!prefix) return url;
  const u = splitUrl(url);
  const p = splitUrl(prefix);
  return `${p.scheme}://${p.netloc}${p.path}${u.path}${u.rest}`.replace(/\/+$/, '');
}

/** urllib.parse.urlsplit, enough for absolute http(s) URLs: scheme, netloc, path, then query and fragment as written. */
function splitUrl(url: string): { scheme: string; netloc: string; path: string; rest: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(.*)$/.exec(url);
  if (!m) return { scheme: '', netloc: '', path: url, rest: '' };
  return { scheme: m[1]!.toLowerCase(), netloc: m[2]!, path: m[3]!, rest: m[4]! };
}

/** webob's application_url of the app mounted at `scriptName`, with the link prefix applied (views/versions.py). */
function applicationUrls(raw: IncomingMessage, links: LinkSettings): { baseUrl: string; v1Url: string } {
  const encrypted = (raw.socket as { encrypted?: boolean } | null)?.encrypted === true;
  const origin = proxiedOrigin(raw.headers, encrypted ? 'https' : 'http', links.proxyHeaders);
  const host = hostUrl(origin.scheme, origin.host ?? 'localhost');
  const at = (scriptName: string) => withLinkPrefix(host + requotePath(scriptName), links.linkPrefix);
  return { baseUrl: at(origin.scriptPrefix), v1Url: at(`${origin.scriptPrefix}/v1`) };
}

/** The request as the WSGI stack receives it: PATH_INFO, the query, a fresh request id. */
export function incomingOf(raw: IncomingMessage, url: string, links: LinkSettings = DIRECT_LINKS): Incoming {
  const q = url.indexOf('?');
  const inbound = raw.headers['x-openstack-request-id'];
  const globalId = typeof inbound === 'string' && /^req-[0-9a-f-]{36}$/.test(inbound) ? inbound : undefined;
  return {
    // Routes' conditions list GET, so HEAD finds no route, as in Masakari.
    method: raw.method ?? 'GET',
    path: decodePath(q >= 0 ? url.slice(0, q) : url),
    query: new URLSearchParams(q >= 0 ? url.slice(q + 1) : ''),
    headers: raw.headers,
    ...applicationUrls(raw, links),
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
