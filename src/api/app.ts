// The Masakari v1 REST facade as an express application. It reproduces the
// reference's WSGI stack (etc/masakari/api-paste.ini) in order:
//   /v1:  request_id → faultwrap → sizelimit → auth (noauth2 | keystone)
//         → router (plain 404) → microversion (400/406) → content type (415)
//         → method exists (405) → body (400) → project id (400) → handler
//   /:    versions document (200 at '/', 300 elsewhere), no request id
//   /healthcheck: plain OK
// Handlers run Masakari's order inside each operation: body schema, then
// policy, then the rules in src/domain/ha-service.ts.

import type { HostRecord } from '../domain/records.ts';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { HaService } from '../domain/ha-service.ts';
import type { Repository } from '../domain/repository.ts';
import { HostNotFoundByName, MasakariError, PolicyNotAuthorized, ServiceUnavailable } from '../domain/errors.ts';
import * as msg from '../domain/messages.ts';
import { parseJsonBody } from '../domain/json-body.ts';
import type { ApiVersion } from '../domain/api-version.ts';
import {
  atLeast,
  InvalidApiVersionString,
  resolveApiVersion,
  UnsupportedApiVersion,
  versionString,
} from '../domain/api-version.ts';
import {
  validateHostCreate,
  validateHostUpdate,
  validateNotificationCreate,
  validateNotificationPayload,
  validateSegmentCreate,
  validateSegmentUpdate,
} from '../domain/validators.ts';
import type { AuthSettings, RequestContext } from './auth.ts';
import { keystoneContext, noAuthContext, tokenFrom } from './auth.ts';
import type { PolicyEnforcer } from './policy.ts';
import { MASAKARI_API } from './policy.ts';
import type { Reply } from './replies.ts';
import {
  bestMatch,
  faultReply,
  jsonReply,
  SERVICE_UNAVAILABLE_EXPLANATION,
  unauthorizedReply,
  webobErrorReply,
} from './replies.ts';
import { matchV1, RESOURCES } from './routes.ts';
import type { RouteMatch } from './routes.ts';
import {
  EXTENSIONS,
  extensionView,
  hostJson,
  notificationView,
  segmentJson,
  segmentView,
  versionsChoices,
  versionShow,
  versionsIndex,
  vmoveView,
} from './views.ts';
import { createApiMetrics } from './metrics.ts';
import { healthcheckReply } from './healthcheck.ts';
import { buildOpenApiDocument } from './openapi.ts';

/** oslo.middleware sizelimit's default max_request_body_size. */
export const MAX_REQUEST_BODY_SIZE = 114688;

const SUPPORTED_CONTENT_TYPES = ['application/json', 'application/vnd.openstack.masakari+json'];
const VERSION_HEADER = 'OpenStack-API-Version';

export interface ApiAppOptions {
  service: HaService;
  repo: Repository;
  config: { DEFAULT: { osapi_max_limit: number } };
  auth: AuthSettings;
  policy: PolicyEnforcer;
  log: Logger;
  metrics: Registry;
  /** Readiness for /healthcheck (the repository's cache is synced). */
  ready?: () => boolean;
  maxRequestBodySize?: number;
}

interface Incoming {
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

/** The outcome of a handler: a document and its status (null document = empty body). */
interface Result {
  status: number;
  doc: unknown;
}

class PayloadTooLarge extends Error {}

/**
 * PATH_INFO as Masakari routes it. The WSGI server (PEP 3333) unquotes each
 * valid %XX escape to one byte and hands the bytes over as latin-1 text, so
 * `%C3%A9` is two characters, `%FF` is 'ÿ' and an invalid escape such as
 * `%ZZ` stays as it is; error messages echo ids exactly so. Then every run of
 * slashes is collapsed to one (paste's URLMap.normalize_url), so
 * `//v1/segments` and `/v1/segments/{id}//hosts` reach the same handlers as
 * their clean forms.
 */
function decodePath(raw: string): string {
  return raw
    .replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\/{2,}/g, '/');
}

/** webob's Request.path: PATH_INFO's bytes quoted again, keeping what a path may hold unescaped. */
function requotePath(path: string): string {
  return path.replace(/[^A-Za-z0-9_.~\-/!$&'()*+,;=:@]/g, (ch) => {
    const code = ch.charCodeAt(0);
    // Only latin-1 can reach here through decodePath; a raw wider character is sent as its UTF-8 bytes.
    const bytes = code <= 0xff ? [code] : [...Buffer.from(ch, 'utf8')];
    return bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  });
}

function headerValue(req: Incoming, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * A request body as Python decodes it before json.loads: strictly UTF-8 (bytes
 * that are not UTF-8 make the body malformed instead of turning into U+FFFD
 * inside stored names), and a byte-order mark is kept, which JSON refuses.
 */
function decodeUtf8(raw: Buffer): string {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw);
}

/** Reads the body, refusing more than `limit` bytes (oslo sizelimit's LimitingReader). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
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
function requestedVersion(req: Incoming): string | undefined {
  const header = headerValue(req, 'openstack-api-version');
  if (header === undefined) return undefined;
  for (const entry of header.split(',').reverse()) {
    const parts = entry.trim().split(/\s+/);
    if (parts.length >= 2 && parts[0]!.toLowerCase() === 'instance-ha') return parts.slice(1).join(' ').trim();
  }
  return undefined;
}

/** webob's Request.content_type: the media type without parameters, compared case-sensitively as Masakari does. */
function contentType(req: Incoming): string | undefined {
  const header = headerValue(req, 'content-type');
  if (header === undefined) return undefined;
  return header.split(';')[0]!.trim();
}

/** wsgi.py Request.best_match_content_type: the path suffix, then Accept, then JSON. */
function responseContentType(req: Incoming): string {
  const dot = req.path.lastIndexOf('.');
  if (dot >= 0) {
    const candidate = `application/${req.path.slice(dot + 1)}`;
    if (SUPPORTED_CONTENT_TYPES.includes(candidate)) return candidate;
  }
  return bestMatch(headerValue(req, 'accept'), SUPPORTED_CONTENT_TYPES, 'application/json') ?? 'application/json';
}

function withVersionHeaders(reply: Reply, version: ApiVersion | undefined, includeVersion = true): Reply {
  if (!version) return reply;
  const headers: Record<string, string> = { ...reply.headers, vary: VERSION_HEADER };
  if (includeVersion) headers['openstack-api-version'] = `instance-ha ${versionString(version)}`;
  return { ...reply, headers };
}

/** How long a connection closed after an early error may take to go (the client reads the answer meanwhile). */
const CLOSE_LINGER_MS = 2_000;

/**
 * After an error answered before the body was read (401, 413, 415...): the
 * connection is closed once the answer is out, rather than reading whatever
 * the client still sends (a slow or huge body would hold the socket). The
 * write side ends first so the client gets the answer; the socket goes
 * CLOSE_LINGER_MS later whatever the client does.
 */
function closeWithoutReading(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('connection', 'close');
  const socket = req.socket as IncomingMessage['socket'] | null;
  if (!socket) return;
  res.once('finish', () => {
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_LINGER_MS).unref();
  });
}

/** An answer that only a lookup finding nothing produces, before anything was written. */
function isLookupMiss(e: unknown): boolean {
  return e instanceof MasakariError && (e.status === 404 || e instanceof HostNotFoundByName);
}

export function createApiApp(opts: ApiAppOptions): Express {
  const { service, repo, policy, log } = opts;
  const limit = opts.maxRequestBodySize ?? MAX_REQUEST_BODY_SIZE;
  const metrics = createApiMetrics(opts.metrics);
  const openapi = buildOpenApiDocument();

  const authorize = (ctx: RequestContext, rule: string) =>
    policy.authorize(rule, { project_id: ctx.projectId, user_id: ctx.userId }, ctx.credentials);
  const can = (ctx: RequestContext, rule: string) =>
    policy.check(rule, { project_id: ctx.projectId, user_id: ctx.userId }, ctx.credentials);

  const hostDoc = (h: HostRecord) => hostJson(h, repo.getSegment(h.failover_segment_id));

  function discoverable(ctx: RequestContext) {
    return EXTENSIONS.filter((e) => can(ctx, `${MASAKARI_API}:${e.alias}:discoverable`));
  }

  /** The controllers (masakari/api/openstack/ha/*.py), after routing and body parsing. */
  async function dispatch(
    req: Incoming,
    m: RouteMatch,
    ctx: RequestContext,
    version: ApiVersion,
    body: unknown,
  ): Promise<Result> {
    const bad = (detail: string | undefined) => {
      if (detail !== undefined) throw new MasakariError(400, detail);
    };
    const id = m.id ?? '';
    const parentId = m.parentId ?? '';
    const rule = (action: string) => `${MASAKARI_API}:${RESOURCES[m.resource].alias}:${action}`;
    const rid = req.globalRequestId ?? req.requestId;
    switch (`${m.resource}.${m.action}`) {
      case 'versions.show': {
        if (m.id !== undefined && m.id !== 'v1.0') throw new MasakariError(404, msg.resourceNotFound());
        return { status: 200, doc: versionShow(`${req.baseUrl}/v1`) };
      }
      case 'extensions.index':
        authorize(ctx, rule('index'));
        return { status: 200, doc: { extensions: discoverable(ctx).map(extensionView) } };
      case 'extensions.show': {
        authorize(ctx, rule('detail'));
        const ext = discoverable(ctx).find((e) => e.alias === id);
        if (!ext) throw new MasakariError(404, msg.resourceNotFound());
        return { status: 200, doc: { extension: extensionView(ext) } };
      }
      case 'segments.index':
        authorize(ctx, rule('index'));
        return { status: 200, doc: { segments: service.listSegments(req.query).map(segmentJson) } };
      case 'segments.show':
        authorize(ctx, rule('detail'));
        return { status: 200, doc: { segment: segmentView(service.getSegment(id)) } };
      case 'segments.create':
        bad(validateSegmentCreate(body, version));
        authorize(ctx, rule('create'));
        return {
          status: 201,
          doc: { segment: segmentView(await service.createSegment(body as Record<string, unknown>)) },
        };
      case 'segments.update':
        bad(validateSegmentUpdate(body, version));
        authorize(ctx, rule('update'));
        return {
          status: 200,
          doc: { segment: segmentView(await service.updateSegment(id, body as Record<string, unknown>)) },
        };
      case 'segments.delete':
        authorize(ctx, rule('delete'));
        await service.deleteSegment(id);
        return { status: 204, doc: null };
      case 'hosts.index':
        authorize(ctx, rule('index'));
        return { status: 200, doc: { hosts: service.listHosts(parentId, req.query).map(hostDoc) } };
      case 'hosts.show':
        authorize(ctx, rule('detail'));
        return { status: 200, doc: { host: hostDoc(service.getHost(parentId, id)) } };
      case 'hosts.create':
        bad(validateHostCreate(body));
        authorize(ctx, rule('create'));
        return {
          status: 201,
          doc: { host: hostDoc(await service.createHost(parentId, body as Record<string, unknown>, rid)) },
        };
      case 'hosts.update':
        bad(validateHostUpdate(body));
        authorize(ctx, rule('update'));
        return {
          status: 200,
          doc: { host: hostDoc(await service.updateHost(parentId, id, body as Record<string, unknown>, rid)) },
        };
      case 'hosts.delete':
        authorize(ctx, rule('delete'));
        await service.deleteHost(parentId, id);
        return { status: 204, doc: null };
      case 'notifications.index':
        authorize(ctx, rule('index'));
        return {
          status: 200,
          doc: { notifications: service.listNotifications(req.query).map((n) => notificationView(n)) },
        };
      case 'notifications.show': {
        authorize(ctx, rule('detail'));
        const n = service.getNotification(id);
        return { status: 200, doc: { notification: notificationView(n, atLeast(version, 1, 1)) } };
      }
      case 'notifications.create': {
        bad(validateNotificationCreate(body));
        authorize(ctx, rule('create'));
        const n = (body as { notification: { type: string; payload: unknown } }).notification;
        bad(validateNotificationPayload(n.type, n.payload));
        const created = await service.createNotification(body as Record<string, unknown>);
        return { status: 202, doc: { notification: notificationView(created) } };
      }
      case 'vmoves.index':
        authorize(ctx, rule('index'));
        return { status: 200, doc: { vmoves: service.listVMoves(parentId, req.query).map(vmoveView) } };
      case 'vmoves.show':
        authorize(ctx, rule('detail'));
        return { status: 200, doc: { vmove: vmoveView(service.getVMove(parentId, id)) } };
      default:
        // Routes declares it, the controller lacks it (wsgi.py Resource._get_method).
        throw new MasakariError(405, msg.methodNotAllowed(req.method, m.action));
    }
  }

  /** Who is calling, or the auth layer's own reply. */
  async function authenticate(req: Incoming): Promise<RequestContext | Reply> {
    if (opts.auth.strategy === 'noauth2') return noAuthContext(req.headers);
    const token = tokenFrom(req.headers);
    if (!token) return unauthorizedReply(msg.authenticationRequired(), opts.auth.wwwAuthenticateUri);
    try {
      const identity = await opts.auth.validator.validate(token, { requestId: req.requestId });
      if (!identity) return unauthorizedReply(msg.authenticationRequired(), opts.auth.wwwAuthenticateUri);
      return keystoneContext(identity, policy);
    } catch (e) {
      log.error({ err: e, requestId: req.requestId }, 'token validation failed: Keystone did not answer');
      return webobErrorReply(
        503,
        SERVICE_UNAVAILABLE_EXPLANATION,
        headerValue(req, 'accept'),
        msg.identityUnavailable(),
      );
    }
  }

  /** The /v1 pipeline. Returns the reply and the route template for metrics. */
  async function handleV1(req: Incoming): Promise<{ reply: Reply; route: string }> {
    const declared = headerValue(req, 'content-length');
    if (declared !== undefined && Number(declared) > limit) {
      return { reply: webobErrorReply(413, msg.requestTooLarge(), headerValue(req, 'accept')), route: 'sizelimit' };
    }
    const ctx = await authenticate(req);
    if ('status' in ctx) return { reply: ctx, route: 'auth' };

    const match = matchV1(req.method, req.path.slice('/v1'.length));
    if (!match)
      return { reply: webobErrorReply(404, msg.resourceNotFound(), headerValue(req, 'accept')), route: 'unmatched' };
    const route = match.template;

    let version: ApiVersion;
    try {
      version = resolveApiVersion(requestedVersion(req));
    } catch (e) {
      if (e instanceof InvalidApiVersionString) return { reply: faultReply(400, e.message), route };
      if (e instanceof UnsupportedApiVersion)
        return { reply: withVersionHeaders(faultReply(406, e.message), e.version, false), route };
      throw e;
    }
    const fault = (status: number, message: string) => withVersionHeaders(faultReply(status, message), version);

    const type = contentType(req);
    if (type !== undefined && type !== '' && type !== 'text/plain' && !SUPPORTED_CONTENT_TYPES.includes(type)) {
      return { reply: fault(415, msg.unsupportedContentType()), route };
    }
    let raw: Buffer;
    try {
      raw = await readBody(req.raw, limit);
    } catch (e) {
      if (e instanceof PayloadTooLarge)
        return { reply: fault(413, 'The body of your request was too large for this server.'), route };
      throw e;
    }
    if (!RESOURCES[match.resource].implemented.has(match.action)) {
      return { reply: fault(405, msg.methodNotAllowed(req.method, match.action)), route };
    }
    let body: unknown = undefined;
    if (req.method === 'POST' || req.method === 'PUT') {
      // webob sets Content-Length to what it read, so an empty chunked body is
      // "no body" too (None), not a malformed one.
      if (raw.length === 0) body = null;
      else {
        try {
          body = parseJsonBody(decodeUtf8(raw));
        } catch (_e) {
          return { reply: fault(400, msg.malformedRequestBody()), route };
        }
      }
    }
    if (match.projectId !== undefined && match.projectId !== ctx.projectId) {
      return { reply: fault(400, msg.projectIdMismatch(match.projectId, ctx.projectId)), route };
    }

    try {
      const attempt = () => dispatch(req, match, ctx, version, body);
      // Another replica may have written what this one has not cached yet: a not-found answer is
      // checked against the API server first (read-your-writes across replicas).
      const result = repo.withFreshReads ? await repo.withFreshReads(attempt, isLookupMiss) : await attempt();
      const reply = jsonReply(result.status, result.doc, responseContentType(req));
      return { reply: withVersionHeaders(reply, version), route };
    } catch (e) {
      if (e instanceof MasakariError) {
        if (!(e instanceof PolicyNotAuthorized) && e.status >= 500)
          log.error({ err: e, requestId: req.requestId }, e.message);
        const reply = fault(e.status, e.message);
        if (e instanceof ServiceUnavailable) reply.headers['retry-after'] = String(e.retryAfterSeconds);
        return { reply, route };
      }
      log.error({ err: e, requestId: req.requestId }, 'unexpected error in API method');
      const kind = e instanceof Error ? e.name : typeof e;
      return { reply: fault(500, msg.unexpectedApiError(kind)), route };
    }
  }

  /** The root application (ha/versions.py Versions): '/' lists versions, anything else offers choices. */
  async function handleRoot(req: Incoming): Promise<Reply> {
    if (req.method === 'POST' || req.method === 'PUT') {
      const type = contentType(req);
      if (type !== undefined && type !== '' && type !== 'text/plain' && !SUPPORTED_CONTENT_TYPES.includes(type)) {
        return faultReply(415, msg.unsupportedContentType());
      }
      const raw = await readBody(req.raw, limit).catch(() => Buffer.alloc(0));
      if (headerValue(req, 'content-length') !== '0') {
        try {
          JSON.parse(decodeUtf8(raw));
        } catch (_e) {
          return faultReply(400, msg.malformedRequestBody());
        }
      }
    }
    if (req.path === '/') return jsonReply(200, versionsIndex(req.baseUrl), responseContentType(req));
    return jsonReply(300, versionsChoices(req.baseUrl, requotePath(req.path)), responseContentType(req));
  }

  function send(res: ServerResponse, reply: Reply, head: boolean): void {
    // webob answers a HEAD request's error page with its default (HTML) content
    // type and an empty body (Content-Length: 0), whatever the Accept header asked for.
    if (head && reply.webobError) {
      reply = { ...reply, headers: { ...reply.headers, 'content-type': 'text/html; charset=UTF-8' }, body: '' };
    }
    const body = Buffer.from(reply.body, 'utf8');
    res.statusCode = reply.status;
    for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
    res.setHeader('content-length', String(body.length));
    res.end(head ? undefined : body);
  }

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  app.use((rawReq, res) => {
    const started = process.hrtime.bigint();
    const url = rawReq.originalUrl ?? rawReq.url ?? '/';
    const q = url.indexOf('?');
    const inbound = rawReq.headers['x-openstack-request-id'];
    const globalId = typeof inbound === 'string' && /^req-[0-9a-f-]{36}$/.test(inbound) ? inbound : undefined;
    const req: Incoming = {
      // Routes' conditions list GET, so HEAD finds no route, as in Masakari.
      method: rawReq.method ?? 'GET',
      path: decodePath(q >= 0 ? url.slice(0, q) : url),
      query: new URLSearchParams(q >= 0 ? url.slice(q + 1) : ''),
      headers: rawReq.headers,
      baseUrl: `http://${rawReq.headers.host ?? 'localhost'}`,
      requestId: `req-${randomUUID()}`,
      ...(globalId ? { globalRequestId: globalId } : {}),
      raw: rawReq,
    };
    const head = rawReq.method === 'HEAD';
    void (async () => {
      let reply: Reply;
      let route: string;
      try {
        if (req.path === '/v1/openapi.json' && req.method === 'GET') {
          reply = jsonReply(200, openapi);
          route = '/v1/openapi.json';
        } else if ((req.path === '/v1' || req.path.startsWith('/v1/')) && req.method === 'OPTIONS') {
          // oslo.middleware's cors filter wraps the whole /v1 pipeline and turns
          // the router's answer to an OPTIONS request (always an error: Routes
          // maps no OPTIONS) into an empty 200 without headers. No CORS origin
          // is configured, so no Access-Control-* headers are added.
          reply = { status: 200, headers: {}, body: '' };
          route = 'cors';
        } else if (req.path === '/v1' || req.path.startsWith('/v1/')) {
          ({ reply, route } = await handleV1(req));
          reply.headers['x-openstack-request-id'] = req.requestId;
        } else if (req.path === '/healthcheck' || req.path.startsWith('/healthcheck/')) {
          reply = healthcheckReply(req.method, headerValue(req, 'accept'), opts.ready ? opts.ready() : true);
          route = '/healthcheck';
        } else {
          reply = await handleRoot(req);
          route = req.path === '/' ? '/' : 'choices';
        }
      } catch (e) {
        // faultwrap: nothing escapes as a bare 500 page.
        log.error({ err: e, requestId: req.requestId }, 'unhandled error');
        reply = faultReply(500, msg.unexpectedApiError(e instanceof Error ? e.name : typeof e));
        route = 'error';
      }
      if (!rawReq.complete) {
        if (reply.status >= 400) closeWithoutReading(rawReq, res);
        else rawReq.resume();
      }
      send(res, reply, head);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observe(req.method, route, reply.status, seconds);
      log.debug(
        { requestId: req.requestId, method: rawReq.method, path: req.path, status: reply.status, seconds },
        'request',
      );
    })();
  });
  return app;
}
