// Custom resource → Masakari record. The facade never sees a CR; it sees the
// records of src/domain/records.ts built here. Which object is visible to
// Masakari clients at all ("admitted") is src/domain/admitted.ts.
import { ANNOTATIONS, LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, MasakariObject, Notification, VMoveRecord } from '../model/types.ts';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from '../domain/records.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { createdAtOf, recordedCreatedAt } from '../domain/created-at.ts';
import { toRecordTime } from '../time/format.ts';

/** The Masakari integer id: status first, the label as the crash-recovery copy. */
export function objectId(obj: MasakariObject): number | undefined {
  if (typeof obj.status?.id === 'number') return obj.status.id;
  const label = obj.metadata.labels?.[LABELS.id];
  return label && /^[1-9][0-9]*$/.test(label) ? Number(label) : undefined;
}

export function objectUuid(obj: MasakariObject): string | undefined {
  return obj.status?.uuid || obj.metadata.labels?.[LABELS.uuid] || undefined;
}

export function hostSegmentUuid(host: HaHost): string | undefined {
  return host.status?.segmentUuid || host.metadata.labels?.[LABELS.segmentUuid] || undefined;
}

function toSegmentRecordUncached(seg: FailoverSegment): SegmentRecord {
  return {
    id: objectId(seg) ?? 0,
    uuid: objectUuid(seg) ?? '',
    name: seg.spec.name,
    service_type: seg.spec.serviceType,
    enabled: seg.spec.enabled !== false,
    description: seg.spec.description ?? null,
    recovery_method: seg.spec.recoveryMethod,
    created_at: toRecordTime(createdAtOf(seg)) ?? '',
    updated_at: toRecordTime(seg.status?.updatedAt),
    k8sName: seg.metadata.name ?? '',
  };
}

function toHostRecordUncached(host: HaHost): HostRecord {
  const flags = effectiveFlags(host);
  return {
    id: objectId(host) ?? 0,
    uuid: objectUuid(host) ?? '',
    name: host.spec.name,
    failover_segment_id: hostSegmentUuid(host) ?? '',
    type: host.spec.type,
    reserved: flags.reserved,
    control_attributes: host.spec.controlAttributes,
    on_maintenance: flags.onMaintenance,
    created_at: toRecordTime(createdAtOf(host)) ?? '',
    updated_at: toRecordTime(host.status?.updatedAt),
    k8sName: host.metadata.name ?? '',
  };
}

/**
 * A notification whose status has no phase has not been picked up: Masakari's
 * 'new'. The list index filters with this and notificationSourceHostUuid
 * (src/store/notification-index.ts), and the record is built with them too,
 * so the two cannot drift apart.
 */
export const notificationStatus = (n: Notification): NotificationRecord['status'] => n.status?.phase ?? 'new';

/** The source host uuid: status once admitted, the label before. */
export const notificationSourceHostUuid = (n: Notification): string =>
  n.status?.sourceHostUuid || n.metadata.labels?.[LABELS.hostUuid] || '';

/** The record columns the notification list sorts and filters on. */
export function notificationListColumns(
  n: Notification,
): Pick<NotificationRecord, 'id' | 'created_at' | 'status' | 'source_host_uuid' | 'type' | 'generated_time'> {
  return {
    id: objectId(n) ?? 0,
    created_at: toRecordTime(recordedCreatedAt(n)) ?? '',
    status: notificationStatus(n),
    source_host_uuid: notificationSourceHostUuid(n),
    type: n.spec.type,
    generated_time: n.spec.generatedTime,
  };
}

/**
 * Not memoised: a memo keeps a record for every notification any client ever
 * listed, for as long as the notification lives, while building the records
 * of one page is cheap.
 */
export function toNotificationRecord(n: Notification): NotificationRecord {
  const st = n.status;
  const cols = notificationListColumns(n);
  return {
    id: cols.id,
    notification_uuid: objectUuid(n) ?? '',
    generated_time: cols.generated_time,
    source_host_uuid: cols.source_host_uuid,
    type: cols.type,
    payload: inSenderOrder(n.spec.payload, n.metadata.annotations?.[ANNOTATIONS.payloadOrder]),
    status: cols.status,
    failover_segment_uuid: st?.failoverSegmentUuid || n.metadata.labels?.[LABELS.segmentUuid] || '',
    message: st?.message ?? null,
    created_at: cols.created_at,
    updated_at: toRecordTime(st?.updatedAt),
    recovery_workflow_details: st?.recoveryWorkflowDetails ?? [],
    k8sName: n.metadata.name ?? '',
  };
}

export function toVMoveView(notificationUuid: string, v: VMoveRecord): VMoveRecordView {
  return {
    id: v.id,
    uuid: v.uuid,
    notification_uuid: notificationUuid,
    instance_uuid: v.instanceUuid,
    instance_name: v.instanceName,
    source_host: v.sourceHost,
    dest_host: v.destHost,
    // start/end keep their microseconds (the engine sets them, as Masakari's does).
    start_time: v.startTime,
    end_time: v.endTime,
    type: v.type,
    status: v.status,
    message: v.message,
    created_at: toRecordTime(v.createdAt) ?? '',
    updated_at: toRecordTime(v.updatedAt),
  };
}

/**
 * The payload with its keys in the order the sender wrote them (recorded in
 * an annotation at intake), falling back to the stored (sorted) order for
 * notifications created without it, e.g. by kubectl.
 */
export function inSenderOrder(payload: Record<string, string>, order: string | undefined): Record<string, string> {
  if (!order) return payload;
  let keys: unknown;
  try {
    keys = JSON.parse(order);
  } catch {
    return payload;
  }
  if (!Array.isArray(keys)) return payload;
  const out: Record<string, string> = {};
  for (const k of keys) if (typeof k === 'string' && Object.hasOwn(payload, k)) out[k] = payload[k] as string;
  for (const [k, v] of Object.entries(payload)) if (!Object.hasOwn(out, k)) out[k] = v;
  return out;
}

/**
 * Memoises a mapping per object. Safe because cached objects are immutable
 * snapshots, replaced (never mutated) when they change; list requests map the
 * same unchanged objects over and over.
 */
function memoPerObject<T extends object, R>(f: (obj: T) => R): (obj: T) => R {
  const cache = new WeakMap<T, R>();
  return (obj) => {
    let r = cache.get(obj);
    if (r === undefined) {
      r = f(obj);
      cache.set(obj, r);
    }
    return r;
  };
}

export const toSegmentRecord: (obj: FailoverSegment) => SegmentRecord = memoPerObject(toSegmentRecordUncached);
export const toHostRecord: (obj: HaHost) => HostRecord = memoPerObject(toHostRecordUncached);
