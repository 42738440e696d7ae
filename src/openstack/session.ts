// One OpenStack login shared by every client of a process: one pooled undici
// dispatcher (keep-alive per origin, TLS options from the credentials), one
// transport (timeouts, retries, metrics) and one Keystone token.

import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { EndpointFilter } from './catalog.ts';
import { selectEndpoint } from './catalog.ts';
import { markingConnector } from '../net/connect.ts';
import type { OpenStackCredentials } from './credentials.ts';
import { HttpTransport } from './http.ts';
import type { HttpRequest, HttpResponse, OnCall, OpenStackLogger } from './http.ts';
import { KeystoneAuth } from './keystone.ts';
import type { CallOptions } from './types.ts';

export interface SessionOptions {
  /** Per-request deadline (ms). */
  timeoutMs: number;
  /** Retry bound per request; what may be retried is the request's RetryPolicy (http.ts). */
  maxRetries: number;
  onCall?: OnCall;
  log?: OpenStackLogger;
  /** Injected dispatcher (tests: undici MockAgent); otherwise a pooled Agent is created and owned. */
  dispatcher?: Dispatcher;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Refresh the service token this long before it expires. */
  refreshMarginMs?: number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface AuthorizedRequest extends Omit<HttpRequest, 'url'> {
  /** Endpoint base URL (from `endpoint()`), joined with `path`. */
  baseUrl: string;
  /** Path with query, appended to baseUrl. */
  path: string;
}

export class OpenStackSession {
  readonly transport: HttpTransport;
  readonly auth: KeystoneAuth;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(
    readonly credentials: OpenStackCredentials,
    opts: SessionOptions,
  ) {
    if (opts.dispatcher) {
      this.dispatcher = opts.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = new Agent({
        connections: 16,
        keepAliveTimeout: 4_000,
        // Tags connect failures so the transport knows those requests were never sent (connect.ts).
        connect: markingConnector({
          ...(credentials.cacert ? { ca: readFileSync(credentials.cacert, 'utf8') } : {}),
          rejectUnauthorized: !credentials.insecure,
          timeout: Math.min(opts.timeoutMs, 10_000),
        }),
      });
      this.ownsDispatcher = true;
    }
    this.transport = new HttpTransport({
      dispatcher: this.dispatcher,
      timeoutMs: opts.timeoutMs,
      maxRetries: opts.maxRetries,
      ...(opts.backoffBaseMs !== undefined ? { backoffBaseMs: opts.backoffBaseMs } : {}),
      ...(opts.backoffMaxMs !== undefined ? { backoffMaxMs: opts.backoffMaxMs } : {}),
      ...(opts.onCall ? { onCall: opts.onCall } : {}),
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      ...(opts.random ? { random: opts.random } : {}),
    });
    this.auth = new KeystoneAuth(credentials, this.transport, {
      ...(opts.refreshMarginMs !== undefined ? { refreshMarginMs: opts.refreshMarginMs } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    });
  }

  /** Base URL of a service from the current token's catalog (throws EndpointNotFound). */
  async endpoint(filter: EndpointFilter, o: CallOptions = {}): Promise<string> {
    const token = await this.auth.token(o);
    return selectEndpoint(token.catalog, filter);
  }

  /**
   * Sends a request with our token. A 401 means the token died early (revoked,
   * Keystone restarted with new keys): log in again and resend once. Resending
   * is safe even for POST, since a 401 request was never processed.
   */
  async request(req: AuthorizedRequest, o: CallOptions = {}): Promise<HttpResponse> {
    const send = async (tokenId: string) => {
      const headers: Record<string, string> = { ...req.headers, 'x-auth-token': tokenId };
      if (o.requestId) headers['x-openstack-request-id'] = o.requestId;
      const { baseUrl, path, ...rest } = req;
      return this.transport.send({
        ...rest,
        url: baseUrl + path,
        headers,
        signal: o.signal ?? req.signal,
        ...(o.beforeSend ? { beforeSend: o.beforeSend } : {}),
      });
    };
    const token = await this.auth.token(o);
    const res = await send(token.id);
    if (res.status !== 401) return res;
    this.auth.invalidate(token.id);
    const fresh = await this.auth.token(o);
    return send(fresh.id);
  }

  /** Closes the pooled connections (no-op for an injected dispatcher). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
