// The columns each Masakari list filters and sorts by, as its database
// models name them (masakari/db/sqlalchemy/models.py): what pagination.ts
// reads a record's sort key from.

import { pyJsonDumps } from './pyjson.ts';
import type { ColumnSet, SortValue } from './pagination.ts';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from './records.ts';

type Row = { id: number; created_at: string; updated_at: string | null };
/** The record's fields whose values sort as they are. */
type SortableField<T> = { [K in keyof T & string]: T[K] extends SortValue ? K : never }[keyof T & string];

/**
 * The columns of a model: the named fields read as they are, the timestamps
 * every model has (soft-delete columns are never set on a listed row), and
 * any computed ones.
 */
function columnSet<T extends Row>(
  fields: ReadonlyArray<SortableField<T>>,
  computed: Record<string, (row: T) => SortValue> = {},
): ColumnSet<T> {
  const read = Object.fromEntries(fields.map((f) => [f, (r: T) => r[f] as SortValue]));
  return {
    id: (r) => r.id,
    columns: {
      id: (r) => r.id,
      ...read,
      ...computed,
      created_at: (r) => r.created_at,
      updated_at: (r) => r.updated_at,
      deleted_at: () => null,
      deleted: () => 0,
    },
  };
}

export const SEGMENT_COLUMNS = columnSet<SegmentRecord>([
  'uuid',
  'name',
  'service_type',
  'enabled',
  'description',
  'recovery_method',
]);

export const HOST_COLUMNS = columnSet<HostRecord>([
  'uuid',
  'name',
  'reserved',
  'type',
  'control_attributes',
  'on_maintenance',
  'failover_segment_id',
]);

export const NOTIFICATION_COLUMNS = columnSet<NotificationRecord>(
  ['notification_uuid', 'generated_time', 'type', 'status', 'source_host_uuid', 'failover_segment_uuid', 'message'],
  // Masakari stores the payload as json.dumps text and sorts by that text.
  { payload: (r) => pyJsonDumps(r.payload) },
);

export const VMOVE_COLUMNS = columnSet<VMoveRecordView>([
  'uuid',
  'notification_uuid',
  'instance_uuid',
  'instance_name',
  'source_host',
  'dest_host',
  'start_time',
  'end_time',
  'type',
  'status',
  'message',
]);
