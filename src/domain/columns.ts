// The columns each Masakari list filters and sorts by, as its database
// models name them (masakari/db/sqlalchemy/models.py): what pagination.ts
// reads a record's sort key from.

import { pyJsonDumps } from './pyjson.ts';
import type { ColumnSet } from './pagination.ts';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from './records.ts';

const timestampColumns = <T extends { created_at: string; updated_at: string | null }>() => ({
  created_at: (r: T) => r.created_at,
  updated_at: (r: T) => r.updated_at,
  deleted_at: () => null,
  deleted: () => 0,
});

export const SEGMENT_COLUMNS: ColumnSet<SegmentRecord> = {
  id: (r) => r.id,
  columns: {
    id: (r) => r.id,
    uuid: (r) => r.uuid,
    name: (r) => r.name,
    service_type: (r) => r.service_type,
    enabled: (r) => r.enabled,
    description: (r) => r.description,
    recovery_method: (r) => r.recovery_method,
    ...timestampColumns<SegmentRecord>(),
  },
};

export const HOST_COLUMNS: ColumnSet<HostRecord> = {
  id: (r) => r.id,
  columns: {
    id: (r) => r.id,
    uuid: (r) => r.uuid,
    name: (r) => r.name,
    reserved: (r) => r.reserved,
    type: (r) => r.type,
    control_attributes: (r) => r.control_attributes,
    on_maintenance: (r) => r.on_maintenance,
    failover_segment_id: (r) => r.failover_segment_id,
    ...timestampColumns<HostRecord>(),
  },
};

export const NOTIFICATION_COLUMNS: ColumnSet<NotificationRecord> = {
  id: (r) => r.id,
  columns: {
    id: (r) => r.id,
    notification_uuid: (r) => r.notification_uuid,
    generated_time: (r) => r.generated_time,
    type: (r) => r.type,
    // Masakari stores the payload as json.dumps text and sorts by that text.
    payload: (r) => pyJsonDumps(r.payload),
    status: (r) => r.status,
    source_host_uuid: (r) => r.source_host_uuid,
    failover_segment_uuid: (r) => r.failover_segment_uuid,
    message: (r) => r.message,
    ...timestampColumns<NotificationRecord>(),
  },
};

export const VMOVE_COLUMNS: ColumnSet<VMoveRecordView> = {
  id: (r) => r.id,
  columns: {
    id: (r) => r.id,
    uuid: (r) => r.uuid,
    notification_uuid: (r) => r.notification_uuid,
    instance_uuid: (r) => r.instance_uuid,
    instance_name: (r) => r.instance_name,
    source_host: (r) => r.source_host,
    dest_host: (r) => r.dest_host,
    start_time: (r) => r.start_time,
    end_time: (r) => r.end_time,
    type: (r) => r.type,
    status: (r) => r.status,
    message: (r) => r.message,
    ...timestampColumns<VMoveRecordView>(),
  },
};
