// The read half of the Repository contract: every read is answered from the
// informer caches, and only admitted objects are visible (src/store/admission/create.ts).
// A host is visible only while its segment is, so deleting a segment hides its
// hosts at once. Read-your-writes across replicas: src/store/fresh-reads.ts.
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from '../domain/records.ts';
import type { NotificationPageQuery } from '../domain/repository.ts';
import type { StoreCaches } from './caches.ts';
import { recordHostNameMiss, recordMiss, withFreshReads } from './fresh-reads.ts';
import type { KubeClient } from '../k8s/client.ts';
import { isTransient } from '../k8s/client.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { StoreUnavailableError } from '../domain/repository.ts';
import { assembleNotification, countedPages, readPages } from './journal-pages.ts';
import { toHostRecord, toNotificationRecord, toSegmentRecord, toVMoveView } from './mapping.ts';
import { isAdmitted, isRefused } from '../domain/admitted.ts';
import { INDEX } from '../model/indexes.ts';
import { NotificationIndex } from './notification-index.ts';
import type { SealedVisibility } from './admission/visibility.ts';
import { visibleNotifications } from './admission/visibility.ts';

export interface RepositoryReadDeps {
  kube: KubeClient;
  namespace: string;
  caches: StoreCaches;
  /** Hides sealed notifications still being decided by their claim (admission/visibility.ts); none: nothing is. */
  sealedVisibility?: SealedVisibility;
}

/** Retry-After (seconds) of the 503 answered when the API server fails a store read or an intake. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * An API server failure (isTransient) as the store reports it: retryable, so
 * the facade answers 503 with Retry-After rather than 500. Anything else
 * (domain errors, a 4xx from the API server) passes through.
 */
export function storeUnavailable(e: unknown, what: string): unknown {
  return isTransient(e) ? new StoreUnavailableError(`${what}: ${(e as Error).message}`, STORE_RETRY_AFTER_SECONDS) : e;
}

export class RepositoryReads {
  /** Sorted notification list + unfinished count per host, kept current from the cache's events. */
  private readonly notificationIndex: NotificationIndex;

  constructor(private readonly readDeps: RepositoryReadDeps) {
    this.notificationVisible = visibleNotifications(readDeps.sealedVisibility);
    this.notificationIndex = new NotificationIndex(readDeps.caches.notifications, this.notificationVisible);
  }

  /** Admitted, and not a sealed notification its claim has still to decide (admission/visibility.ts). */
  protected readonly notificationVisible: (n: Notification) => boolean;

  private get caches(): StoreCaches {
    return this.readDeps.caches;
  }

  /** The admitted segment with this uuid (a miss is recorded for fresh reads). */
  segmentObject(uuid: string): FailoverSegment | undefined {
    const seg = this.caches.segments.byIndex(INDEX.uuid, uuid).find(isAdmitted);
    if (!seg) recordMiss('segment', uuid);
    return seg;
  }

  /** A host is visible when it is admitted and so is its segment (a segment being deleted hides its hosts). */
  private hostVisible = (h: HaHost): boolean => {
    if (!isAdmitted(h)) return false;
    const segUuid = h.status?.segmentUuid;
    return segUuid !== undefined && this.segmentObject(segUuid) !== undefined;
  };

  hostObject(uuid: string): HaHost | undefined {
    const host = this.caches.hosts.byIndex(INDEX.uuid, uuid).find(this.hostVisible);
    if (!host) recordMiss('host', uuid);
    return host;
  }

  private notificationObject(uuid: string): Notification | undefined {
    const n = this.caches.notifications.byIndex(INDEX.uuid, uuid).find(this.notificationVisible);
    if (!n) recordMiss('notification', uuid);
    return n;
  }

  /** Read-your-writes across replicas (fresh-reads.ts): a request failing on a cache miss is retried once after reading the API server. */
  withFreshReads<T>(attempt: () => Promise<T>, retryable: (e: unknown) => boolean): Promise<T> {
    return withFreshReads(this.readDeps, attempt, retryable);
  }

  listSegments(): SegmentRecord[] {
    return this.caches.segments.list().filter(isAdmitted).map(toSegmentRecord);
  }

  getSegment(uuid: string): SegmentRecord | undefined {
    const seg = this.segmentObject(uuid);
    return seg && toSegmentRecord(seg);
  }

  listHosts(segmentUuid?: string): HostRecord[] {
    const hosts =
      segmentUuid === undefined ? this.caches.hosts.list() : this.caches.hosts.byIndex(INDEX.segmentUuid, segmentUuid);
    // hostVisible per host would look its segment up once per host; a list asks once per segment.
    const seen = new Map<string, boolean>();
    const segmentVisible = (uuid: string): boolean => {
      let visible = seen.get(uuid);
      if (visible === undefined) seen.set(uuid, (visible = this.segmentObject(uuid) !== undefined));
      return visible;
    };
    return hosts
      .filter((h) => isAdmitted(h) && h.status?.segmentUuid !== undefined && segmentVisible(h.status.segmentUuid))
      .map(toHostRecord);
  }

  getHost(uuid: string): HostRecord | undefined {
    const host = this.hostObject(uuid);
    return host && toHostRecord(host);
  }

  getHostByName(name: string): HostRecord | undefined {
    const host = this.caches.hosts.byIndex(INDEX.name, name).find(this.hostVisible);
    if (!host) recordHostNameMiss(name);
    return host && toHostRecord(host);
  }

  listNotifications(): NotificationRecord[] {
    return this.caches.notifications.list().filter(this.notificationVisible).map(toNotificationRecord);
  }

  pageNotifications(q: NotificationPageQuery): NotificationRecord[] | undefined {
    let marker;
    if (q.markerId !== undefined) {
      marker = this.notificationIndex.byIdFirst(q.markerId);
      if (!marker) return undefined;
    }
    return this.notificationIndex.page(q.dir, q.limit, marker, q).map((e) => toNotificationRecord(e.obj));
  }

  unfinishedNotificationCount(hostUuid: string): number {
    return this.notificationIndex.unfinishedCount(hostUuid);
  }

  /** From the cache, so without recovery_workflow_details (getNotificationDetails has them). */
  getNotification(uuid: string): NotificationRecord | undefined {
    const n = this.notificationObject(uuid);
    return n && toNotificationRecord(n);
  }

  /**
   * The notification with its whole history, read from the API server (the
   * cache keeps none: caches.ts slimNotification), with what its journal
   * pages hold put back (src/store/journal-pages.ts). Undefined when it is
   * not admitted in the cache, or was deleted or replaced since.
   */
  private async wholeNotification(uuid: string): Promise<Notification | undefined> {
    const cached = this.notificationObject(uuid);
    if (!cached) return undefined;
    const { kube, namespace } = this.readDeps;
    try {
      const read = await getIfExists<Notification>(
        kube,
        RESOURCES.notifications,
        namespace,
        cached.metadata.name ?? '',
      );
      if (!read || read.metadata.uid !== cached.metadata.uid) return undefined;
      const n = withPendingAdmission(read, cached);
      if (!isAdmitted(n)) return undefined;
      if (countedPages(n.status) === 0) return n;
      return assembleNotification(n, await readPages(kube, namespace, uuid));
    } catch (e) {
      throw storeUnavailable(e, 'notification read');
    }
  }

  async getNotificationDetails(uuid: string): Promise<NotificationRecord | undefined> {
    const n = await this.wholeNotification(uuid);
    return n && toNotificationRecord(n);
  }

  async listVMoves(notificationUuid: string): Promise<VMoveRecordView[]> {
    const n = await this.wholeNotification(notificationUuid);
    return (n?.status?.vmoves ?? []).map((v) => toVMoveView(notificationUuid, v));
  }

  async getVMove(notificationUuid: string, vmoveUuid: string): Promise<VMoveRecordView | undefined> {
    const n = await this.wholeNotification(notificationUuid);
    const v = n?.status?.vmoves?.find((m) => m.uuid === vmoveUuid);
    return v && toVMoveView(notificationUuid, v);
  }
}

/**
 * The API server's copy of a notification this replica has just accepted
 * (POST answers 202 before its status write lands: repository.ts
 * admitInBackground) has no uuid or id in status yet, while the cache already
 * shows it admitted (read-your-writes). python-masakariclient shows the
 * notification right after creating it, so the cached admission stands in
 * until the status write arrives; the history read from the server is still
 * the server's (empty at that point).
 */
function withPendingAdmission(read: Notification, cached: Notification): Notification {
  if (read.status?.uuid || read.metadata.deletionTimestamp || isRefused(read)) return read;
  const { uuid, id, phase, sourceHostUuid, failoverSegmentUuid } = cached.status ?? {};
  return { ...read, status: { ...read.status, uuid, id, phase, sourceHostUuid, failoverSegmentUuid } };
}
