// CONTRACT. Masakari's view of the stored objects, in the API's field names.
// The store maps custom resources to these records; the facade renders them.
// Timestamps are ISO 8601 strings without microseconds ('2026-01-02T03:04:05'),
// or null; rendering decides the wire format.

import type {
  NotificationStatus,
  NotificationType,
  RecoveryMethod,
  VMoveStatus,
  VMoveType,
  WorkflowTaskRecord,
} from '../model/types.ts';

export interface SegmentRecord {
  id: number;
  uuid: string;
  name: string;
  service_type: string;
  enabled: boolean;
  description: string | null;
  recovery_method: RecoveryMethod;
  created_at: string;
  updated_at: string | null;
  /** Kubernetes metadata.name of the FailoverSegment. */
  k8sName: string;
}

export interface HostRecord {
  id: number;
  uuid: string;
  name: string;
  failover_segment_id: string; // segment uuid
  type: string;
  reserved: boolean; // effective value
  control_attributes: string;
  on_maintenance: boolean; // effective value
  created_at: string;
  updated_at: string | null;
  k8sName: string;
}

export interface NotificationRecord {
  id: number;
  notification_uuid: string;
  generated_time: string;
  source_host_uuid: string;
  type: NotificationType;
  payload: Record<string, string>;
  status: NotificationStatus;
  failover_segment_uuid: string;
  message: string | null;
  created_at: string;
  updated_at: string | null;
  recovery_workflow_details: WorkflowTaskRecord[];
  k8sName: string;
}

export interface VMoveRecordView {
  id: number;
  uuid: string;
  notification_uuid: string;
  instance_uuid: string;
  instance_name: string | null;
  source_host: string | null;
  dest_host: string | null;
  start_time: string | null;
  end_time: string | null;
  type: VMoveType;
  status: VMoveStatus;
  message: string | null;
  created_at: string;
  updated_at: string | null;
}
