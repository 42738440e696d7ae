// Nova's wire protocol as the HTTP client (nova.ts) speaks it: which
// microversions it needs, which POST actions may be sent twice
// (ACTION_RETRY), how Nova and Glance word their faults and how a failure
// becomes a NovaError (as masakari/compute/nova.py translates them), and how
// a response's lists, objects and next-page links are read.

import { EndpointNotFound } from './catalog.ts';
import type { HttpResponse, RetryPolicy } from './http.ts';
import { TransportError } from './http.ts';
import { KeystoneError } from './keystone.ts';
import type { CallOptions } from './types.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaForbidden, NovaNotFound } from './types.ts';

/** Service uuids as ids and PUT /os-services/{uuid} need 2.53 (Masakari's NOVA_API_VERSION). */
export const MIN_NOVA_MICROVERSION = '2.53';
/** 2.59 adds migration uuids and limit/marker paging to GET /os-migrations. */
export const MIGRATIONS_PAGING_MICROVERSION = '2.59';
/**
 * From 2.95 Nova leaves every evacuated server stopped at the destination.
 * Masakari (at 2.53) relies on an active server coming back active, so the
 * evacuate action is never sent above 2.94, whatever nova_api_version says.
 */
export const EVACUATE_MAX_MICROVERSION = '2.94';
/**
 * Which failures of each POST action are sent again (http.ts RetryPolicy).
 * Every action is re-sent when it provably never reached Nova ('unsent');
 * 'idempotent' adds any 5xx, timeouts and dropped connections, where Nova may
 * or may not have acted: only for actions whose repetition changes nothing
 * (nova/compute/api.py, nova/api/openstack/compute/*.py of Nova 34). A 500
 * counts too: whether Nova failed before acting or its answer was lost after
 * (a proxy in between), the repeat ends in the state the first call meant.
 */
export const ACTION_RETRY: Readonly<Record<string, RetryPolicy>> = {
  // Sets instance.locked (an admin re-locking rewrites the same values; an
  // owner's lock on a locked server returns at once): no state check, no 409.
  lock: 'idempotent',
  // Clears instance.locked whatever it was: no state check, no 409.
  unlock: 'idempotent',
  // Writes vm_state and clears task_state, synchronously: the same end state
  // however often it runs, and no state check that a repeat could trip.
  'os-resetState': 'idempotent',
  // Not repeatable: a stop that got through leaves the server powering-off or
  // stopped, and Nova answers a second one with 409. StopInstanceTask accepts
  // that 409 only once the server reads stopped (upstream's rule, so a server
  // still powering off fails the recovery) and the stop after an evacuation
  // accepts none, so a retry could turn a success into a failure.
  'os-stop': 'unsent',
  // Same for start: 409 while powering-on or once active, and
  // StartInstanceTask fails on any error.
  'os-start': 'unsent',
  // Never blindly: a lost answer may mean Nova already started a rebuild, and a
  // second evacuate would race it or be refused. The evacuation procedure
  // (src/engine/workflows/prior-evacuation.ts, inspectPriorEvacuation) decides on the next
  // attempt or resumed run: a server already on another host is confirmed,
  // task_state rebuilding or an evacuation migration from the failed host
  // created after the journalled intent is waited for or failed, and only when
  // none holds is evacuate sent again.
  evacuate: 'unsent',
  // A repeated add_host answers 409 (AggregateHostExists), which the reserved
  // host workflow, like Masakari, takes as "already added".
  add_host: 'idempotent',
};

export interface Microversion {
  major: number;
  minor: number;
}

export function parseMicroversion(value: string): Microversion {
  const m = /^(\d+)\.(\d+)$/.exec(value.trim());
  if (!m) throw new Error(`Invalid Nova microversion '${value}': expected <major>.<minor>, e.g. 2.53`);
  return { major: Number(m[1]), minor: Number(m[2]) };
}

export function compareMicroversions(a: string, b: string): number {
  const x = parseMicroversion(a);
  const y = parseMicroversion(b);
  return x.major - y.major || x.minor - y.minor;
}

/** The message Nova put in its fault body ({"itemNotFound": {"code": 404, "message": "..."}}). */
export function novaFaultMessage(res: HttpResponse): string {
  const body = res.body;
  if (body && typeof body === 'object') {
    for (const v of Object.values(body as Record<string, unknown>)) {
      const msg = v && typeof v === 'object' ? (v as { message?: unknown }).message : undefined;
      if (typeof msg === 'string') return msg;
    }
  }
  return res.text.trim().slice(0, 500) || `HTTP ${res.status}`;
}

export function novaErrorFor(status: number, message: string): NovaError {
  switch (status) {
    case 400:
      return new NovaBadRequest(status, message);
    case 403:
      return new NovaForbidden(status, message);
    case 404:
      return new NovaNotFound(status, message);
    case 409:
      return new NovaConflict(status, message);
    default:
      return new NovaError(status, message);
  }
}

export function setName(err: NovaError): NovaError {
  err.name = err.constructor.name;
  return err;
}

/** Glance's fault body is flat ({"message": "...", "code": "404 Not Found"}); Nova's nests it. */
export function glanceFaultMessage(res: HttpResponse): string {
  const msg = (res.body as { message?: unknown } | undefined)?.message;
  return typeof msg === 'string' ? msg : novaFaultMessage(res);
}

export function translateFailure(err: unknown, o: CallOptions): unknown {
  if (o.signal?.aborted) return err;
  if (err instanceof TransportError) return setName(new NovaError(0, err.message));
  if (err instanceof KeystoneError) return setName(new NovaError(err.status === 502 ? 0 : err.status, err.message));
  if (err instanceof EndpointNotFound) return setName(new NovaError(0, err.message));
  return err;
}

export function retryPolicyOf(action: string): RetryPolicy {
  return ACTION_RETRY[action] ?? 'unsent';
}

export function enc(s: string): string {
  return encodeURIComponent(s);
}

export function query(params: Record<string, string | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.append(k, v);
  const s = qs.toString();
  return s ? `?${s}` : '';
}

export function array<T>(res: HttpResponse, key: string): T[] {
  const v = (res.body as Record<string, unknown> | undefined)?.[key];
  if (!Array.isArray(v)) throw setName(new NovaError(res.status, `Nova response has no '${key}' list`));
  return v as T[];
}

export function field<T>(res: HttpResponse, key: string): T {
  const v = (res.body as Record<string, unknown> | undefined)?.[key];
  if (!v || typeof v !== 'object') throw setName(new NovaError(res.status, `Nova response has no '${key}' object`));
  return v as T;
}

export function nextPage(res: HttpResponse, linksKey: string): { marker: string; limit?: string } | undefined {
  const links = (res.body as Record<string, unknown> | undefined)?.[linksKey];
  if (!Array.isArray(links)) return undefined;
  const next = links.find((l: { rel?: string; href?: string }) => l?.rel === 'next' && typeof l.href === 'string');
  if (!next) return undefined;
  const params = new URL(next.href as string, 'http://placeholder').searchParams;
  const marker = params.get('marker');
  if (!marker) return undefined;
  const limit = params.get('limit');
  return limit ? { marker, limit } : { marker };
}
