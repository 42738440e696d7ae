// Who is calling. Two strategies, as Masakari's [DEFAULT]/auth_strategy:
//  - noauth2 (masakari/api/auth.py NoAuthMiddleware): every request is admin;
//    identity fields come from the X-User-Id / X-Project-Id / X-Roles headers
//    if present (oslo.context from_environ); X-Auth-Token is not checked.
//  - keystone (keystonemiddleware auth_token + MasakariKeystoneContext): the
//    X-Auth-Token is validated by a TokenValidator; identity headers sent by
//    the client are ignored; is_admin is the context_is_admin rule (role:admin).

import type { IncomingHttpHeaders } from 'node:http';
import type { Credentials, PolicyEnforcer } from './policy.ts';

/** What a validated token says (a subset of src/openstack/keystone.ts TokenInfo). */
export interface TokenIdentity {
  userId: string;
  userName?: string;
  projectId: string | null;
  projectName?: string | null;
  userDomainId?: string | null;
  projectDomainId?: string | null;
  domainId?: string | null;
  systemScope?: string | null;
  roles: string[];
  isAdminProject?: boolean;
}

/** Validates users' tokens (implemented over Keystone v3 with caching in src/openstack/keystone.ts). */
export interface TokenValidator {
  /**
   * The identity for a valid token; null for an invalid or expired one; throws
   * ValidationRefused (src/openstack/keystone.ts) over its bound on validations
   * in flight, the signal's reason once it fires, and any other error when
   * Keystone cannot answer.
   */
  validate(token: string, o?: { requestId?: string; signal?: AbortSignal }): Promise<TokenIdentity | null>;
}

export type AuthSettings =
  | { strategy: 'noauth2' }
  | {
      strategy: 'keystone';
      validator: TokenValidator;
      /** keystone_authtoken www_authenticate_uri, sent in WWW-Authenticate on 401. */
      wwwAuthenticateUri: string;
    };

export interface RequestContext {
  userId: string | null;
  projectId: string | null;
  roles: string[];
  isAdmin: boolean;
  credentials: Credentials;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

function firstHeader(headers: IncomingHttpHeaders, names: string[]): string | null {
  for (const n of names) {
    const v = header(headers, n);
    if (v !== undefined) return v;
  }
  return null;
}

function credentials(ctx: Omit<RequestContext, 'credentials'>, extra: Record<string, unknown>): Credentials {
  return {
    user_id: ctx.userId,
    project_id: ctx.projectId,
    roles: ctx.roles,
    is_admin: ctx.isAdmin,
    ...extra,
  };
}

/** NoAuthMiddleware: admin, with whatever identity headers the client sent. */
export function noAuthContext(headers: IncomingHttpHeaders): RequestContext {
  const rolesHeader = firstHeader(headers, ['x-roles', 'x-role']);
  const base = {
    userId: firstHeader(headers, ['x-user-id', 'x-user']),
    projectId: firstHeader(headers, ['x-project-id', 'x-tenant-id', 'x-tenant']),
    roles: rolesHeader ? rolesHeader.split(',').map((r) => r.trim()) : [],
    isAdmin: true,
  };
  return {
    ...base,
    credentials: credentials(base, {
      domain_id: firstHeader(headers, ['x-domain-id']),
      user_domain_id: firstHeader(headers, ['x-user-domain-id']),
      project_domain_id: firstHeader(headers, ['x-project-domain-id']),
      system_scope: firstHeader(headers, ['openstack-system-scope']),
      is_admin_project: (header(headers, 'x-is-admin-project') ?? 'true').toLowerCase() === 'true',
    }),
  };
}

/** keystonemiddleware's token headers (X-Auth-Token, or the older X-Storage-Token). */
export function tokenFrom(headers: IncomingHttpHeaders): string | undefined {
  const t = header(headers, 'x-auth-token') ?? header(headers, 'x-storage-token');
  const trimmed = t?.trim();
  return trimmed ? trimmed : undefined;
}

/** MasakariKeystoneContext over a validated token. */
export function keystoneContext(id: TokenIdentity, policy: PolicyEnforcer): RequestContext {
  const partial = {
    userId: id.userId,
    projectId: id.projectId,
    roles: id.roles,
    isAdmin: false,
  };
  const extra = {
    domain_id: id.domainId ?? null,
    user_domain_id: id.userDomainId ?? null,
    project_domain_id: id.projectDomainId ?? null,
    system_scope: id.systemScope ?? null,
    is_admin_project: id.isAdminProject ?? true,
  };
  // masakari/context.py: is_admin defaults to the context_is_admin rule, checked with the caller as target.
  const probe = credentials(partial, extra);
  const isAdmin = policy.check('context_is_admin', probe, probe);
  const ctx = { ...partial, isAdmin };
  return { ...ctx, credentials: credentials(ctx, extra) };
}
