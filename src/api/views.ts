// Response documents in Masakari's field order (the versioned objects'
// field order, then created_at, updated_at, deleted_at, deleted), with its
// time format. Deleted rows are never shown, so deleted_at is null and
// deleted is false.

import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from '../domain/records.ts';
import type { WorkflowTaskRecord } from '../model/types.ts';
import { PyFloat, RawJson, pyJsonDumps } from '../domain/pyjson.ts';
import { formatWireTime } from '../time/format.ts';

const softDelete = () => ({ deleted_at: null, deleted: false });

export function segmentView(s: SegmentRecord): Record<string, unknown> {
  return {
    id: s.id,
    uuid: s.uuid,
    name: s.name,
    service_type: s.service_type,
    enabled: s.enabled,
    description: s.description,
    recovery_method: s.recovery_method,
    created_at: formatWireTime(s.created_at),
    updated_at: formatWireTime(s.updated_at),
    ...softDelete(),
  };
}

/** views/hosts.py: the segment is nested in full. */
export function hostView(h: HostRecord, segment: SegmentRecord | undefined): Record<string, unknown> {
  return {
    id: h.id,
    uuid: h.uuid,
    name: h.name,
    failover_segment_id: h.failover_segment_id,
    failover_segment: segment ? segmentView(segment) : null,
    type: h.type,
    reserved: h.reserved,
    control_attributes: h.control_attributes,
    on_maintenance: h.on_maintenance,
    created_at: formatWireTime(h.created_at),
    updated_at: formatWireTime(h.updated_at),
    ...softDelete(),
  };
}

// Rendered text per record. Records are memoised per stored object version
// (src/store/mapping.ts), so a list of unchanged objects is mostly a join of
// cached strings; rendering dominated list latency before this.
const segmentTexts = new WeakMap<SegmentRecord, RawJson>();
const hostTexts = new WeakMap<HostRecord, { segment: SegmentRecord | undefined; raw: RawJson }>();

/** segmentView, pre-rendered and cached. */
export function segmentJson(s: SegmentRecord): RawJson {
  let raw = segmentTexts.get(s);
  if (!raw) {
    raw = new RawJson(pyJsonDumps(segmentView(s)));
    segmentTexts.set(s, raw);
  }
  return raw;
}

/** hostView, pre-rendered and cached (valid while the host and its segment records are unchanged). */
export function hostJson(h: HostRecord, segment: SegmentRecord | undefined): RawJson {
  const hit = hostTexts.get(h);
  if (hit && hit.segment === segment) return hit.raw;
  const raw = new RawJson(pyJsonDumps(hostView(h, segment)));
  hostTexts.set(h, { segment, raw });
  return raw;
}

/** NotificationProgressDetails: progress is a float in Masakari. */
function taskView(t: WorkflowTaskRecord): Record<string, unknown> {
  return {
    name: t.name,
    progress: new PyFloat(t.progress),
    progress_details: t.progressDetails.map((d) => ({
      timestamp: d.timestamp,
      progress: d.progress,
      message: d.message,
    })),
    state: t.state,
  };
}

/** A notification; recovery_workflow_details is present only when asked (show at 1.1+). */
export function notificationView(n: NotificationRecord, withDetails = false): Record<string, unknown> {
  return {
    id: n.id,
    notification_uuid: n.notification_uuid,
    generated_time: formatWireTime(n.generated_time),
    source_host_uuid: n.source_host_uuid,
    type: n.type,
    payload: n.payload,
    status: n.status,
    // Masakari lists only tasks that reported progress at least once
    // (driver.py get_notification_recovery_workflow_details); the engine
    // records a task as RUNNING before its first message.
    ...(withDetails
      ? {
          recovery_workflow_details: n.recovery_workflow_details
            .filter((t) => t.progressDetails.length > 0)
            .map(taskView),
        }
      : {}),
    failover_segment_uuid: n.failover_segment_uuid,
    message: n.message,
    created_at: formatWireTime(n.created_at),
    updated_at: formatWireTime(n.updated_at),
    ...softDelete(),
  };
}

export function vmoveView(v: VMoveRecordView): Record<string, unknown> {
  return {
    id: v.id,
    uuid: v.uuid,
    notification_uuid: v.notification_uuid,
    instance_uuid: v.instance_uuid,
    instance_name: v.instance_name,
    source_host: v.source_host,
    dest_host: v.dest_host,
    start_time: formatWireTime(v.start_time),
    end_time: formatWireTime(v.end_time),
    type: v.type,
    status: v.status,
    message: v.message,
    created_at: formatWireTime(v.created_at),
    updated_at: formatWireTime(v.updated_at),
    ...softDelete(),
  };
}

// ------------------------------------------------------------------ versions (ha/versions.py, views/versions.py)

const VERSION_V1 = {
  id: 'v1.0',
  status: 'CURRENT',
  version: '1.3',
  min_version: '1.0',
  updated: '2016-07-01T11:33:21Z',
};
const DESCRIBED_BY = { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' };
const MEDIA_TYPES = [{ base: 'application/json', type: 'application/vnd.openstack.masakari+json;version=1' }];

/** common.url_join: parts stripped of '/', joined; a trailing empty part keeps a trailing slash. */
export function urlJoin(...parts: string[]): string {
  const clean = parts.filter((p) => p).map((p) => p.replace(/^\/+|\/+$/g, ''));
  if (!parts[parts.length - 1]) clean.push('');
  return clean.join('/');
}

/** GET / */
export function versionsIndex(baseUrl: string): Record<string, unknown> {
  return {
    versions: [{ ...VERSION_V1, links: [{ rel: 'self', href: urlJoin(baseUrl, 'v1', '') }] }],
  };
}

/** Any other path outside /v1: 300 Multiple Choices. */
export function versionsChoices(baseUrl: string, path: string): Record<string, unknown> {
  return {
    choices: [
      {
        id: VERSION_V1.id,
        status: VERSION_V1.status,
        links: [{ rel: 'self', href: urlJoin(baseUrl, 'v1', path) }],
        'media-types': MEDIA_TYPES,
      },
    ],
  };
}

/** GET /v1, /v1/, /v1/versions/v1.0 */
export function versionShow(v1Url: string): Record<string, unknown> {
  return {
    version: {
      ...VERSION_V1,
      links: [{ rel: 'self', href: `${v1Url.replace(/\/+$/, '')}/` }, DESCRIBED_BY],
      'media-types': MEDIA_TYPES,
    },
  };
}

// ------------------------------------------------------------------ extensions (ha/extension_info.py)

export interface ExtensionInfo {
  name: string;
  alias: string;
  description: string;
}

/** The loaded extensions, with their class docstrings as descriptions. */
export const EXTENSIONS: readonly ExtensionInfo[] = [
  { name: 'Extensions', alias: 'extensions', description: 'Extension information.' },
  { name: 'Notifications', alias: 'notifications', description: 'Notifications support.' },
  { name: 'Hosts', alias: 'os-hosts', description: 'Hosts controller' },
  { name: 'Segments', alias: 'segments', description: 'Segments Extension.' },
  { name: 'Versions', alias: 'versions', description: 'API Version information.' },
  { name: 'vmoves', alias: 'vmoves', description: 'vmoves controller' },
];

export function extensionView(e: ExtensionInfo): Record<string, unknown> {
  return { name: e.name, alias: e.alias, description: e.description, namespace: '', updated: '', links: [] };
}
