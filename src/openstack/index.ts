// Entry points of the OpenStack client library. It knows nothing about the
// operator: give it credentials and options, get a NovaClient and a token
// validator that share one Keystone login and one connection pool.

import type { OpenStackCredentials } from './credentials.ts';
import type { OnCall, OpenStackLogger } from './http.ts';
import { TokenValidator } from './token-validator.ts';
import type { TokenValidationObserver } from './token-validator.ts';
import { normalizeInterface } from './catalog.ts';
import { HttpNovaClient } from './nova.ts';
import { OpenStackSession } from './session.ts';
import type { SessionOptions } from './session.ts';

export type { OpenStackCredentials, PasswordCredentials, ApplicationCredentials } from './credentials.ts';
export type { CallRecord, OnCall, OpenStackLogger } from './http.ts';
export type { TokenInfo, KeystoneToken } from './keystone.ts';
export type { CatalogEntry, EndpointFilter, EndpointInterface } from './catalog.ts';
export { KeystoneError, KeystoneAuth } from './keystone.ts';
export { TokenValidator, ValidationRefused } from './token-validator.ts';
export type { TokenLookup, TokenValidationObserver, TokenValidationResult } from './token-validator.ts';
export { EndpointNotFound, parseCatalogInfo, normalizeInterface, selectEndpoint } from './catalog.ts';
export { HttpNovaClient, MIN_NOVA_MICROVERSION } from './nova.ts';
export { OpenStackSession } from './session.ts';
export { TransportError } from './http.ts';
export * from './types.ts';

export interface SessionSettings {
  /** Per-request deadline in ms (openstack_request_timeout × 1000). */
  timeoutMs: number;
  /** Retries for idempotent requests (openstack_max_retries). */
  maxRetries: number;
  log?: OpenStackLogger;
  onCall?: OnCall;
  /** Test hook: e.g. an undici MockAgent. */
  dispatcher?: SessionOptions['dispatcher'];
}

export function createOpenStackSession(creds: OpenStackCredentials, opts: SessionSettings): OpenStackSession {
  return new OpenStackSession(creds, opts);
}

export interface NovaClientSettings extends SessionSettings {
  /** nova_catalog_admin_info, default 'compute:nova:publicURL'. */
  catalogInfo?: string;
  /** os_region_name. */
  region?: string | null;
  /** Overrides the interface in catalogInfo. */
  interface?: string | null;
  /** Default '2.53' (>= 2.53). */
  microversion?: string;
  endpointOverride?: string;
}

/** The session given, to share its login, or a new one for the credentials. */
const sessionOf = (credsOrSession: OpenStackCredentials | OpenStackSession, opts: SessionSettings): OpenStackSession =>
  credsOrSession instanceof OpenStackSession ? credsOrSession : createOpenStackSession(credsOrSession, opts);

/** A NovaClient; pass an existing session to share its login, else one is created (client.session). */
export function createNovaClient(
  credsOrSession: OpenStackCredentials | OpenStackSession,
  opts: NovaClientSettings,
): HttpNovaClient {
  return new HttpNovaClient(sessionOf(credsOrSession, opts), {
    catalogInfo: opts.catalogInfo ?? 'compute:nova:publicURL',
    region: opts.region ?? null,
    interface: opts.interface ?? null,
    microversion: opts.microversion ?? '2.53',
    ...(opts.endpointOverride ? { endpointOverride: opts.endpointOverride } : {}),
  });
}

export interface TokenValidatorSettings extends SessionSettings {
  /** keystone_authtoken.token_cache_time in ms: upper bound of a cached validation. */
  cacheTtlMs: number;
  /** Default 1000 valid tokens. */
  maxEntries?: number;
  /** How long an invalid token is remembered (default 10 s, at most cacheTtlMs). */
  negativeTtlMs?: number;
  /** Default 10000 invalid tokens, in a cache of their own. */
  negativeMaxEntries?: number;
  /** Validations running at once (default 20). */
  maxInFlight?: number;
  /** Validations started per second (default 50). */
  maxPerSecond?: number;
  /** Deadline and retries of one validation request, when they differ from the session's. */
  validationTimeoutMs?: number;
  validationMaxRetries?: number;
  observer?: TokenValidationObserver;
  /** keystone_authtoken.interface; when set, validate against the catalog's identity endpoint. */
  interface?: string | null;
  region?: string | null;
}

/** Validates users' tokens for the facade's keystone auth strategy. */
export function createTokenValidator(
  credsOrSession: OpenStackCredentials | OpenStackSession,
  opts: TokenValidatorSettings,
): TokenValidator {
  const session = sessionOf(credsOrSession, opts);
  const defined = <K extends string, V>(k: K, v: V | undefined) => (v !== undefined ? { [k]: v } : {});
  return new TokenValidator(session.auth, session.transport, {
    cacheTtlMs: opts.cacheTtlMs,
    ...defined('maxEntries', opts.maxEntries),
    ...defined('negativeTtlMs', opts.negativeTtlMs),
    ...defined('negativeMaxEntries', opts.negativeMaxEntries),
    ...defined('maxInFlight', opts.maxInFlight),
    ...defined('maxPerSecond', opts.maxPerSecond),
    ...defined('timeoutMs', opts.validationTimeoutMs),
    ...defined('maxRetries', opts.validationMaxRetries),
    ...defined('observer', opts.observer),
    ...(opts.interface ? { interface: normalizeInterface(opts.interface) } : {}),
    region: opts.region ?? null,
  });
}
