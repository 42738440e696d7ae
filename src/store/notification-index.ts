// A compact, always-sorted index of the admitted notifications, kept up to
// date from the notification cache's events, so that
//   - GET /v1/notifications in the API's default order (created_at, id; both
//     asc or both desc) walks the index from the marker and builds records
//     for one page only, instead of mapping and sorting every notification on
//     each request (masakari/db/sqlalchemy/api.py notifications_get_all_by_filters
//     reads one page through an index the same way);
//   - isUnderRecovery asks how many unfinished notifications a host has,
//     instead of scanning them all.
// Each entry holds the sort columns and the cached object; its filter columns
// come from the same functions the records are built with (mapping.ts).
import type { Notification } from '../model/types.ts';
import type { Informer } from '../runtime/types.ts';
import { notificationSourceHostUuid, notificationStatus, objectId } from './mapping.ts';
import { toEpochSeconds, toMicros } from '../time/format.ts';
import { recordedCreatedAt } from '../domain/created-at.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { INDEX } from '../model/indexes.ts';

/** Masakari's is_failover_segment_under_recovery statuses. */
const UNDER_RECOVERY = new Set(['new', 'running', 'error']);

/**
 * One admitted notification in the index: its place in the order (id, and
 * created_at in whole seconds, Masakari's precision) and the cached object.
 * The filter columns are read from the object when asked, so an entry is
 * three fields: every field here is paid once per stored notification, and a
 * formatted created_at string cost several times a number.
 */
export class NotificationIndexEntry {
  constructor(
    readonly id: number,
    /** created_at, seconds since the epoch (-Infinity when unparseable: first, as Masakari's empty string sorts). */
    readonly createdAt: number,
    /** Replaced in place by a status write, which keeps the entry's place in the order. */
    public obj: Notification,
  ) {}

  get name(): string {
    return this.obj.metadata.name ?? '';
  }

  get status(): string {
    return notificationStatus(this.obj);
  }

  get sourceHostUuid(): string {
    return notificationSourceHostUuid(this.obj);
  }

  get type(): string {
    return this.obj.spec.type;
  }

  get generatedTime(): string {
    return this.obj.spec.generatedTime;
  }
}

export interface NotificationFilters {
  status?: string;
  sourceHostUuid?: string;
  type?: string;
  /** generated_time >= this (microseconds since the epoch). */
  generatedSinceMicros?: bigint;
}

type SortKey = Pick<NotificationIndexEntry, 'id' | 'createdAt'>;

/** SQL order of (created_at, id): the comparison paginate() applies to these two columns. */
function compareEntries(a: SortKey, b: SortKey): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id - b.id;
}

/**
 * created_at as whole seconds since the epoch: the record's created_at
 * (toRecordTime) is this time without its fraction, so both sort alike.
 */
function createdAtSeconds(n: Notification): number {
  const iso = recordedCreatedAt(n);
  return (iso ? toEpochSeconds(iso) : undefined) ?? -Infinity;
}

/** Where an admitted notification sorts: (created_at, id). */
const keyOf = (n: Notification) => ({ id: objectId(n) ?? 0, createdAt: createdAtSeconds(n) });

/**
 * New entries wait unsorted until the next read; at most this many are
 * inserted one by one (a binary search and a splice each), more are sorted
 * and merged in one pass. A cold start lists every notification in name
 * order, which says nothing about (created_at, id): inserted one by one, each
 * splice moves half the array, quadratic in the count (minutes for 100,000).
 */
const INSERT_ONE_BY_ONE_MAX = 16;

export class NotificationIndex {
  /** Ascending by (created_at, id), once `pending` is merged in (settle()). */
  private sorted: NotificationIndexEntry[] = [];
  /** Added since the last read or change, in arrival order. */
  private pending: NotificationIndexEntry[] = [];
  /** source host uuid → names of its unfinished notifications. */
  private readonly unfinished = new Map<string, Set<string>>();

  // No map by name or id: an entry is found by binary search on the key of
  // the cached object it was filed from (the informer hands every handler the
  // object it replaces), and a marker's id through the cache's own id index.
  // Each such map grows with the stored notifications, and makes as much
  // again of garbage while it grows during the first list.
  constructor(
    private readonly cache: Pick<Informer<Notification>, 'list' | 'on' | 'byIndex'>,
    /**
     * Which filed notifications a page shows: a sealed one still being decided
     * by its claim is filed (its place is fixed) but not shown until it is
     * (admission/visibility.ts). Asked per entry a page walks, so it must be cheap.
     */
    private readonly visible: (n: Notification) => boolean = () => true,
  ) {
    for (const n of cache.list()) this.upsert(n);
    cache.on('add', (n) => this.upsert(n));
    // A resync re-announces an object unchanged (old === n): nothing to refile.
    cache.on('update', (n, old) => old !== n && this.upsert(n, old));
    cache.on('delete', (n, old) => this.remove(old ?? n));
  }

  get size(): number {
    return this.sorted.length + this.pending.length;
  }

  /** Unfinished (new, running, error) admitted notifications from this source host. */
  unfinishedCount(hostUuid: string): number {
    return this.unfinished.get(hostUuid)?.size ?? 0;
  }

  /**
   * The entry a marker names (paginate's lookup among every admitted
   * notification), if any. Ids are unique; should two objects ever claim
   * one, the first in (created_at, id) order.
   */
  byIdFirst(id: number): NotificationIndexEntry | undefined {
    let first: NotificationIndexEntry | undefined;
    for (const n of this.cache.byIndex(INDEX.id, String(id))) {
      if (objectId(n) !== id) continue;
      const at = this.find(n);
      if (at < 0 || !this.visible(this.sorted[at]!.obj)) continue;
      if (!first || compareEntries(this.sorted[at]!, first) < 0) first = this.sorted[at];
    }
    return first;
  }

  /**
   * Up to `limit` entries in (created_at, id) order, `dir` for both keys,
   * strictly after `marker` when given, matching `filters`.
   */
  page(
    dir: 'asc' | 'desc',
    limit: number,
    marker: NotificationIndexEntry | undefined,
    filters: NotificationFilters,
  ): NotificationIndexEntry[] {
    const out: NotificationIndexEntry[] = [];
    if (limit <= 0) return out;
    this.settle();
    const n = this.sorted.length;
    if (dir === 'asc') {
      for (let i = marker ? this.firstAfter(marker) : 0; i < n && out.length < limit; i++) {
        const e = this.sorted[i]!;
        if (matches(e, filters) && this.visible(e.obj)) out.push(e);
      }
    } else {
      for (let i = marker ? this.lastBefore(marker) : n - 1; i >= 0 && out.length < limit; i--) {
        const e = this.sorted[i]!;
        if (matches(e, filters) && this.visible(e.obj)) out.push(e);
      }
    }
    return out;
  }

  /** `n` replaces `old` (the object the cache held before, if any). */
  private upsert(n: Notification, old?: Notification): void {
    if (!n.metadata.name) return;
    const at = old ? this.find(old) : -1;
    if (!isAdmitted(n)) {
      if (at >= 0) this.removeAt(at);
      return;
    }
    const entry = new NotificationIndexEntry(objectId(n) ?? 0, createdAtSeconds(n), n);
    const filed = at >= 0 ? this.sorted[at]! : undefined;
    if (filed && compareEntries(filed, entry) === 0) {
      // Same place in the order: update in place (the usual case, a status write).
      this.unfile(filed);
      filed.obj = n;
      this.file(filed);
      return;
    }
    if (at >= 0) this.removeAt(at);
    this.pending.push(entry);
    this.file(entry);
  }

  private remove(n: Notification): void {
    const at = this.find(n);
    if (at >= 0) this.removeAt(at);
  }

  private removeAt(at: number): void {
    const [entry] = this.sorted.splice(at, 1);
    if (entry) this.unfile(entry);
  }

  /**
   * The position in `sorted` of the entry filed from the cached object `n`
   * (same name), -1 when there is none: only admitted objects are filed, and
   * under their key. Merges `pending` first, so a change costs a binary
   * search, never a scan.
   */
  private find(n: Notification): number {
    if (!isAdmitted(n)) return -1;
    this.settle();
    const name = n.metadata.name;
    const key = keyOf(n);
    for (let i = this.lowerBound(key); i < this.sorted.length; i++) {
      const e = this.sorted[i]!;
      if (compareEntries(e, key) !== 0) break;
      if (e.obj.metadata.name === name) return i;
    }
    // An admitted object is always filed under its key; should that ever not
    // hold, a scan still finds its entry rather than leave a second row behind.
    return this.sorted.findIndex((e) => e.obj.metadata.name === name);
  }

  /** Brings the entries added since the last read into `sorted`. */
  private settle(): void {
    const added = this.pending;
    if (!added.length) return;
    this.pending = [];
    if (added.length <= INSERT_ONE_BY_ONE_MAX) {
      for (const e of added) this.sorted.splice(this.insertionPoint(e), 0, e);
      return;
    }
    // Stable: equal keys keep arrival order, as one-by-one insertion (upper bound) does.
    added.sort(compareEntries);
    const old = this.sorted;
    const merged: NotificationIndexEntry[] = new Array(old.length + added.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < old.length && j < added.length) {
      merged[k++] = compareEntries(added[j]!, old[i]!) < 0 ? added[j++]! : old[i++]!;
    }
    while (i < old.length) merged[k++] = old[i++]!;
    while (j < added.length) merged[k++] = added[j++]!;
    this.sorted = merged;
  }

  private file(e: NotificationIndexEntry): void {
    if (!UNDER_RECOVERY.has(e.status) || !e.sourceHostUuid) return;
    let names = this.unfinished.get(e.sourceHostUuid);
    if (!names) this.unfinished.set(e.sourceHostUuid, (names = new Set()));
    names.add(e.name);
  }

  private unfile(e: NotificationIndexEntry): void {
    const names = this.unfinished.get(e.sourceHostUuid);
    if (!names) return;
    names.delete(e.name);
    if (names.size === 0) this.unfinished.delete(e.sourceHostUuid);
  }

  /** First position whose entry sorts after `e` (upper bound). */
  private insertionPoint(e: NotificationIndexEntry): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(this.sorted[mid]!, e) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose entry sorts before `e` is not; i.e. the lower bound. */
  private lowerBound(e: SortKey): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(this.sorted[mid]!, e) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Ascending walk start: the first entry strictly after the marker in (created_at, id). */
  private firstAfter(marker: NotificationIndexEntry): number {
    return this.insertionPoint(marker);
  }

  /** Descending walk start: the last entry strictly before the marker in (created_at, id). */
  private lastBefore(marker: NotificationIndexEntry): number {
    return this.lowerBound(marker) - 1;
  }
}

function matches(e: NotificationIndexEntry, f: NotificationFilters): boolean {
  if (f.status !== undefined && e.status !== f.status) return false;
  if (f.sourceHostUuid !== undefined && e.sourceHostUuid !== f.sourceHostUuid) return false;
  if (f.type !== undefined && e.type !== f.type) return false;
  if (f.generatedSinceMicros !== undefined && toMicros(e.generatedTime) < f.generatedSinceMicros) return false;
  return true;
}
