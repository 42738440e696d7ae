// The read half of the Repository contract: every read is answered from the
// informer caches, and only admitted objects are visible (src/store/admission.ts).
// A host is visible only while its segment is, so deleting a segment hides its
// hosts at once. Read-your-writes across replicas: src/store/fresh-reads.ts.
import { LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from '../domain/records.ts';
import type { NotificationPageQuery } from '../domain/repository.ts';
import type { StoreCaches } from './caches.ts';
import { recordHostNameMiss, recordMiss, withFreshReads } from './fresh-reads.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { JournalPage } from './journal-pages.ts';
import { assembleNotification, countedPages, notificationUuidOf, pageOf } from './journal-pages.ts';
import { toHostRecord, toNotificationRecord, toSegmentRecord, toVMoveView } from './mapping.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { INDEX } from '../model/indexes.ts';
import { NotificationIndex } from './notification-index.ts';

export interface RepositoryReadDeps {
  kube: KubeClient;
  namespace: string;
  caches: StoreCaches;
}

export class RepositoryReads {
  /** Sorted notification list + unfinished count per host, kept current from the cache's events. */
  private readonly notificationIndex: NotificationIndex;

  constructor(private readonly readDeps: RepositoryReadDeps) {
    this.notificationIndex = new NotificationIndex(readDeps.caches.notifications);
  }

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
    const n = this.caches.notifications.byIndex(INDEX.uuid, uuid).find(isAdmitted);
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
    return this.caches.notifications.list().filter(isAdmitted).map(toNotificationRecord);
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

  /** The notification with the history its journal pages hold put back (src/store/journal-pages.ts). */
  private wholeNotification(uuid: string): Notification | undefined {
    const n = this.notificationObject(uuid);
    if (!n || countedPages(n.status) === 0) return n;
    const pages = this.caches.journalPages
      .byIndex(INDEX.notificationUuid, uuid)
      .map(pageOf)
      .filter((p): p is JournalPage => p !== undefined);
    return assembleNotification(n, pages);
  }

  getNotification(uuid: string): NotificationRecord | undefined {
    const n = this.wholeNotification(uuid);
    return n && toNotificationRecord(n);
  }

  listVMoves(notificationUuid: string): VMoveRecordView[] {
    const n = this.wholeNotification(notificationUuid);
    return (n?.status?.vmoves ?? []).map((v) => toVMoveView(notificationUuid, v));
  }

  getVMove(uuid: string): VMoveRecordView | undefined {
    // The move is in its notification's status, or in one of its journal pages (the status copy is newer).
    const owners = new Set(this.caches.notifications.byIndex(INDEX.vmove, uuid).map(notificationUuidOf));
    for (const cm of this.caches.journalPages.byIndex(INDEX.vmove, uuid)) {
      owners.add(cm.metadata.labels?.[LABELS.notificationUuid] ?? '');
    }
    for (const owner of owners) {
      const n = owner ? this.wholeNotification(owner) : undefined;
      const v = n?.status?.vmoves?.find((m) => m.uuid === uuid);
      if (v) return toVMoveView(n?.status?.uuid ?? owner, v);
    }
    return undefined;
  }
}
