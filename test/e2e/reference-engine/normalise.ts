// Reduces a notification and its vmoves to what a client compares between
// the two engines, with values that legitimately differ (uuids minted by
// each side, timestamps) replaced, and reports differences by path.
import { SIM_SERVERS } from './scenarios.ts';

export interface Outcome {
  notification: Record<string, unknown>;
  /** The list, or `<status> <body>` when the API refuses to list (not a host notification). */
  vmoves: unknown[] | string;
  /** The scenario segment's hosts after the run. */
  hosts: HostFlags[];
}

export interface HostFlags {
  name: string;
  on_maintenance: unknown;
  reserved: unknown;
}

export interface Difference {
  scenario: string;
  /** e.g. `status`, `recovery_workflow_details[1].progress_details[0].message` */
  path: string;
  ours: unknown;
  reference: unknown;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** Server ids are fixed in both simulators, so they stay as they are. */
const STABLE_UUIDS = new Set(SIM_SERVERS.map((s) => s.id));

const VMOVE_FIELDS = ['instance_uuid', 'instance_name', 'type', 'status', 'source_host', 'dest_host', 'message'];

/** Python's str(datetime): microseconds omitted when zero (ours has ms precision, so they are zero 1 time in 1000). */
const PROGRESS_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{6})?$/;
/** The API's datetime fields (start_time, end_time): ISO without zone, always six fraction digits. */
const API_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;

/** A well-formed timestamp becomes a placeholder; anything else stays, so a format difference shows. */
function timestamp(v: unknown, format: RegExp): unknown {
  return typeof v === 'string' && format.test(v) ? '<timestamp>' : v;
}

/** The member names of an object, so an extra or missing field shows as a difference. */
function keys(o: Record<string, unknown>): string {
  return Object.keys(o).sort().join(',');
}

export function normaliseOutcome(o: Outcome): Outcome {
  const own = String(o.notification.notification_uuid);
  const text = (v: unknown): unknown =>
    typeof v === 'string'
      ? v
          .split(own)
          .join('<notification_uuid>')
          .replace(UUID, (u) => (STABLE_UUIDS.has(u) ? u : '<uuid>'))
      : v;
  const details = Array.isArray(o.notification.recovery_workflow_details)
    ? (o.notification.recovery_workflow_details as Record<string, unknown>[]).map((t) => ({
        keys: keys(t),
        name: t.name,
        progress: t.progress,
        state: t.state,
        progress_details: ((t.progress_details as Record<string, unknown>[] | undefined) ?? []).map((p) => ({
          keys: keys(p),
          timestamp: timestamp(p.timestamp, PROGRESS_TIMESTAMP),
          progress: p.progress,
          message: text(p.message),
        })),
      }))
    : o.notification.recovery_workflow_details;
  const vmoves =
    typeof o.vmoves === 'string'
      ? (text(o.vmoves) as string)
      : (o.vmoves as Record<string, unknown>[])
          .map((m): Record<string, unknown> => ({
            keys: keys(m),
            ...Object.fromEntries(VMOVE_FIELDS.map((f) => [f, text(m[f])])),
            start_time: timestamp(m.start_time, API_TIMESTAMP),
            end_time: timestamp(m.end_time, API_TIMESTAMP),
          }))
          .sort((a, b) => String(a.instance_name).localeCompare(String(b.instance_name)));
  return {
    notification: {
      status: o.notification.status,
      message: text(o.notification.message),
      recovery_workflow_details: details,
    },
    vmoves,
    hosts: o.hosts,
  };
}

/** Differences between two normalised outcomes, leaf by leaf. */
export function diffValues(scenario: string, ours: Outcome, reference: Outcome): Difference[] {
  const out: Difference[] = [];
  walk(out, scenario, 'status', ours.notification.status, reference.notification.status);
  walk(out, scenario, 'message', ours.notification.message, reference.notification.message);
  walk(
    out,
    scenario,
    'recovery_workflow_details',
    ours.notification.recovery_workflow_details,
    reference.notification.recovery_workflow_details,
  );
  walk(out, scenario, 'vmoves', ours.vmoves, reference.vmoves);
  walk(out, scenario, 'hosts', ours.hosts, reference.hosts);
  return out;
}

function walk(out: Difference[], scenario: string, path: string, a: unknown, b: unknown): void {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(out, scenario, `${path}[${i}]`, a[i], b[i]);
    return;
  }
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(out, scenario, `${path}.${k}`, a[k], b[k]);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ scenario, path, ours: a, reference: b });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
