// Reduces a side-by-side run's end state to what must be equal between
// Masakari 22.0.0 and us (values each side mints, timestamps and the
// scheduler's free choice of host replaced), and lists the differences leaf
// by leaf, each with the docs/compatibility.md text that explains it.
import { normaliseOutcome } from '../../test/e2e/reference-engine/normalise.ts';
import type { RunResult } from './scenario.ts';

export interface Comparable {
  notification: unknown;
  vmoves: unknown;
  hosts: unknown;
  servers: unknown;
  service: unknown;
}

export interface Difference {
  method: string;
  path: string;
  ours: unknown;
  reference: unknown;
  /** The docs/compatibility.md text that explains it, if any. */
  reason?: string;
}

/** Servers are named sbs-<tag>-<role> (scenario.ts). */
const SERVER_NAME = /sbs-[0-9a-f]{6}-([a-z0-9-]+)/g;

/** Replaces each run's own names in every string: server ids and names by role, the scheduler's host choice. */
function rename(r: RunResult): (s: string) => string {
  const ids = Object.entries(r.fleet);
  const scheduled = r.method === 'auto' || r.method === 'auto_priority';
  return (s) => {
    let out = s;
    for (const [id, role] of ids) out = out.split(id).join(`<${role}>`);
    out = out.replace(SERVER_NAME, (_, role: string) => `<name:${role}>`);
    // where the scheduler picks the target, any healthy host is the same answer
    if (scheduled) out = out.replace(/\bcpu[23]\b/g, '<healthy host>');
    return out;
  };
}

function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, mapStrings(x, f)]));
  return v;
}

const ROLE = /<([a-z0-9-]+)>/g;
const PREPARED = /^Instances to be evacuated are: '/;
/** Lists whose order is Nova's (the server list of servers booted together) or the uuids' (sorted): set-like. */
const UNORDERED = [PREPARED, /^Successfully evacuate instances '/];
/** Messages whose order is the engine's evacuation order. */
const EVACUATION_ORDER = [/^Start evacuation of instances from failed host /, /^Evacuation of instance started: /];

interface Detail {
  message?: unknown;
}
interface Task {
  progress_details?: Detail[];
}

/**
 * Progress messages that list servers: a set-like list is sorted; in the
 * evacuation order each server becomes its position in the list the Prepare
 * task wrote (`#1` = first prepared), so the comparison sees each engine's
 * order relative to what it prepared, not the random order of the run's uuids.
 */
function orderMessages(notification: Record<string, unknown>): Record<string, unknown> {
  const tasks = notification.recovery_workflow_details;
  if (!Array.isArray(tasks)) return notification;
  const messages = (tasks as Task[]).flatMap((t) => t.progress_details ?? []);
  const prepared = messages
    .map((d) => String(d.message ?? ''))
    .find((m) => PREPARED.test(m))
    ?.match(ROLE);
  const position = (role: string) => {
    const i = prepared?.indexOf(role) ?? -1;
    return i < 0 ? role : `#${i + 1}`;
  };
  const rewrite = (m: string): string => {
    if (UNORDERED.some((re) => re.test(m))) {
      const sorted = [...(m.match(ROLE) ?? [])].sort();
      let i = 0;
      return m.replace(ROLE, () => sorted[i++] as string);
    }
    if (EVACUATION_ORDER.some((re) => re.test(m))) return m.replace(ROLE, (role) => position(role));
    return m;
  };
  return {
    ...notification,
    recovery_workflow_details: (tasks as Task[]).map((t) => ({
      ...t,
      progress_details: (t.progress_details ?? []).map((d) =>
        typeof d.message === 'string' ? { ...d, message: rewrite(d.message) } : d,
      ),
    })),
  };
}

export function comparable(r: RunResult): Comparable {
  const f = rename(r);
  const renamed = mapStrings(
    { notification: r.notification, vmoves: r.vmoves, hosts: r.hosts, servers: r.servers, service: r.service },
    f,
  ) as Pick<RunResult, 'notification' | 'vmoves' | 'hosts' | 'servers' | 'service'>;
  const outcome = normaliseOutcome({
    notification: orderMessages(renamed.notification),
    vmoves: renamed.vmoves as unknown[] | string,
    hosts: renamed.hosts,
  });
  const servers = [...renamed.servers].sort((a, b) => a.role.localeCompare(b.role));
  return {
    notification: outcome.notification,
    vmoves: outcome.vmoves,
    hosts: outcome.hosts,
    servers: Object.fromEntries(servers.map(({ role, ...rest }) => [role, rest])),
    service: renamed.service,
  };
}

/**
 * Differences we know and keep, each with text of docs/compatibility.md
 * (section "Side by side on a real Nova") that explains it; compare.test.ts
 * checks the document contains it.
 */
export const KNOWN: Array<{ matches: (d: Omit<Difference, 'reason'>) => boolean; reason: string }> = [
  {
    // B2: Masakari reads the pending vmoves newest first, so it evacuates in the reverse of the prepared order
    matches: (d) =>
      [d.ours, d.reference].every((m) => typeof m === 'string' && EVACUATION_ORDER.some((re) => re.test(m))),
    reason: 'B2: ours evacuates in the order it prepared, Masakari in the reverse',
  },
];

export function explain(d: Omit<Difference, 'reason'>): string | undefined {
  return KNOWN.find((k) => k.matches(d))?.reason;
}

export function diff(method: string, ours: Comparable, reference: Comparable): Difference[] {
  const out: Difference[] = [];
  const walk = (path: string, a: unknown, b: unknown): void => {
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(`${path}[${i}]`, a[i], b[i]);
      return;
    }
    if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(path ? `${path}.${k}` : k, a[k], b[k]);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      const d = { method, path, ours: a, reference: b };
      out.push({ ...d, reason: explain(d) });
    }
  };
  walk('', ours, reference);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
