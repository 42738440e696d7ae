// CONTRACT between Masakari's rules (src/domain/ha-service.ts) and persistence
// (src/store/ over custom resources; an in-memory one for fast tests).
//
// Reads are served from a local cache and must reflect this process's own
// completed writes (read-your-writes). Writes are atomic where noted; the
// repository is where the Kubernetes API's guarantees are turned into
// Masakari's (unique names, integer ids, duplicate detection).

import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from './records.ts';
import type { NotificationType, RecoveryMethod } from '../model/types.ts';

/** Thrown by create/rename when the unique name is taken (atomically detected). */
export class NameTakenError extends Error {}
/** Thrown by createNotification when an identical notification is inside the window (atomically detected). */
export class DuplicateNotificationError extends Error {}
/** Thrown when the object vanished or changed underneath (after bounded internal retries). */
export class NotFoundInStoreError extends Error {}
/** The store cannot answer now (its API server failed or timed out); retrying later may succeed. */
export class StoreUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

export interface NewSegment {
  name: string;
  service_type: string;
  recovery_method: RecoveryMethod;
  description: string | null;
  enabled: boolean;
}

export interface NewHost {
  name: string;
  type: string;
  control_attributes: string;
  reserved: boolean;
  on_maintenance: boolean;
}

export interface NewNotification {
  type: NotificationType;
  hostname: string;
  generated_time: string; // normalised ISO 8601 UTC, no zone
  payload: Record<string, string>;
  source_host_uuid: string;
  failover_segment_uuid: string;
}

export interface NotificationPageQuery {
  dir: 'asc' | 'desc';
  limit: number;
  markerId?: number;
  status?: string;
  sourceHostUuid?: string;
  type?: string;
  /** generated_time >= this, in microseconds since the epoch. */
  generatedSinceMicros?: bigint;
}

export interface Repository {
  /**
   * Read-your-writes across replicas: runs attempt; when it fails with an error `retryable` accepts after
   * a lookup missed this replica's cache, reads the missed objects from the source of truth and runs
   * attempt once more if any was found (src/store/fresh-reads.ts). Absent: a single-replica store.
   */
  withFreshReads?<T>(attempt: () => Promise<T>, retryable: (e: unknown) => boolean): Promise<T>;

  listSegments(): SegmentRecord[];
  getSegment(uuid: string): SegmentRecord | undefined;
  createSegment(s: NewSegment): Promise<SegmentRecord>; // NameTakenError
  updateSegment(uuid: string, patch: Partial<NewSegment>): Promise<SegmentRecord>; // NameTakenError on rename
  /** Deletes the segment and all its hosts. */
  deleteSegment(uuid: string): Promise<void>;

  listHosts(segmentUuid?: string): HostRecord[];
  getHost(uuid: string): HostRecord | undefined;
  getHostByName(name: string): HostRecord | undefined;
  createHost(segmentUuid: string, h: NewHost): Promise<HostRecord>; // NameTakenError
  updateHost(uuid: string, patch: Partial<NewHost>): Promise<HostRecord>; // NameTakenError on rename
  deleteHost(uuid: string): Promise<void>;

  listNotifications(): NotificationRecord[];
  /**
   * Optional fast path for GET /v1/notifications in the default order
   * (created_at, id, both `dir`): one page read from a sorted index, no
   * sorting per request. Same rows as paginate() over listNotifications().
   * `markerId` is looked up among all notifications (filters ignored);
   * undefined is returned when no notification has it (MarkerNotFound).
   */
  pageNotifications?(q: NotificationPageQuery): NotificationRecord[] | undefined;
  /** Optional: unfinished (new, running, error) notifications from a host, from an index. */
  unfinishedNotificationCount?(hostUuid: string): number;
  /** From the cache: every field but recovery_workflow_details (always [] here). */
  getNotification(uuid: string): NotificationRecord | undefined;
  /**
   * The notification with its recovery_workflow_details (microversion 1.1
   * show). The CR store reads it from the API server: no cache keeps a
   * notification's history (src/store/caches.ts slimNotification).
   */
  getNotificationDetails(uuid: string): Promise<NotificationRecord | undefined>;
  /**
   * Atomically: fail with DuplicateNotificationError if a notification with
   * the same type, host and payload and generated_time >= n.generated_time -
   * windowSeconds exists (any status); otherwise create it with status new.
   */
  createNotification(n: NewNotification, windowSeconds: number): Promise<NotificationRecord>;

  /** A notification's vmoves, all of them (read from the API server by the CR store, like the details). */
  listVMoves(notificationUuid: string): Promise<VMoveRecordView[]>;
  /** One vmove of this notification; undefined when it has none with this uuid. */
  getVMove(notificationUuid: string, vmoveUuid: string): Promise<VMoveRecordView | undefined>;
}
