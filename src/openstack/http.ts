// The one place where the OpenStack client talks HTTP. Every request gets:
// - a deadline (timeoutMs) covering connect, headers and body;
// - bounded retries (maxRetries) with exponential backoff and full jitter.
//   What may be retried is the request's RetryPolicy: GET/PUT/DELETE on 5xx,
//   connection errors and timeouts; a POST only when it provably never reached
//   the server (connect.ts), unless the caller knows that sending it twice is
//   harmless. Re-sending an evacuate after a lost response could start a
//   second rebuild, so the Nova client decides per action (nova.ts);
// - one metrics callback per attempt (onCall), so latency and errors are
//   visible per service, method and path template;
// - for a request that changes something, the caller's beforeSend right
//   before each attempt: a retry is sent only if it still may be (the
//   engine's Lease fence), never on a decision taken before the first attempt.
// The caller's AbortSignal ends everything at once and is never retried.

import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { neverReachedServer } from '../net/connect.ts';
import { abortableSleep } from '../time/clock.ts';
import { backoffDelay } from '../k8s/retry-on-conflict.ts';

export type HttpMethod = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';

/** One HTTP attempt, reported to onCall (e.g. to feed Prometheus). */
export interface CallRecord {
  /** 'identity' | 'compute'. */
  service: string;
  method: HttpMethod;
  /** Path with ids replaced, e.g. '/servers/{id}/action'. */
  path: string;
  /** Server action name for POST .../action ('evacuate', 'os-stop', ...). */
  action?: string;
  /** HTTP status; 0 when no response arrived (timeout or connection error). */
  status: number;
  durationMs: number;
  /** Why the attempt failed: no answer in time, no connection, an HTTP error status, or the caller gave up. */
  error?: 'timeout' | 'connection' | 'http' | 'aborted';
  /** 0 for the first attempt, 1.. for retries. */
  attempt: number;
}
export type OnCall = (record: CallRecord) => void;

export type OpenStackLogger = Pick<Logger, 'debug' | 'warn'>;

/**
 * Which failed attempts may be sent again (at most maxRetries times). A
 * failure that provably happened before the request reached the server
 * (refused, DNS, TLS handshake, connect timeout) is retried under every policy.
 * - 'idempotent': also any 5xx, timeout or other connection error. Default for
 *   GET, HEAD, PUT and DELETE, and the policy of a POST whose effect is the same
 *   however often it runs (src/openstack/nova-protocol.ts ACTION_RETRY): whether a 5xx
 *   came before or after the server acted, sending it again changes nothing.
 * - 'unsent': nothing else; the answer may have been lost after the server
 *   acted on it. Default for POST.
 */
export type RetryPolicy = 'idempotent' | 'unsent';

export interface HttpRequest {
  service: string;
  method: HttpMethod;
  url: string;
  pathTemplate: string;
  action?: string;
  headers?: Record<string, string>;
  /** Serialised as JSON when present. */
  json?: unknown;
  /** Defaults to 'idempotent' for GET, HEAD, PUT and DELETE, 'unsent' for POST. */
  retry?: RetryPolicy;
  signal?: AbortSignal;
  /** Overrides the transport's per-request timeout. */
  timeoutMs?: number;
  /** Overrides the transport's retry bound (e.g. 0 for a one-shot probe). */
  maxRetries?: number;
  /** For any method but GET and HEAD: called before every attempt; what it throws ends send() unsent. */
  beforeSend?: () => void;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, else undefined. */
  body: unknown;
  text: string;
}

/** No HTTP response: the deadline passed or the connection failed. */
export class TransportError extends Error {
  /** True when the request provably never reached the server (safe to send again, whatever it does). */
  readonly unsent: boolean;

  constructor(
    public readonly kind: 'timeout' | 'connection',
    message: string,
    options?: { cause?: unknown; unsent?: boolean },
  ) {
    super(message, options);
    this.name = 'TransportError';
    this.unsent = options?.unsent ?? false;
  }
}

export interface TransportOptions {
  dispatcher: Dispatcher;
  /** Per-attempt deadline in milliseconds. */
  timeoutMs: number;
  /** Retries after the first attempt, for the failures the request's RetryPolicy allows. */
  maxRetries: number;
  /** First backoff step; doubles per retry, full jitter, capped at backoffMaxMs. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  onCall?: OnCall;
  log?: OpenStackLogger;
  /** Injectable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

const IDEMPOTENT_METHODS: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const READ_METHODS: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD']);

/** Whether a failed attempt may be sent again under `policy`. */
export function mayRetry(policy: RetryPolicy, outcome: HttpResponse | TransportError): boolean {
  if (outcome instanceof TransportError) return outcome.unsent || policy !== 'unsent';
  if (policy === 'idempotent') return outcome.status >= 500;
  return false;
}

export class HttpTransport {
  readonly timeoutMs: number;
  readonly maxRetries: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly opts: TransportOptions) {
    if (!(opts.timeoutMs > 0)) throw new RangeError('timeoutMs must be > 0');
    if (!Number.isInteger(opts.maxRetries) || opts.maxRetries < 0) {
      throw new RangeError('maxRetries must be a non-negative integer');
    }
    this.timeoutMs = opts.timeoutMs;
    this.maxRetries = opts.maxRetries;
    this.backoffBaseMs = opts.backoffBaseMs ?? 200;
    this.backoffMaxMs = opts.backoffMaxMs ?? 5000;
    this.sleep = opts.sleep ?? abortableSleep;
    this.random = opts.random ?? Math.random;
  }

  /**
   * Sends the request, retrying as described at the top of this file. Returns
   * any HTTP response (including 4xx, and the last 5xx when retries run out);
   * throws TransportError when no response arrived, or the caller's abort reason.
   */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const policy = req.retry ?? (IDEMPOTENT_METHODS.has(req.method) ? 'idempotent' : 'unsent');
    const retries = req.maxRetries ?? this.maxRetries;
    const beforeSend = READ_METHODS.has(req.method) ? undefined : req.beforeSend;
    for (let attempt = 0; ; attempt++) {
      beforeSend?.();
      let outcome: HttpResponse | TransportError;
      try {
        outcome = await this.attempt(req, attempt);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        outcome = err;
      }
      if (!mayRetry(policy, outcome) || attempt >= retries) {
        if (outcome instanceof TransportError) throw outcome;
        return outcome;
      }
      const delay = this.backoff(attempt, outcome instanceof TransportError ? undefined : outcome);
      this.opts.log?.warn(
        {
          service: req.service,
          method: req.method,
          path: req.pathTemplate,
          ...(req.action !== undefined ? { action: req.action } : {}),
          attempt,
          delayMs: delay,
          reason: outcome instanceof TransportError ? outcome.message : `HTTP ${outcome.status}`,
        },
        'OpenStack request failed, retrying',
      );
      await this.sleep(delay, req.signal);
    }
  }

  /** Full-jitter exponential backoff; a Retry-After (seconds) raises the floor, still capped. */
  private backoff(attempt: number, res?: HttpResponse): number {
    const ceiling = backoffDelay(
      { steps: Infinity, delayMs: this.backoffBaseMs, factor: 2, jitter: 0, capMs: this.backoffMaxMs },
      attempt,
    );
    let delay = Math.round(this.random() * ceiling);
    const retryAfter = res ? Number(res.headers['retry-after']) : NaN;
    if (Number.isFinite(retryAfter) && retryAfter > 0) delay = Math.max(delay, retryAfter * 1000);
    return Math.min(delay, this.backoffMaxMs);
  }

  private async attempt(req: HttpRequest, attempt: number): Promise<HttpResponse> {
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new TransportError('timeout', `timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const onCallerAbort = () => controller.abort(req.signal?.reason);
    if (req.signal?.aborted) onCallerAbort();
    else req.signal?.addEventListener('abort', onCallerAbort, { once: true });

    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    const report = (status: number, error?: CallRecord['error']) => {
      const record: CallRecord = {
        service: req.service,
        method: req.method,
        path: req.pathTemplate,
        status,
        durationMs: performance.now() - started,
        attempt,
      };
      if (req.action !== undefined) record.action = req.action;
      if (error !== undefined) record.error = error;
      try {
        this.opts.onCall?.(record);
      } catch (hookErr) {
        this.opts.log?.warn({ err: hookErr }, 'OpenStack onCall hook threw; ignored');
      }
    };

    try {
      const res = await request(req.url, {
        dispatcher: this.opts.dispatcher,
        method: req.method,
        headers,
        body: body ?? null,
        signal: controller.signal,
        // Our own deadline governs; keep undici's below it from firing first.
        headersTimeout: timeoutMs + 1000,
        bodyTimeout: timeoutMs + 1000,
      });
      const text = await res.body.text();
      const responseHeaders: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) responseHeaders[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      }
      let parsed: unknown;
      if (text.length > 0 && /json/i.test(responseHeaders['content-type'] ?? 'application/json')) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
      }
      report(res.statusCode, res.statusCode >= 400 ? 'http' : undefined);
      this.opts.log?.debug(
        // target: this request's own path (server ids, host names; no query, never a credential) and the
        // action and attempt, so a debug log tells two calls to the same server apart
        {
          service: req.service,
          method: req.method,
          path: req.pathTemplate,
          target: new URL(req.url).pathname,
          ...(req.action !== undefined ? { action: req.action } : {}),
          attempt,
          status: res.statusCode,
        },
        'OpenStack request',
      );
      return { status: res.statusCode, headers: responseHeaders, body: parsed, text };
    } catch (err) {
      if (req.signal?.aborted && !timedOut) {
        report(0, 'aborted');
        throw req.signal.reason;
      }
      if (timedOut) {
        report(0, 'timeout');
        throw new TransportError('timeout', `${req.method} ${req.pathTemplate} timed out after ${timeoutMs} ms`, {
          cause: err,
        });
      }
      report(0, 'connection');
      const detail =
        err instanceof Error ? `${(err as { code?: string }).code ?? err.name}: ${err.message}` : String(err);
      throw new TransportError('connection', `${req.method} ${req.pathTemplate} failed: ${detail}`, {
        cause: err,
        unsent: neverReachedServer(err),
      });
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    }
  }
}
