// Keystone v3: log in with a password or an application credential, keep the
// token until shortly before it expires, and validate users' tokens for the
// API facade (what keystonemiddleware's auth_token does for Masakari).

import { createHash } from 'node:crypto';
import type { CatalogEntry, EndpointInterface } from './catalog.ts';
import { selectEndpoint } from './catalog.ts';
import type { OpenStackCredentials } from './credentials.ts';
import { isApplicationCredentials } from './credentials.ts';
import type { HttpResponse, HttpTransport } from './http.ts';
import { ExpiringLru } from './lru.ts';
import type { CallOptions } from './types.ts';

/** Keystone answered with an error status (401 bad credentials, 403 not allowed, ...). */
export class KeystoneError extends Error {
  constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'KeystoneError';
  }
}

/** What a token says about its holder (the body of POST/GET /v3/auth/tokens). */
export interface TokenInfo {
  userId: string;
  userName: string;
  userDomainId: string | null;
  userDomainName: string | null;
  projectId: string | null;
  projectName: string | null;
  projectDomainId: string | null;
  projectDomainName: string | null;
  /** Set for domain-scoped tokens. */
  domainId: string | null;
  domainName: string | null;
  /** 'all' for a system-scoped token, else null. */
  systemScope: string | null;
  roles: string[];
  expiresAt: Date;
  isAdminProject: boolean;
}

/** Our own token, with its id and the service catalog. */
export interface KeystoneToken extends TokenInfo {
  id: string;
  issuedAt: Date | null;
  catalog: CatalogEntry[];
}

/** Accepts `http://host:5000`, `http://host/identity` and `.../v3` alike. */
export function identityV3Url(authUrl: string): string {
  const trimmed = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(trimmed) ? trimmed : `${trimmed}/v3`;
}

export function buildAuthRequest(creds: OpenStackCredentials): unknown {
  if (isApplicationCredentials(creds)) {
    const appCred: Record<string, unknown> = { secret: creds.application_credential_secret };
    if (creds.application_credential_id) {
      appCred.id = creds.application_credential_id;
    } else if (creds.application_credential_name) {
      appCred.name = creds.application_credential_name;
      const user: Record<string, unknown> = {};
      if (creds.user_id) user.id = creds.user_id;
      else if (creds.username) {
        user.name = creds.username;
        user.domain = creds.user_domain_id
          ? { id: creds.user_domain_id }
          : { name: creds.user_domain_name ?? 'Default' };
      } else {
        throw new Error('An application credential given by name also needs username (or user_id)');
      }
      appCred.user = user;
    } else {
      throw new Error('Application credential auth needs application_credential_id or application_credential_name');
    }
    // The scope is fixed by the application credential; Keystone rejects an explicit one.
    return { auth: { identity: { methods: ['application_credential'], application_credential: appCred } } };
  }
  const user: Record<string, unknown> = {
    name: creds.username,
    password: creds.password,
    domain: creds.user_domain_id ? { id: creds.user_domain_id } : { name: creds.user_domain_name ?? 'Default' },
  };
  let scope: unknown;
  if (creds.system_scope) {
    scope = { system: { [creds.system_scope]: true } };
  } else if (creds.project_id) {
    scope = { project: { id: creds.project_id } };
  } else if (creds.project_name) {
    scope = {
      project: {
        name: creds.project_name,
        domain: creds.project_domain_id
          ? { id: creds.project_domain_id }
          : { name: creds.project_domain_name ?? 'Default' },
      },
    };
  }
  const auth: Record<string, unknown> = { identity: { methods: ['password'], password: { user } } };
  if (scope) auth.scope = scope;
  return { auth };
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

export function parseTokenInfo(body: unknown): TokenInfo {
  const token = obj(obj(body).token);
  const expiresAt = new Date(str(token.expires_at) ?? '');
  if (Number.isNaN(expiresAt.getTime())) throw new KeystoneError(502, 'Keystone token has no valid expires_at');
  const user = obj(token.user);
  const project = token.project ? obj(token.project) : null;
  const domain = token.domain ? obj(token.domain) : null;
  const system = token.system ? obj(token.system) : null;
  return {
    userId: str(user.id) ?? '',
    userName: str(user.name) ?? '',
    userDomainId: str(obj(user.domain).id),
    userDomainName: str(obj(user.domain).name),
    projectId: project ? str(project.id) : null,
    projectName: project ? str(project.name) : null,
    projectDomainId: project ? str(obj(project.domain).id) : null,
    projectDomainName: project ? str(obj(project.domain).name) : null,
    domainId: domain ? str(domain.id) : null,
    domainName: domain ? str(domain.name) : null,
    systemScope: system ? (Object.keys(system).find((k) => system[k] === true) ?? null) : null,
    roles: Array.isArray(token.roles) ? token.roles.map((r) => str(obj(r).name)).filter((n): n is string => !!n) : [],
    expiresAt,
    // keystoneauth1/access/access.py AccessInfoV3.is_admin_project: Keystone
    // sends the field only when an admin project is configured, and a token
    // without it counts as one of the admin project.
    isAdminProject: token.is_admin_project !== false,
  };
}

export function keystoneErrorMessage(res: HttpResponse): string {
  const err = obj(obj(res.body).error);
  return str(err.message) ?? (res.text.slice(0, 200) || `HTTP ${res.status}`);
}

export interface KeystoneAuthOptions {
  /** Refresh this long before expires_at (capped at a quarter of the token's lifetime). */
  refreshMarginMs?: number;
  now?: () => number;
}

/** Holds one service token; concurrent callers share a single login. */
export class KeystoneAuth {
  readonly identityUrl: string;
  private current: KeystoneToken | undefined;
  /** Local-clock time after which the token is replaced. */
  private refreshAtMs = 0;
  private pending: Promise<KeystoneToken> | undefined;
  private readonly refreshMarginMs: number;
  private readonly now: () => number;

  constructor(
    private readonly creds: OpenStackCredentials,
    private readonly transport: HttpTransport,
    opts: KeystoneAuthOptions = {},
  ) {
    this.identityUrl = identityV3Url(creds.auth_url);
    // keystoneauth treats a token as stale 120 s before expiry; same default here.
    this.refreshMarginMs = opts.refreshMarginMs ?? 120_000;
    this.now = opts.now ?? Date.now;
  }

  /** A token that is valid for a while yet, logging in if needed. */
  async token(o: CallOptions = {}): Promise<KeystoneToken> {
    const t = this.current;
    if (t && this.now() < this.refreshAtMs) return t;
    // The login is shared, so it runs without any one caller's signal (it has
    // the transport's deadline); each caller stops waiting on its own abort.
    this.pending ??= this.login(o.requestId).finally(() => {
      this.pending = undefined;
    });
    return untilAborted(this.pending, o.signal);
  }

  /** Drops the token if it is still the cached one (after a 401 from a service). */
  invalidate(tokenId: string): void {
    if (this.current?.id === tokenId) this.current = undefined;
  }

  private async login(requestId: string | undefined): Promise<KeystoneToken> {
    const headers: Record<string, string> = {};
    if (requestId) headers['x-openstack-request-id'] = requestId;
    const res = await this.transport.send({
      service: 'identity',
      method: 'POST',
      url: `${this.identityUrl}/auth/tokens`,
      pathTemplate: '/v3/auth/tokens',
      headers,
      json: buildAuthRequest(this.creds),
      // Issuing a token has no side effect worth protecting, so it may be retried.
      retry: 'idempotent',
    });
    if (res.status !== 201 && res.status !== 200) {
      throw new KeystoneError(res.status, `Keystone login failed (HTTP ${res.status}): ${keystoneErrorMessage(res)}`);
    }
    const id = res.headers['x-subject-token'];
    if (!id) throw new KeystoneError(502, 'Keystone login response has no X-Subject-Token header');
    const info = parseTokenInfo(res.body);
    const token = obj(obj(res.body).token);
    const issued = new Date(str(token.issued_at) ?? '');
    const t: KeystoneToken = {
      ...info,
      id,
      issuedAt: Number.isNaN(issued.getTime()) ? null : issued,
      catalog: Array.isArray(token.catalog) ? (token.catalog as CatalogEntry[]) : [],
    };
    // Measure the lifetime with Keystone's own two timestamps and count it from
    // our clock, so clock skew between us and Keystone cannot make every token
    // look stale (or immortal).
    const obtainedAt = this.now();
    const lifetime = t.issuedAt ? t.expiresAt.getTime() - t.issuedAt.getTime() : t.expiresAt.getTime() - obtainedAt;
    this.refreshAtMs = obtainedAt + lifetime - Math.min(this.refreshMarginMs, lifetime / 4);
    this.current = t;
    return t;
  }
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

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
    this.now = opts.now ?? Date.now;
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
