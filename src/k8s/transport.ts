// HTTP transport to the API server: one pooled undici Agent per client, the
// TLS and auth material a kubeconfig resolves (src/k8s/kubeconfig.ts, or
// @kubernetes/client-node's KubeConfig: tokens, client certs, caData/caFile,
// insecure-skip-tls-verify, exec plugins and in-cluster token files), a
// timeout on every request, and bounded retries for the failures that are
// safe to retry.
import type https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, ProxyAgent } from 'undici';
import type { Dispatcher } from 'undici';
import type { KubeConnectionConfig } from './kubeconfig.ts';
import { KubeError } from './client.ts';
import { neverReachedServer } from '../net/connect.ts';
import { errorFromResponse, errorFromTransport } from './errors.ts';
import { systemClock } from '../time/clock.ts';
import { backoffDelay } from './retry-on-conflict.ts';
import type { Backoff } from './retry-on-conflict.ts';

/** Between attempts of one request: 50-150 ms, doubling (the attempts are few: maxAttempts). */
const TRANSPORT_BACKOFF: Readonly<Backoff> = { steps: Infinity, delayMs: 50, factor: 2, jitter: 2, capMs: Infinity };

export interface TransportOptions {
  /** Per-attempt timeout of a request (headers and body); default 30 s. */
  timeoutMs?: number;
  userAgent?: string;
  /** Attempts per request, including the first; default 3. */
  maxAttempts?: number;
  /** Wraps every attempt of a non-streaming request (fault injection in tests: src/k8s/fault-injection.ts). */
  intercept?: TransportInterceptor;
  /** Told about every attempt of a non-streaming request once it ends (the request-duration metric). */
  onAttempt?: (attempt: KubeAttempt) => void;
}

/** One ended attempt of a non-streaming request (watches are streams and are not reported). */
export interface KubeAttempt {
  method: HttpMethod;
  /** The resource path without namespace or name: resourcePathTemplate(call.path). */
  resource: string;
  /** HTTP status; 0 when no answer came (refused, reset, timed out). */
  code: number;
  durationMs: number;
}

/**
 * `plural[/subresource]` (with the API group for non-core resources) of an API
 * path, so a metric's label set stays as small as the number of resources:
 * /apis/masakari.openkeel.io/v1alpha1/namespaces/ns/notifications/n/status is
 * `masakari.openkeel.io/notifications/status`, /api/v1/namespaces/ns/configmaps
 * is `configmaps`, /api/v1/nodes/n is `nodes`.
 */
export function resourcePathTemplate(path: string): string {
  const parts = (path.split('?')[0] ?? '').split('/').filter(Boolean);
  let group = '';
  let rest: string[];
  if (parts[0] === 'api') rest = parts.slice(2);
  else if (parts[0] === 'apis') {
    group = parts[1] ?? '';
    rest = parts.slice(3);
  } else return 'other';
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [plural, , sub] = rest;
  if (!plural) return 'other';
  return [group, plural, sub].filter(Boolean).join('/');
}

/** Runs one attempt of `call`: calling `send` sends it; throwing instead is a failed attempt. */
export type TransportInterceptor = (call: HttpCall, send: () => Promise<string>) => Promise<string>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpCall {
  method: HttpMethod;
  /** Path and query, relative to the cluster's server URL. */
  path: string;
  body?: unknown;
  contentType?: string;
  /** Short description for error messages, e.g. "GET configmaps ns/x". */
  what: string;
}

/**
 * Auth headers are re-resolved at most this often: exec plugins and the
 * in-cluster token file rotate credentials, and client-node's authenticators
 * cache them themselves, so a short TTL costs nothing and picks up rotation.
 */
const AUTH_TTL_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_RETRY_AFTER_MS = 10_000;

export class KubeTransport {
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly userAgent: string;
  private readonly intercept: TransportInterceptor | undefined;
  private readonly onAttempt: ((attempt: KubeAttempt) => void) | undefined;
  private dispatcherPromise: Promise<Dispatcher> | undefined;
  private auth: { headers: Promise<Record<string, string>>; at: number } | undefined;

  constructor(
    private readonly kc: KubeConnectionConfig,
    opts: TransportOptions = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.base = new URL(cluster.server);
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.userAgent = opts.userAgent ?? 'masakari-operator';
    this.intercept = opts.intercept;
    this.onAttempt = opts.onAttempt;
  }

  /** Sends a request and parses the JSON answer; non-2xx throws KubeError. */
  async json<T>(call: HttpCall): Promise<T> {
    return this.parsed(call, (text) => JSON.parse(text) as T);
  }

  /** Sends a request and reads the 2xx answer with `parse` (JSON it may throw on); non-2xx throws KubeError. */
  async parsed<T>(call: HttpCall, parse: (text: string) => T): Promise<T> {
    const text = await this.send(call);
    if (!text) return undefined as T;
    try {
      return parse(text);
    } catch (e) {
      // What `parse` does with an item (listKept's keep) may throw too: that is not the answer's fault.
      if (!(e instanceof SyntaxError)) throw e;
      // A 2xx that is not JSON comes from something in front of the API server, not from it.
      throw new KubeError(0, 'InvalidResponse', `${call.what}: answer is not JSON: ${text.slice(0, 120)}`);
    }
  }

  /**
   * Opens a streaming GET and hands every body chunk (decoded as UTF-8) to
   * onChunk until the server ends the stream or the signal aborts. There is no
   * body timeout here: the caller bounds the stream (watch timeoutSeconds and
   * the informer's watchdog).
   */
  async stream(call: HttpCall, signal: AbortSignal, onChunk: (s: string) => void): Promise<void> {
    const dispatcher = await this.dispatcher();
    const headers = await this.headers(call);
    let res: Dispatcher.ResponseData;
    try {
      res = await dispatcher.request({
        ...this.target(call.path),
        method: call.method,
        headers,
        signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: 0,
      });
    } catch (err) {
      if (signal.aborted) return;
      throw errorFromTransport(err, call.what, false);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text().catch(() => '');
      if (res.statusCode === 401) this.auth = undefined;
      throw errorFromResponse(res.statusCode, text, call.what);
    }
    res.body.setEncoding('utf8');
    try {
      for await (const chunk of res.body) onChunk(chunk as string);
    } catch (err) {
      if (signal.aborted) return;
      throw errorFromTransport(err, call.what, false);
    } finally {
      res.body.destroy();
    }
  }

  /** Closes pooled connections (open watches end). */
  async close(): Promise<void> {
    const d = this.dispatcherPromise;
    this.dispatcherPromise = undefined;
    if (d) await (await d).destroy().catch(() => undefined);
  }

  private async send(call: HttpCall): Promise<string> {
    let lastError: KubeError | undefined;
    let refreshedAuth = false;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const began = performance.now();
      // The status an answered attempt got (201 for a create, ...); an interceptor may answer without sending.
      const answered = { code: 0 };
      try {
        const send = () => this.sendOnce(call, answered);
        const text = await (this.intercept ? this.intercept(call, send) : send());
        this.report(call, answered.code || 200, began);
        return text;
      } catch (err) {
        const e = err as KubeError & { retryAfterMs?: number; cause?: unknown };
        this.report(call, typeof e.code === 'number' ? e.code : 0, began);
        lastError = e;
        // An expired exec/OIDC token: drop the cached headers and try again once.
        if (e.code === 401 && !refreshedAuth) {
          refreshedAuth = true;
          this.auth = undefined;
          continue;
        }
        if (attempt >= this.maxAttempts || !this.retryable(call, e)) throw e;
        const backoff = backoffDelay(TRANSPORT_BACKOFF, attempt - 1);
        await sleep(Math.min(e.retryAfterMs ?? backoff, MAX_RETRY_AFTER_MS));
      }
    }
    throw lastError ?? new KubeError(0, 'NetworkError', `${call.what}: no attempt made`);
  }

  /** Reports an ended attempt; an observer that throws must not fail the request. */
  private report(call: HttpCall, code: number, began: number): void {
    if (!this.onAttempt) return;
    try {
      this.onAttempt({
        method: call.method,
        resource: resourcePathTemplate(call.path),
        code,
        durationMs: performance.now() - began,
      });
    } catch {
      // a metrics problem is not the caller's
    }
  }

  /**
   * Safe retries only: 429 (the server rejected it before doing anything) for
   * every verb, transport failures that never reached the server for every
   * verb, and any transport failure or 502/503/504 for reads. A mutation that
   * may have been applied is never repeated here; the caller's reconcile loop
   * re-reads and decides.
   */
  private retryable(call: HttpCall, e: KubeError & { cause?: unknown }): boolean {
    if (e.code === 429) return true;
    if (e.code === 0 && neverReachedServer(e.cause)) return true;
    if (call.method !== 'GET') return false;
    return e.code === 0 || e.code === 502 || e.code === 503 || e.code === 504;
  }

  private async sendOnce(call: HttpCall, answered: { code: number }): Promise<string> {
    const dispatcher = await this.dispatcher();
    const headers = await this.headers(call);
    // A timer cleared when the call ends: AbortSignal.timeout would keep one
    // alive for the whole timeout after every call (thousands under load).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException('timed out', 'TimeoutError')), this.timeoutMs);
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await dispatcher.request({
        ...this.target(call.path),
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: deadline.signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      text = await res.body.text();
    } catch (err) {
      const e = errorFromTransport(err, call.what, deadline.signal.aborted) as KubeError & { cause?: unknown };
      e.cause = err;
      throw e;
    } finally {
      clearTimeout(timer);
    }
    answered.code = res.statusCode;
    if (res.statusCode >= 200 && res.statusCode < 300) return text;
    const e = errorFromResponse(res.statusCode, text, call.what) as KubeError & { retryAfterMs?: number };
    const retryAfter = Number(res.headers['retry-after']);
    if (Number.isFinite(retryAfter) && retryAfter >= 0) e.retryAfterMs = retryAfter * 1000;
    throw e;
  }

  private target(path: string): { origin: string; path: string } {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    return { origin: this.base.origin, path: prefix + path };
  }

  private async headers(call: HttpCall): Promise<Record<string, string>> {
    const h: Record<string, string> = { ...(await this.authHeaders()), 'user-agent': this.userAgent };
    h.accept = 'application/json';
    if (call.body !== undefined) h['content-type'] = call.contentType ?? 'application/json';
    return h;
  }

  private authHeaders(): Promise<Record<string, string>> {
    const now = systemClock.now().getTime();
    if (!this.auth || now - this.auth.at > AUTH_TTL_MS) {
      const headers = this.resolveAuth();
      this.auth = { headers, at: now };
      headers.catch(() => {
        this.auth = undefined;
      });
    }
    return this.auth.headers;
  }

  private async resolveAuth(): Promise<Record<string, string>> {
    const opts: https.RequestOptions = { headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(opts);
    } catch (err) {
      throw new KubeError(0, 'Unauthorized', `resolving credentials from kubeconfig: ${(err as Error).message}`);
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) out[k.toLowerCase()] = String(v);
    if (typeof opts.auth === 'string' && !out.authorization) {
      out.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    }
    return out;
  }

  private dispatcher(): Promise<Dispatcher> {
    if (!this.dispatcherPromise) {
      const p = this.createDispatcher();
      this.dispatcherPromise = p;
      p.catch(() => {
        if (this.dispatcherPromise === p) this.dispatcherPromise = undefined;
      });
    }
    return this.dispatcherPromise;
  }

  /**
   * TLS material is resolved once (CA, client cert and key may come from files,
   * data or an exec plugin). HTTP/2 is off on purpose: with HTTP/1.1 a stalled
   * connection stalls one request or one watch, not every request multiplexed
   * on it (client-go needed ping health checks to cope with that).
   */
  private async createDispatcher(): Promise<Dispatcher> {
    const opts: https.RequestOptions = { headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(opts);
    } catch (err) {
      throw new KubeError(0, 'NetworkError', `building TLS options from kubeconfig: ${(err as Error).message}`);
    }
    const tls = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      rejectUnauthorized: opts.rejectUnauthorized,
      servername: opts.servername,
    };
    const common = { allowH2: false, keepAliveTimeout: 30_000, connectTimeout: this.timeoutMs };
    const proxyUrl = this.kc.getCurrentCluster()?.proxyUrl;
    if (proxyUrl) {
      if (proxyUrl.startsWith('socks')) throw new KubeError(0, 'NetworkError', 'socks proxies are not supported');
      return new ProxyAgent({ ...common, uri: proxyUrl, requestTls: tls });
    }
    return new Agent({ ...common, connect: { ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 } });
  }
}
