// The reference's WSGI filters (etc/masakari/api-paste.ini) as express
// middleware, in paste's order:
//   /v1:  cors → request_id → faultwrap → sizelimit → auth (noauth2 | keystone)
//         → router (plain 404) → microversion (400/406) → content type (415)
//         → body read (413) → method exists (405) → body (400) → project id (400)
//         → controller
// Every filter either answers (answer()) or passes on with next(). The
// router step uses routes.ts, not express paths: see docs/design/api.md "The REST
// facade's routing".

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { ApiVersion } from '../domain/api-version.ts';
import { InvalidApiVersionString, resolveApiVersion, UnsupportedApiVersion } from '../domain/api-version.ts';
import { HostNotFoundByName, MasakariError, PolicyNotAuthorized, ServiceUnavailable } from '../domain/errors.ts';
import { parseJsonBody } from '../domain/json-body.ts';
import * as msg from '../domain/messages.ts';
import type { Repository } from '../domain/repository.ts';
import type { AuthSettings, RequestContext } from './auth.ts';
import { keystoneContext, noAuthContext, tokenFrom } from './auth.ts';
import type { Controller } from './controllers/index.ts';
import { ValidationRefused } from '../openstack/index.ts';
import type { ApiMetrics } from './metrics.ts';
import type { PolicyEnforcer } from './policy.ts';
import type { Reply } from './replies.ts';
import {
  faultReply,
  jsonReply,
  SERVICE_UNAVAILABLE_EXPLANATION,
  unauthorizedReply,
  webobErrorReply,
} from './replies.ts';
import type { ResourceName, RouteMatch } from './routes.ts';
import { matchV1 } from './routes.ts';
import type { Incoming, LinkSettings } from './wsgi-request.ts';
import {
  decodeUtf8,
  hasUnsupportedContentType,
  headerValue,
  incomingOf,
  PayloadTooLarge,
  readBody,
  requestedVersion,
  requotePath,
  responseContentType,
  withVersionHeaders,
} from './wsgi-request.ts';

/** oslo.middleware sizelimit's default max_request_body_size. */
export const MAX_REQUEST_BODY_SIZE = 114688;

/** How long a connection closed after an early error may take to go (the client reads the answer meanwhile). */
const CLOSE_LINGER_MS = 2_000;

/** What the filters have learnt about one request so far (res.locals.exchange). */
interface Exchange {
  req: Incoming;
  started: bigint;
  /** The answer carries X-OpenStack-Request-ID (the /v1 pipeline's request_id filter). */
  stampRequestId: boolean;
  ctx?: RequestContext;
  match?: RouteMatch;
  version?: ApiVersion;
  raw?: Buffer;
  body?: unknown;
}

export interface PipelineOptions {
  auth: AuthSettings;
  policy: PolicyEnforcer;
  repo: Repository;
  controllers: Record<ResourceName, Controller>;
  log: Logger;
  metrics: ApiMetrics;
  limit: number;
  /** How version links are built (proxy headers, link prefix); absent: from the request alone. */
  links?: LinkSettings;
}

/** At most one warning this often about refused token validations. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

function exchange(res: Response): Exchange {
  return res.locals['exchange'] as Exchange;
}

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

/** An answer that only a lookup finding nothing produces, before anything was written. */
function isLookupMiss(e: unknown): boolean {
  return e instanceof MasakariError && (e.status === 404 || e instanceof HostNotFoundByName);
}

export function createPipeline(opts: PipelineOptions) {
  const { auth, policy, repo, controllers, log, metrics, limit } = opts;

  /** Sends a filter's or a controller's answer; `route` labels the metrics (a template, never a raw path). */
  function answer(res: Response, reply: Reply, route: string): void {
    const x = exchange(res);
    const raw = x.req.raw;
    if (x.stampRequestId)
      reply = { ...reply, headers: { ...reply.headers, 'x-openstack-request-id': x.req.requestId } };
    if (!raw.complete) {
      if (reply.status >= 400) closeWithoutReading(raw, res);
      else raw.resume();
    }
    send(res, reply, raw.method === 'HEAD');
    const seconds = Number(process.hrtime.bigint() - x.started) / 1e9;
    metrics.observe(x.req.method, route, reply.status, seconds);
    log.debug(
      { requestId: x.req.requestId, method: raw.method, path: x.req.path, status: reply.status, seconds },
      'request',
    );
  }

  /** A Masakari fault with the microversion headers once the version is known. */
  function fault(res: Response, status: number, message: string): Reply {
    return withVersionHeaders(faultReply(status, message), exchange(res).version);
  }

  /**
   * The WSGI server's part: PATH_INFO and a request id. Express then routes
   * on PATH_INFO quoted again, so `//v1` or `/v1%2Fsegments` reach the /v1
   * pipeline as they reach Masakari's.
   */
  const wsgiServer: RequestHandler = (req, res, next) => {
    const incoming = incomingOf(req, req.originalUrl ?? req.url, opts.links);
    const x: Exchange = { req: incoming, started: process.hrtime.bigint(), stampRequestId: false };
    res.locals['exchange'] = x;
    req.url = requotePath(incoming.path);
    next();
  };

  /**
   * oslo.middleware's cors filter wraps the whole /v1 pipeline and turns the
   * router's answer to an OPTIONS request (always an error: Routes maps no
   * OPTIONS) into an empty 200 without headers. No CORS origin is
   * configured, so no Access-Control-* headers are added.
   */
  const cors: RequestHandler = (req, res, next) => {
    if (req.method === 'OPTIONS') answer(res, { status: 200, headers: {}, body: '' }, 'cors');
    else next();
  };

  const requestId: RequestHandler = (_req, res, next) => {
    exchange(res).stampRequestId = true;
    next();
  };

  /** oslo sizelimit: a declared length over the limit, before anything is read. */
  const sizeLimit: RequestHandler = (_req, res, next) => {
    const { req } = exchange(res);
    const declared = headerValue(req, 'content-length');
    if (declared !== undefined && Number(declared) > limit) {
      answer(res, webobErrorReply(413, msg.requestTooLarge(), headerValue(req, 'accept')), 'sizelimit');
    } else next();
  };

  /** A flood is refused by the thousand: one warning per REFUSAL_LOG_INTERVAL_MS, with the count. */
  let refusedSinceLog = 0;
  let refusalLoggedAt = -Infinity;
  function noteRefusal(): void {
    refusedSinceLog++;
    const now = performance.now();
    if (now - refusalLoggedAt < REFUSAL_LOG_INTERVAL_MS) return;
    log.warn({ refused: refusedSinceLog }, 'token validations refused: too many in flight or started this second');
    refusedSinceLog = 0;
    refusalLoggedAt = now;
  }

  /**
   * Who is calling, or the auth layer's own reply. `signal` fires when the
   * client hangs up, which abandons its share of the token's validation.
   */
  async function authenticate(req: Incoming, signal: AbortSignal): Promise<RequestContext | Reply> {
    if (auth.strategy === 'noauth2') return noAuthContext(req.headers);
    const token = tokenFrom(req.headers);
    if (!token) return unauthorizedReply(msg.authenticationRequired(), auth.wwwAuthenticateUri);
    try {
      const identity = await auth.validator.validate(token, { requestId: req.requestId, signal });
      if (!identity) return unauthorizedReply(msg.authenticationRequired(), auth.wwwAuthenticateUri);
      return keystoneContext(identity, policy);
    } catch (e) {
      const accept = headerValue(req, 'accept');
      if (e instanceof ValidationRefused) {
        // Overload, not a verdict on the token: a 401 would send clients to
        // Keystone for yet another token, a 503 with Retry-After makes them wait.
        noteRefusal();
        const reply = webobErrorReply(503, SERVICE_UNAVAILABLE_EXPLANATION, accept, msg.identityBusy());
        return { ...reply, headers: { ...reply.headers, 'retry-after': String(e.retryAfterSeconds) } };
      }
      if (!signal.aborted)
        log.error({ err: e, requestId: req.requestId }, 'token validation failed: Keystone did not answer');
      return webobErrorReply(503, SERVICE_UNAVAILABLE_EXPLANATION, accept, msg.identityUnavailable());
    }
  }

  /** noauth2, or keystonemiddleware's auth_token + keystonecontext. */
  const authFilter: RequestHandler = async (_req, res, next) => {
    const x = exchange(res);
    const hungUp = new AbortController();
    // Nothing has been written yet, so a close now is the client going away.
    const onClose = () => {
      if (!res.writableFinished) hungUp.abort(new Error('the client closed the connection'));
    };
    res.once('close', onClose);
    let ctx: RequestContext | Reply;
    try {
      ctx = await authenticate(x.req, hungUp.signal);
    } finally {
      res.off('close', onClose);
    }
    if (hungUp.signal.aborted) {
      log.debug({ requestId: x.req.requestId }, 'client closed the connection during token validation');
      return;
    }
    if ('status' in ctx) return answer(res, ctx, 'auth');
    x.ctx = ctx;
    next();
  };

  /** The Routes mapper: a path/method pair outside its map is a plain 404. */
  const router: RequestHandler = (_req, res, next) => {
    const x = exchange(res);
    const match = matchV1(x.req.method, x.req.path.slice('/v1'.length));
    if (!match)
      return answer(res, webobErrorReply(404, msg.resourceNotFound(), headerValue(x.req, 'accept')), 'unmatched');
    x.match = match;
    next();
  };

  /** The OpenStack-API-Version header: malformed is a 400, out of range a 406. */
  const microversion: RequestHandler = (_req, res, next) => {
    const x = exchange(res);
    const route = x.match!.template;
    try {
      x.version = resolveApiVersion(requestedVersion(x.req));
    } catch (e) {
      if (e instanceof InvalidApiVersionString) return answer(res, faultReply(400, e.message), route);
      if (e instanceof UnsupportedApiVersion)
        return answer(res, withVersionHeaders(faultReply(406, e.message), e.version, false), route);
      throw e;
    }
    next();
  };

  const contentType: RequestHandler = (_req, res, next) => {
    const x = exchange(res);
    if (hasUnsupportedContentType(x.req)) answer(res, fault(res, 415, msg.unsupportedContentType()), x.match!.template);
    else next();
  };

  /** Reads the body through sizelimit's LimitingReader (a chunked body has no declared length). */
  const bodyRead: RequestHandler = async (_req, res, next) => {
    const x = exchange(res);
    try {
      x.raw = await readBody(x.req.raw, limit);
    } catch (e) {
      if (!(e instanceof PayloadTooLarge)) throw e;
      return answer(res, fault(res, 413, 'The body of your request was too large for this server.'), x.match!.template);
    }
    next();
  };

  /** Routes declares the action, the controller lacks it (wsgi.py Resource._get_method). */
  const methodExists: RequestHandler = (_req, res, next) => {
    const x = exchange(res);
    const m = x.match!;
    if (controllers[m.resource][m.action]) return next();
    answer(res, fault(res, 405, msg.methodNotAllowed(x.req.method, m.action)), m.template);
  };

  const jsonBody: RequestHandler = (_req, res, next) => {
    const x = exchange(res);
    if (x.req.method === 'POST' || x.req.method === 'PUT') {
      // webob sets Content-Length to what it read, so an empty chunked body is
      // "no body" too (None), not a malformed one.
      if (x.raw!.length === 0) x.body = null;
      else {
        try {
          x.body = parseJsonBody(decodeUtf8(x.raw!));
        } catch (_e) {
          return answer(res, fault(res, 400, msg.malformedRequestBody()), x.match!.template);
        }
      }
    }
    next();
  };

  /** A /v1/{project_id}/… path must name the caller's project. */
  const projectId: RequestHandler = (_req, res, next) => {
    const x = exchange(res);
    const claimed = x.match!.projectId;
    if (claimed === undefined || claimed === x.ctx!.projectId) return next();
    answer(res, fault(res, 400, msg.projectIdMismatch(claimed, x.ctx!.projectId)), x.match!.template);
  };

  /** The controller's method; a MasakariError becomes its fault (wsgi.py Fault), anything else a 500. */
  const dispatch: RequestHandler = async (_req, res) => {
    const x = exchange(res);
    const m = x.match!;
    const handler = controllers[m.resource][m.action]!;
    const call = {
      req: x.req,
      ctx: x.ctx!,
      version: x.version!,
      body: x.body,
      id: m.id ?? '',
      parentId: m.parentId ?? '',
    };
    try {
      const attempt = async () => handler(call);
      // Another replica may have written what this one has not cached yet: a not-found answer is
      // checked against the API server first (read-your-writes across replicas).
      const result = repo.withFreshReads ? await repo.withFreshReads(attempt, isLookupMiss) : await attempt();
      const reply = jsonReply(result.status, result.doc, responseContentType(x.req));
      answer(res, withVersionHeaders(reply, x.version), m.template);
    } catch (e) {
      if (e instanceof MasakariError) {
        // A 503 while the API server is unreachable is the answer designed for
        // an outage (the client retries after Retry-After): a warning. Any
        // other 5xx is something we did not expect: an error.
        if (e instanceof ServiceUnavailable) log.warn({ err: e, requestId: x.req.requestId }, e.message);
        else if (!(e instanceof PolicyNotAuthorized) && e.status >= 500)
          log.error({ err: e, requestId: x.req.requestId }, e.message);
        const reply = fault(res, e.status, e.message);
        if (e instanceof ServiceUnavailable) reply.headers['retry-after'] = String(e.retryAfterSeconds);
        return answer(res, reply, m.template);
      }
      log.error({ err: e, requestId: x.req.requestId }, 'unexpected error in API method');
      const kind = e instanceof Error ? e.name : typeof e;
      answer(res, fault(res, 500, msg.unexpectedApiError(kind)), m.template);
    }
  };

  /** faultwrap around everything: nothing escapes as a bare 500 page. */
  const faultWrap: ErrorRequestHandler = (err, _req, res, _next) => {
    const x = exchange(res);
    log.error({ err, requestId: x.req.requestId }, 'unhandled error');
    if (res.headersSent) return;
    x.stampRequestId = false;
    answer(res, faultReply(500, msg.unexpectedApiError(err instanceof Error ? err.name : typeof err)), 'error');
  };

  return {
    answer,
    /** The request as the WSGI server handed it over. */
    requestOf: (res: Response) => exchange(res).req,
    wsgiServer,
    /** The /v1 pipeline in paste's order. */
    v1: [
      cors,
      requestId,
      sizeLimit,
      authFilter,
      router,
      microversion,
      contentType,
      bodyRead,
      methodExists,
      jsonBody,
      projectId,
      dispatch,
    ],
    faultWrap,
  };
}
