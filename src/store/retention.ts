// Deleting notifications that ended long ago: the periodic retention task
// ([operator] notification_retention_days, run by the store reconcilers'
// leader) and `masakari-operator purge --age-in-days N` (src/cli/purge/).
//
// Masakari keeps every notification until someone runs `masakari-manage db
// purge --age_in_days N`, which hard-deletes rows soft-deleted more than N
// days ago (masakari/db/sqlalchemy/api.py purge_deleted_rows). Notifications
// are never soft-deleted there, so it never removes one. Here a notification
// that ended (finished, failed or ignored) more than N days ago is deleted:
// it is the only thing that grows without bound. Its vmoves live in its status
// and go with it; its duplicate claim (src/store/admission/duplicate-claim.ts) is removed too.
// new, running and error notifications are never touched, however old
// (model/notification-phase.ts FINISHED_PHASES).
//
// Lists are paged and deletes are paced, so a first run over a large backlog
// does not flood the API server or etcd.
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { KubeError, isConflict, isNotFound } from '../k8s/client.ts';
import { listPageKept } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { isUnfinishedNotification } from '../model/notification-phase.ts';
import type { Notification } from '../model/types.ts';
import { deleteClaimOf } from './admission/claim-lifetime.ts';
import { countedPages, deletePages, notificationUuidOf, statusWithoutHistory } from './journal-pages.ts';
import { createdAtMs } from '../domain/created-at.ts';
import { systemClock } from '../time/clock.ts';

const DAY_MS = 86_400_000;
const DEFAULT_PAGE_SIZE = 200;
const DEFAULT_DELETES_PER_SECOND = 20;
/** Cached notifications examined between two turns of the event loop (100,000 kept ones in one go held it for 0.1 s). */
const CACHE_SCAN_SLICE = 1_000;

export interface PurgeOptions {
  kube: KubeClient;
  namespace: string;
  /** Notifications that ended more than this many days ago are deleted (may be fractional; 0 = all that ended). */
  ageInDays: number;
  now: Date;
  /** Count what would be deleted, delete nothing. */
  dryRun?: boolean;
  /** Stop after this many (matched, on a dry run); undefined or negative: no limit (masakari-manage --max_rows). */
  maxRows?: number;
  pageSize?: number;
  deletesPerSecond?: number;
  log?: Logger;
  signal?: AbortSignal;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Every notification, from a cache that holds them all (the store
   * reconcilers' leader, whose cache does): read instead of listing them from
   * the API server. Each delete is conditional on the resourceVersion seen,
   * so a cache behind the API server deletes nothing that changed since.
   */
  cached?: () => readonly Notification[];
}

export interface PurgeResult {
  /** Notifications read. */
  examined: number;
  /** Terminal and old enough, by phase. */
  matched: Record<string, number>;
  /** Actually deleted (0 on a dry run). */
  deleted: number;
}

/** When the notification ended: its last status change (status.updatedAt), else its created_at (domain/created-at.ts). */
export function endedAt(n: Notification): number {
  const updated = Date.parse(n.status?.updatedAt ?? '');
  if (!Number.isNaN(updated)) return updated;
  return createdAtMs(n);
}

export function isPurgeable(n: Notification, cutoffMs: number): boolean {
  if (isUnfinishedNotification(n)) return false;
  if (n.metadata.deletionTimestamp) return false;
  const ended = endedAt(n);
  return !Number.isNaN(ended) && ended < cutoffMs;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Deletes (or, dry, counts) the notifications that ended before now - ageInDays. */
export async function purgeNotifications(opts: PurgeOptions): Promise<PurgeResult> {
  const { kube, namespace, log, signal } = opts;
  const cutoffMs = opts.now.getTime() - opts.ageInDays * DAY_MS;
  const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
  const gapMs = 1000 / Math.max(0.1, opts.deletesPerSecond ?? DEFAULT_DELETES_PER_SECOND);
  const sleep = opts.sleep ?? defaultSleep;
  const result: PurgeResult = { examined: 0, matched: {}, deleted: 0 };
  const max = opts.maxRows !== undefined && opts.maxRows > 0 ? opts.maxRows : Infinity;
  const limitReached = () =>
    (opts.dryRun ? Object.values(result.matched).reduce((a, b) => a + b, 0) : result.deleted) >= max;
  /** Counts `n`, and deletes it when it ended before the cutoff; false once the limit or the signal says stop. */
  const consider = async (n: Notification): Promise<boolean> => {
    if (limitReached() || signal?.aborted) return false;
    result.examined++;
    if (!isPurgeable(n, cutoffMs)) return true;
    const phase = n.status?.phase ?? '';
    result.matched[phase] = (result.matched[phase] ?? 0) + 1;
    if (opts.dryRun) return true;
    if (await deleteNotification(kube, namespace, n)) {
      result.deleted++;
      log?.debug({ notification: n.status?.uuid, name: n.metadata.name, phase }, 'purged notification');
    }
    await sleep(gapMs);
    return true;
  };
  if (opts.cached) {
    let seen = 0;
    for (const n of opts.cached()) {
      if (!(await consider(n))) break;
      // A notification that is kept settles without I/O: let requests in between, every CACHE_SCAN_SLICE.
      if (++seen % CACHE_SCAN_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return result;
  }
  let cont: string | undefined;
  do {
    if (signal?.aborted) break;
    let page;
    try {
      page = await listPageKept(
        kube,
        RESOURCES.notifications,
        namespace,
        { limit: pageSize, continue: cont },
        withoutHistory,
      );
    } catch (e) {
      // The snapshot behind the continue token was compacted: start over (what we deleted is gone from it).
      if (cont && e instanceof KubeError && e.code === 410) {
        cont = undefined;
        continue;
      }
      throw e;
    }
    let go = true;
    for (const n of page.items) if (!(go = await consider(n))) break;
    if (!go) break;
    cont = page.metadata.continue || undefined;
  } while (cont && !limitReached());
  return result;
}

/**
 * What a purge reads of a listed notification: all but its history
 * (statusWithoutHistory, which keeps the journal page count) and its
 * managedFields. `purge` lists every notification, so what it keeps per page
 * is garbage the next full collection must find.
 */
function withoutHistory(n: Notification): Notification {
  const { managedFields: _managedFields, ...metadata } = n.metadata;
  return n.status ? { ...n, metadata, status: statusWithoutHistory(n.status) } : { ...n, metadata };
}

/** Deletes exactly this notification (uid and resourceVersion preconditions), then its duplicate claim and journal pages; false when already gone or replaced. */
async function deleteNotification(kube: KubeClient, namespace: string, n: Notification): Promise<boolean> {
  try {
    // Exactly the object judged: the same uid, unchanged since it was read.
    await kube.delete(RESOURCES.notifications, namespace, n.metadata.name ?? '', {
      preconditionUid: n.metadata.uid,
      preconditionResourceVersion: n.metadata.resourceVersion,
    });
  } catch (e) {
    if (isNotFound(e) || isConflict(e)) return false;
    throw e;
  }
  await deleteClaimOf(kube, namespace, n);
  // History that did not fit the status goes with it (the orphan sweep would get it later too).
  if (countedPages(n.status) > 0) await deletePages(kube, namespace, notificationUuidOf(n));
  return true;
}

export interface RetentionTaskOptions {
  kube: KubeClient;
  namespace: string;
  /** [operator] notification_retention_days; 0 or negative disables the task. */
  retentionDays: number;
  log: Logger;
  now?: () => Date;
  /** Every notification from a cache that holds them all (PurgeOptions.cached). */
  cached?: () => readonly Notification[];
}

/** One pass of the periodic retention task; logs and returns what it did (undefined when disabled). */
export async function runRetention(opts: RetentionTaskOptions, signal?: AbortSignal): Promise<PurgeResult | undefined> {
  if (!(opts.retentionDays > 0)) return undefined;
  const result = await purgeNotifications({
    kube: opts.kube,
    namespace: opts.namespace,
    ageInDays: opts.retentionDays,
    now: (opts.now ?? (() => systemClock.now()))(),
    log: opts.log,
    signal,
    ...(opts.cached ? { cached: opts.cached } : {}),
  });
  if (result.deleted) {
    opts.log.info(
      { deleted: result.deleted, matched: result.matched, retentionDays: opts.retentionDays },
      'deleted notifications past their retention',
    );
  }
  return result;
}
