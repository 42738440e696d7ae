// Keystone v3: log in with a password or an application credential, and keep
// the token until shortly before it expires; what a token says about its
// holder (parseTokenInfo). Validating users' tokens is token-validator.ts.

import type { CatalogEntry } from './catalog.ts';
import type { OpenStackCredentials } from './credentials.ts';
import { isApplicationCredentials } from './credentials.ts';
import type { HttpResponse, HttpTransport } from './http.ts';
import type { CallOptions } from './types.ts';
import { systemNowMs } from '../time/clock.ts';

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
    this.now = opts.now ?? systemNowMs;
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
