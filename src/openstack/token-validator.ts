// Validating users' tokens for the API facade, as keystonemiddleware's
// auth_token does for Masakari, with bounds on the cache, on the validations
// under way and on their rate (TokenValidator's comment). Logging in and
// keeping the operator's own token is keystone.ts.

import { createHash } from 'node:crypto';
import type { EndpointInterface } from './catalog.ts';
import { selectEndpoint } from './catalog.ts';
import type { HttpResponse, HttpTransport } from './http.ts';
import type { KeystoneAuth, KeystoneToken, TokenInfo } from './keystone.ts';
import { identityV3Url, KeystoneError, keystoneErrorMessage, parseTokenInfo } from './keystone.ts';
import { ExpiringLru } from './lru.ts';
import type { CallOptions } from './types.ts';
import { systemNowMs } from '../time/clock.ts';

export interface TokenValidatorOptions {
  /** Upper bound on how long a validation result is reused (keystone_authtoken token_cache_time). */
  cacheTtlMs: number;
  /** How many distinct valid tokens to remember. */
  maxEntries?: number;
  /** Identity endpoint for validation calls; defaults to the auth_url. */
  interface?: EndpointInterface;
  region?: string | null;
  /** Invalid tokens are remembered for at most this long, so a repeated bad token does not reach Keystone. */
  negativeTtlMs?: number;
  /** How many distinct invalid tokens to remember, apart from the valid ones so that they cannot evict them. */
  negativeMaxEntries?: number;
  /** Validations (Keystone calls with their retries) running at once; one more is refused with ValidationRefused. */
  maxInFlight?: number;
  /** Validations started per second, on average (token bucket whose burst is maxInFlight). */
  maxPerSecond?: number;
  /** Deadline of one validation request (keystone_authtoken http_connect_timeout); the transport's when unset. */
  timeoutMs?: number;
  /** Retries of one validation request (keystone_authtoken http_request_max_retries); the transport's when unset. */
  maxRetries?: number;
  /** Told about every lookup, every validation's end and every refusal (the API's metrics). */
  observer?: TokenValidationObserver;
  now?: () => number;
}

/** How a lookup was answered: from the cache, by joining a validation already under way, or by a new one. */
export type TokenLookup = 'hit' | 'miss' | 'shared';
/** How a validation (one or more Keystone calls) ended. */
export type TokenValidationResult = 'valid' | 'invalid' | 'error' | 'cancelled';

export interface TokenValidationObserver {
  lookup(kind: TokenLookup): void;
  validated(result: TokenValidationResult): void;
  refused(): void;
  inFlight(n: number): void;
}

/** Too many validations under way or started this second: the caller is asked to come back later. */
export class ValidationRefused extends Error {
  constructor(public readonly retryAfterSeconds: number) {
    super('Too many token validations in flight; try again later');
    this.name = 'ValidationRefused';
  }
}

/** One validation under way, shared by every request that carries the same token. */
interface Flight {
  key: string;
  promise: Promise<TokenInfo | null>;
  waiters: number;
  controller: AbortController;
}

/**
 * Validates users' tokens (GET /v3/auth/tokens with our token as X-Auth-Token
 * and theirs as X-Subject-Token), as keystonemiddleware's auth_token does,
 * with the bounds it lacks so that a flood of made-up tokens cannot become a
 * flood on Keystone nor push real tokens out of the cache:
 *  - results are cached by a SHA-256 of the token, valid ones never beyond
 *    cacheTtlMs nor their expires_at, invalid ones for negativeTtlMs in a cache
 *    of their own;
 *  - concurrent requests with one token share one validation;
 *  - at most maxInFlight validations run at once and about maxPerSecond start
 *    per second; beyond that validate() throws ValidationRefused at once;
 *  - a validation whose every waiter has gone (aborted) is aborted.
 */
export class TokenValidator {
  private readonly cache: ExpiringLru<TokenInfo> | undefined;
  private readonly invalid: ExpiringLru<null> | undefined;
  private readonly flights = new Map<string, Flight>();
  private readonly now: () => number;
  private readonly maxInFlight: number;
  private readonly maxPerSecond: number;
  private readonly negativeTtlMs: number;
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly auth: KeystoneAuth,
    private readonly transport: HttpTransport,
    private readonly opts: TokenValidatorOptions,
  ) {
    this.now = opts.now ?? systemNowMs;
    this.maxInFlight = opts.maxInFlight ?? 20;
    this.maxPerSecond = opts.maxPerSecond ?? 50;
    if (!Number.isInteger(this.maxInFlight) || this.maxInFlight < 1) throw new RangeError('maxInFlight must be >= 1');
    if (!(this.maxPerSecond > 0)) throw new RangeError('maxPerSecond must be > 0');
    this.negativeTtlMs = Math.min(opts.negativeTtlMs ?? 10_000, opts.cacheTtlMs);
    // token_cache_time -1 (or 0) disables caching, as in keystonemiddleware.
    if (opts.cacheTtlMs > 0) {
      this.cache = new ExpiringLru(opts.maxEntries ?? 1000, this.now);
      if (this.negativeTtlMs > 0) this.invalid = new ExpiringLru(opts.negativeMaxEntries ?? 10_000, this.now);
    }
    this.tokens = this.burst;
    this.refilledAt = this.now();
  }

  /** Valid tokens remembered. */
  get cacheSize(): number {
    return this.cache?.size ?? 0;
  }

  /** Invalid tokens remembered. */
  get invalidCacheSize(): number {
    return this.invalid?.size ?? 0;
  }

  /** Validations under way. */
  get inFlight(): number {
    return this.flights.size;
  }

  private get burst(): number {
    return Math.max(this.maxInFlight, this.maxPerSecond);
  }

  /**
   * TokenInfo for a valid token, null for an invalid or expired one; throws
   * ValidationRefused over the bounds, the caller's abort reason when its
   * signal fires, and KeystoneError/TransportError when Keystone cannot answer.
   */
  async validate(userToken: string, o: CallOptions = {}): Promise<TokenInfo | null> {
    const key = createHash('sha256').update(userToken).digest('hex');
    const cached = this.cache?.get(key) ?? this.invalid?.get(key);
    if (cached !== undefined) {
      this.opts.observer?.lookup('hit');
      return cached;
    }
    let flight = this.flights.get(key);
    if (flight) {
      this.opts.observer?.lookup('shared');
    } else {
      if (this.flights.size >= this.maxInFlight || !this.takeToken()) {
        this.opts.observer?.refused();
        throw new ValidationRefused(1);
      }
      this.opts.observer?.lookup('miss');
      flight = this.start(key, userToken, o.requestId);
    }
    return this.wait(flight, o.signal);
  }

  /** Token bucket: maxPerSecond tokens a second, at most `burst` saved up. */
  private takeToken(): boolean {
    const now = this.now();
    // A clock stepped back refills nothing rather than draining the bucket.
    const elapsedMs = Math.max(0, now - this.refilledAt);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs / 1000) * this.maxPerSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private start(key: string, userToken: string, requestId: string | undefined): Flight {
    const controller = new AbortController();
    const o: CallOptions = { signal: controller.signal, ...(requestId ? { requestId } : {}) };
    const promise = this.ask(key, userToken, o).then(
      (info) => {
        this.opts.observer?.validated(info ? 'valid' : 'invalid');
        return info;
      },
      (err: unknown) => {
        this.opts.observer?.validated(controller.signal.aborted ? 'cancelled' : 'error');
        throw err;
      },
    );
    const flight: Flight = { key, promise, waiters: 0, controller };
    this.flights.set(key, flight);
    this.opts.observer?.inFlight(this.flights.size);
    promise
      .finally(() => {
        if (this.flights.get(key) === flight) this.flights.delete(key);
        this.opts.observer?.inFlight(this.flights.size);
      })
      .catch(() => undefined);
    return flight;
  }

  /** Waits for the flight; the last waiter to give up aborts it. */
  private wait(flight: Flight, signal: AbortSignal | undefined): Promise<TokenInfo | null> {
    flight.waiters++;
    if (!signal) return flight.promise;
    const leave = () => {
      flight.waiters--;
      if (flight.waiters > 0) return;
      // A request with the same token arriving now starts afresh rather than joining an aborted call.
      if (this.flights.get(flight.key) === flight) this.flights.delete(flight.key);
      flight.controller.abort(signal.reason);
    };
    if (signal.aborted) {
      leave();
      return Promise.reject(signal.reason);
    }
    return new Promise<TokenInfo | null>((resolve, reject) => {
      const onAbort = () => {
        leave();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async ask(key: string, userToken: string, o: CallOptions): Promise<TokenInfo | null> {
    const service = await this.auth.token(o);
    let res = await this.request(userToken, service, o);
    if (res.status === 401) {
      // Our own token was revoked or expired early: log in again, once.
      this.auth.invalidate(service.id);
      res = await this.request(userToken, await this.auth.token(o), o);
    }
    const now = this.now();
    if (res.status === 404) {
      this.invalid?.set(key, null, now + this.negativeTtlMs);
      return null;
    }
    if (res.status !== 200) {
      throw new KeystoneError(
        res.status,
        `Keystone token validation failed (HTTP ${res.status}): ${keystoneErrorMessage(res)}`,
      );
    }
    const info = parseTokenInfo(res.body);
    if (info.expiresAt.getTime() <= now) {
      this.invalid?.set(key, null, now + this.negativeTtlMs);
      return null;
    }
    this.cache?.set(key, info, Math.min(now + this.opts.cacheTtlMs, info.expiresAt.getTime()));
    return info;
  }

  private async request(userToken: string, service: KeystoneToken, o: CallOptions): Promise<HttpResponse> {
    const headers: Record<string, string> = { 'x-auth-token': service.id, 'x-subject-token': userToken };
    if (o.requestId) headers['x-openstack-request-id'] = o.requestId;
    return this.transport.send({
      service: 'identity',
      method: 'GET',
      url: `${this.validationUrl(service)}/auth/tokens?nocatalog`,
      pathTemplate: '/v3/auth/tokens',
      headers,
      signal: o.signal,
      ...(this.opts.timeoutMs !== undefined ? { timeoutMs: this.opts.timeoutMs } : {}),
      ...(this.opts.maxRetries !== undefined ? { maxRetries: this.opts.maxRetries } : {}),
    });
  }

  private validationUrl(service: KeystoneToken): string {
    if (this.opts.interface) {
      try {
        const filter = { serviceType: 'identity', interface: this.opts.interface, region: this.opts.region ?? null };
        return identityV3Url(selectEndpoint(service.catalog, filter));
      } catch {
        // No identity entry in the catalog: the auth_url is the identity endpoint.
      }
    }
    return this.auth.identityUrl;
  }
}
