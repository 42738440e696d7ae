// The Nova API's request plumbing the simulator's handlers share: faults
// ({"itemNotFound": {"code": 404, "message": "..."}}, nova/api/openstack/wsgi.py
// Fault), microversion negotiation (api_version_request.py), body checks and
// limit/marker paging (nova/api/openstack/common.py).

import type { SimRequest, SimResponse } from './router.ts';
import type { SimState } from './state.ts';
import type { SimToken } from './records.ts';

/** Nova 34.0.0's range (nova/api/openstack/api_version_request.py). */
export const NOVA_MIN_MICROVERSION = { major: 2, minor: 1 };
export const NOVA_MAX_MICROVERSION = { major: 2, minor: 104 };

const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export function novaFault(status: number, message: string): SimResponse {
  return { status, body: { [FAULT_NAMES[status] ?? 'computeFault']: { code: status, message } } };
}

export interface Version {
  major: number;
  minor: number;
}
export const atLeast = (v: Version, minor: number) => v.major > 2 || (v.major === 2 && v.minor >= minor);

export interface NovaCtx {
  token: SimToken;
  admin: boolean;
  version: Version;
}

export type NovaHandler = (req: SimRequest, params: Record<string, string>, ctx: NovaCtx) => SimResponse;

export class Fault extends Error {
  constructor(readonly response: SimResponse) {
    super('nova fault');
  }
}
export const fail = (status: number, message: string): never => {
  throw new Fault(novaFault(status, message));
};

export function requireAdmin(ctx: NovaCtx, policy: string): void {
  if (!ctx.admin) fail(403, `Policy doesn't allow ${policy} to be performed.`);
}

export function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Version from `OpenStack-API-Version: compute X.Y` or the legacy header; 2.1 when absent. */
export function requestedVersion(req: SimRequest): Version | SimResponse {
  let raw: string | undefined;
  const modern = header(req.headers['openstack-api-version']);
  if (modern) {
    for (const part of modern.split(',')) {
      const [service, value] = part.trim().split(/\s+/);
      if (service?.toLowerCase() === 'compute' && value) raw = value;
    }
  }
  raw ??= header(req.headers['x-openstack-nova-api-version']);
  if (!raw) return NOVA_MIN_MICROVERSION;
  if (raw.toLowerCase() === 'latest') return NOVA_MAX_MICROVERSION;
  const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(raw);
  if (!m) {
    return novaFault(400, `API Version String ${raw} is of invalid format. Must be of format MajorNum.MinorNum.`);
  }
  const v = { major: Number(m[1]), minor: Number(m[2]) };
  const cmp = (a: Version, b: Version) => a.major - b.major || a.minor - b.minor;
  if (cmp(v, NOVA_MIN_MICROVERSION) < 0 || cmp(v, NOVA_MAX_MICROVERSION) > 0) {
    return novaFault(
      406,
      `Version ${v.major}.${v.minor} is not supported by the API. Minimum is ${NOVA_MIN_MICROVERSION.major}.${NOVA_MIN_MICROVERSION.minor} and maximum is ${NOVA_MAX_MICROVERSION.major}.${NOVA_MAX_MICROVERSION.minor}.`,
    );
  }
  return v;
}

function nonNegativeInt(value: string | null, name: string): number | undefined {
  if (value === null) return undefined;
  if (!/^\d+$/.test(value))
    fail(400, `Invalid input for query parameters ${name}. Value: ${value}. '${value}' does not match '^[0-9]*$'`);
  return Number(value);
}

/** limit/marker paging and the rel=next link, as nova/api/openstack/common.py does it. */
export function page<T>(
  state: SimState,
  req: SimRequest,
  items: T[],
  idOf: (t: T) => string,
  collection: string,
  markerMissing: (marker: string) => string,
): { items: T[]; links?: unknown[] } {
  const requested = nonNegativeInt(req.query.get('limit'), 'limit');
  const limit = Math.min(requested ?? state.maxLimit, state.maxLimit);
  const marker = req.query.get('marker');
  let start = 0;
  if (marker !== null) {
    const i = items.findIndex((t) => idOf(t) === marker);
    if (i < 0) fail(400, markerMissing(marker));
    start = i + 1;
  }
  const slice = items.slice(start, start + limit);
  if (limit > 0 && slice.length === limit) {
    const params = new URLSearchParams([...req.query.entries()].filter(([k]) => k !== 'marker').sort());
    params.set('marker', idOf(slice[slice.length - 1] as T));
    return { items: slice, links: [{ rel: 'next', href: `${req.origin}/compute/v2.1/${collection}?${params}` }] };
  }
  return { items: slice };
}

export function objectBody(req: SimRequest): Record<string, unknown> {
  const b = req.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) fail(400, 'Malformed request body');
  return b as Record<string, unknown>;
}

export function onlyKeys(field: string, value: Record<string, unknown>, allowed: string[]): void {
  const extra = Object.keys(value).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    fail(
      400,
      `Invalid input for field/attribute ${field}. Value: ${JSON.stringify(value)}. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  }
}
