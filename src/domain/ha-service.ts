// Masakari's rules (masakari/ha/api.py and the list/lookup semantics of its
// controllers and database layer) over a Repository. Bodies reaching here
// have passed the request schemas (validators.ts); the HTTP layer does the
// policy check in between, in Masakari's order.

import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from './records.ts';
import type { NewHost, NewSegment, Repository } from './repository.ts';
import {
  DuplicateNotificationError,
  NameTakenError,
  NotFoundInStoreError,
  StoreUnavailableError,
} from './repository.ts';
import type { NotificationType, RecoveryMethod } from '../model/types.ts';
import type { ComputeHostChecker } from './compute-host-checker.ts';
import { HOST_COLUMNS, NOTIFICATION_COLUMNS, SEGMENT_COLUMNS, VMOVE_COLUMNS } from './columns.ts';
import { bodyBoolean, changes, text } from './request-values.ts';
import {
  BadRequest,
  ComputeNotFoundByName,
  DuplicateNotification,
  FailoverSegmentExists,
  FailoverSegmentInUse,
  HostExists,
  HostInUse,
  HostNotFound,
  HostNotFoundByName,
  HostOnMaintenance,
  MarkerNotFound,
  NotificationNotFound,
  NotificationWithoutVMoves,
  SegmentNotFound,
  ServiceUnavailable,
  VMoveNotFound,
} from './errors.ts';
import * as msg from './messages.ts';
import { filterRows, lastValue, markerId, paginate, parseListParams, processSortParams } from './pagination.ts';
import type { ListParams, QueryParams } from './pagination.ts';
import { isUuidLike } from './schemas.ts';
import { normaliseTime, parseIsoTime, toMicros } from '../time/format.ts';

/** A repository call that goes to the API server (intake, history reads): its outage is a 503 with Retry-After. */
async function fromStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw new ServiceUnavailable(e.message, e.retryAfterSeconds);
    throw e;
  }
}

export interface HaServiceConfig {
  /** [DEFAULT]/osapi_max_limit */
  osapi_max_limit: number;
  /** [DEFAULT]/duplicate_notification_detection_interval (seconds) */
  duplicate_notification_detection_interval: number;
}

/** Statuses that make a segment "under recovery" (ha/api.py is_failover_segment_under_recovery). */
const UNDER_RECOVERY = new Set(['new', 'running', 'error']);

type Body = Record<string, unknown>;

export class HaService {
  constructor(
    readonly repo: Repository,
    private readonly compute: ComputeHostChecker,
    private readonly config: HaServiceConfig,
  ) {}

  // ================================================================ segments

  /** segments.py index. Filters recovery_method, service_type, enabled. */
  listSegments(q: QueryParams): SegmentRecord[] {
    const params = parseListParams(q, this.config.osapi_max_limit);
    // Masakari compares the raw text of enabled with a boolean column; we read it with the strict query vocabulary.
    const rows = filterRows(this.repo.listSegments(), q, {
      text: ['recovery_method', 'service_type'],
      boolean: ['enabled'],
    });
    return paginate(rows, this.repo.listSegments(), params, SEGMENT_COLUMNS);
  }

  /** FailoverSegmentAPI.get_segment: ids that are not uuid-like are never found. */
  getSegment(id: string): SegmentRecord {
    const segment = isUuidLike(id) ? this.repo.getSegment(id) : undefined;
    if (!segment) throw new SegmentNotFound(id);
    return segment;
  }

  /** FailoverSegment.get_by_uuid: a plain lookup. */
  private segmentByUuid(id: string): SegmentRecord {
    const segment = this.repo.getSegment(id);
    if (!segment) throw new SegmentNotFound(id);
    return segment;
  }

  async createSegment(body: Body): Promise<SegmentRecord> {
    const s = body.segment as Body;
    const segment: NewSegment = {
      name: String(s.name),
      service_type: String(s.service_type),
      recovery_method: s.recovery_method as RecoveryMethod,
      description: s.description === undefined ? null : (s.description as string | null),
      enabled: s.enabled === undefined ? true : bodyBoolean(s.enabled),
    };
    try {
      return await this.repo.createSegment(segment);
    } catch (e) {
      if (e instanceof NameTakenError) throw new FailoverSegmentExists(segment.name);
      throw e;
    }
  }

  /** Any notification in new/running/error from a host of the segment. */
  isUnderRecovery(segmentUuid: string): boolean {
    const hosts = this.repo.listHosts(segmentUuid);
    const count = this.repo.unfinishedNotificationCount?.bind(this.repo);
    // From the repository's index of unfinished notifications per host, when it keeps one.
    if (count) return hosts.some((h) => count(h.uuid) > 0);
    const hostUuids = new Set(hosts.map((h) => h.uuid));
    return this.repo.listNotifications().some((n) => UNDER_RECOVERY.has(n.status) && hostUuids.has(n.source_host_uuid));
  }

  async updateSegment(id: string, body: Body): Promise<SegmentRecord> {
    const current = this.segmentByUuid(id);
    if (this.isUnderRecovery(current.uuid)) throw new FailoverSegmentInUse(msg.failoverSegmentInUseUpdate(id));
    const s = body.segment as Body;
    const patch: Partial<NewSegment> = {};
    if ('name' in s) patch.name = String(s.name);
    if ('service_type' in s) patch.service_type = String(s.service_type);
    if ('recovery_method' in s) patch.recovery_method = s.recovery_method as RecoveryMethod;
    if ('description' in s) patch.description = s.description as string | null;
    if ('enabled' in s) patch.enabled = bodyBoolean(s.enabled);
    const changed = changes(current, patch);
    if (Object.keys(changed).length === 0) return current;
    try {
      return await this.repo.updateSegment(current.uuid, changed);
    } catch (e) {
      if (e instanceof NameTakenError) throw new FailoverSegmentExists(String(patch.name));
      if (e instanceof NotFoundInStoreError) throw new SegmentNotFound(id);
      throw e;
    }
  }

  async deleteSegment(id: string): Promise<void> {
    const current = this.segmentByUuid(id);
    if (this.isUnderRecovery(current.uuid)) throw new FailoverSegmentInUse(msg.failoverSegmentInUseDelete(id));
    try {
      await this.repo.deleteSegment(current.uuid);
    } catch (e) {
      if (e instanceof NotFoundInStoreError) throw new SegmentNotFound(id);
      throw e;
    }
  }

  // ================================================================ hosts

  /** hosts.py index: segment lookup first, then the filters. */
  listHosts(segmentId: string, q: QueryParams): HostRecord[] {
    const params = parseListParams(q, this.config.osapi_max_limit);
    const segment = this.segmentByUuid(segmentId);
    // Masakari reads name and control_attributes but its database layer drops them; we apply them.
    const rows = filterRows(this.repo.listHosts(segment.uuid), q, {
      text: ['name', 'type', 'control_attributes'],
      boolean: ['on_maintenance', 'reserved'],
    });
    return paginate(rows, this.repo.listHosts(), params, HOST_COLUMNS);
  }

  /** Host.get_by_uuid(host, segment_uuid): not found → "Host '…' under failover_segment '…' could not be found." */
  private hostUnderSegment(segmentId: string, hostId: string): HostRecord {
    const host = this.repo.getHost(hostId);
    if (!host || host.failover_segment_id !== segmentId) throw HostNotFound.underSegment(hostId, segmentId);
    return host;
  }

  /** HostAPI.get_host: ids that are not uuid-like are "No host with id …". */
  getHost(segmentId: string, hostId: string): HostRecord {
    if (!isUuidLike(hostId)) throw HostNotFound.byId(hostId);
    return this.hostUnderSegment(segmentId, hostId);
  }

  private async checkComputeName(name: string, requestId?: string): Promise<void> {
    if (!(await this.compute.exists(name, { requestId }))) throw new ComputeNotFoundByName(name);
  }

  async createHost(segmentId: string, body: Body, requestId?: string): Promise<HostRecord> {
    const segment = this.segmentByUuid(segmentId);
    const h = body.host as Body;
    const host: NewHost = {
      name: String(h.name),
      type: text(h.type),
      control_attributes: text(h.control_attributes),
      on_maintenance: h.on_maintenance === undefined ? false : bodyBoolean(h.on_maintenance),
      reserved: h.reserved === undefined ? false : bodyBoolean(h.reserved),
    };
    await this.checkComputeName(host.name, requestId);
    try {
      return await this.repo.createHost(segment.uuid, host);
    } catch (e) {
      if (e instanceof NameTakenError) throw new HostExists(host.name);
      if (e instanceof NotFoundInStoreError) throw new SegmentNotFound(segmentId);
      throw e;
    }
  }

  async updateHost(segmentId: string, hostId: string, body: Body, requestId?: string): Promise<HostRecord> {
    const current = this.hostUnderSegment(segmentId, hostId);
    if (this.isUnderRecovery(current.failover_segment_id)) throw new HostInUse(msg.hostInUseUpdate(current.uuid));
    const h = body.host as Body;
    if ('name' in h) await this.checkComputeName(String(h.name), requestId);
    const patch: Partial<NewHost> = {};
    if ('name' in h) patch.name = String(h.name);
    if ('type' in h) patch.type = text(h.type);
    if ('control_attributes' in h) patch.control_attributes = text(h.control_attributes);
    if ('on_maintenance' in h) patch.on_maintenance = bodyBoolean(h.on_maintenance);
    if ('reserved' in h) patch.reserved = bodyBoolean(h.reserved);
    const changed = changes(current, patch);
    if (Object.keys(changed).length === 0) return current;
    try {
      return await this.repo.updateHost(current.uuid, changed);
    } catch (e) {
      if (e instanceof NameTakenError) throw new HostExists(String(patch.name));
      if (e instanceof NotFoundInStoreError) throw HostNotFound.underSegment(hostId, segmentId);
      throw e;
    }
  }

  async deleteHost(segmentId: string, hostId: string): Promise<void> {
    const current = this.hostUnderSegment(segmentId, hostId);
    if (this.isUnderRecovery(current.failover_segment_id)) throw new HostInUse(msg.hostInUseDelete(current.uuid));
    try {
      await this.repo.deleteHost(current.uuid);
    } catch (e) {
      if (e instanceof NotFoundInStoreError) throw HostNotFound.underSegment(hostId, segmentId);
      throw e;
    }
  }

  // ================================================================ notifications

  /** notifications.py index. Filters status, source_host_uuid, type, generated-since. */
  listNotifications(q: QueryParams): NotificationRecord[] {
    const params = parseListParams(q, this.config.osapi_max_limit);
    const status = lastValue(q, 'status');
    const sourceHost = lastValue(q, 'source_host_uuid');
    const type = lastValue(q, 'type');
    const since = lastValue(q, 'generated-since');
    let sinceMicros: bigint | undefined;
    if (since !== undefined) {
      const instant = parseIsoTime(since);
      if (!instant) throw new BadRequest(msg.invalidGeneratedSince());
      sinceMicros = instant.micros;
    }
    const indexed = this.pageFromIndex(params, { status, sourceHost, type, sinceMicros });
    if (indexed) return indexed;
    // Another order than the index's: every notification is mapped, once (it is also the marker's pool).
    const all = this.repo.listNotifications();
    let rows = all;
    if (status !== undefined) rows = rows.filter((n) => n.status === status);
    if (sourceHost !== undefined) rows = rows.filter((n) => n.source_host_uuid === sourceHost);
    if (type !== undefined) rows = rows.filter((n) => n.type === type);
    if (sinceMicros !== undefined) rows = rows.filter((n) => toMicros(n.generated_time) >= sinceMicros);
    return paginate(rows, all, params, NOTIFICATION_COLUMNS);
  }

  /**
   * The default order (created_at, id, one direction) served from the
   * repository's sorted index, with paginate()'s checks in paginate()'s
   * order: limit 0, directions, marker. Undefined: take the general path.
   */
  private pageFromIndex(
    params: ListParams,
    f: { status?: string; sourceHost?: string; type?: string; sinceMicros?: bigint },
  ): NotificationRecord[] | undefined {
    if (!this.repo.pageNotifications) return undefined;
    if (params.limit === 0) return [];
    const { keys, dirs } = processSortParams(params.sortKeys, params.sortDirs);
    if (keys.length !== 2 || keys[0] !== 'created_at' || keys[1] !== 'id' || dirs[0] !== dirs[1]) return undefined;
    let id: number | undefined;
    if (params.marker !== undefined) {
      id = markerId(params.marker);
      if (id === undefined) throw new MarkerNotFound(params.marker);
    }
    const rows = this.repo.pageNotifications({
      dir: dirs[0]!,
      limit: params.limit,
      ...(id !== undefined ? { markerId: id } : {}),
      ...(f.status !== undefined ? { status: f.status } : {}),
      ...(f.sourceHost !== undefined ? { sourceHostUuid: f.sourceHost } : {}),
      ...(f.type !== undefined ? { type: f.type } : {}),
      ...(f.sinceMicros !== undefined ? { generatedSinceMicros: f.sinceMicros } : {}),
    });
    if (!rows) throw new MarkerNotFound(params.marker ?? '');
    return rows;
  }

  getNotification(id: string): NotificationRecord {
    const n = isUuidLike(id) ? this.repo.getNotification(id) : undefined;
    if (!n) throw new NotificationNotFound(id);
    return n;
  }

  /** show at microversion 1.1+: with recovery_workflow_details. */
  async getNotificationDetails(id: string): Promise<NotificationRecord> {
    const n = isUuidLike(id) ? await fromStore(() => this.repo.getNotificationDetails(id)) : undefined;
    if (!n) throw new NotificationNotFound(id);
    return n;
  }

  /**
   * NotificationAPI.create_notification, payload already validated: host by
   * name (400) → maintenance (409) → duplicate (409, atomic in the
   * repository) → stored as new. No random delay: the repository detects
   * concurrent duplicates atomically.
   */
  async createNotification(body: Body): Promise<NotificationRecord> {
    const n = body.notification as Body;
    const hostname = String(n.hostname);
    const type = n.type as NotificationType;
    const host = this.repo.getHostByName(hostname);
    if (!host) throw new HostNotFoundByName(hostname);
    if (host.on_maintenance) throw new HostOnMaintenance(hostname, type);
    const generatedTime = normaliseTime(String(n.generated_time));
    if (generatedTime === undefined) throw new BadRequest(msg.invalidGeneratedSince());
    try {
      return await fromStore(() =>
        this.repo.createNotification(
          {
            type,
            hostname,
            generated_time: generatedTime,
            payload: n.payload as Record<string, string>,
            source_host_uuid: host.uuid,
            failover_segment_uuid: host.failover_segment_id,
          },
          this.config.duplicate_notification_detection_interval,
        ),
      );
    } catch (e) {
      if (e instanceof DuplicateNotificationError) throw new DuplicateNotification(hostname, type);
      throw e;
    }
  }

  // ================================================================ vmoves

  /** VMoveAPI._is_valid_notification: the notification exists and is a COMPUTE_HOST one. */
  private vmoveNotification(notificationId: string): NotificationRecord {
    const n = this.repo.getNotification(notificationId);
    if (!n) throw new NotificationNotFound(notificationId);
    if (n.type !== 'COMPUTE_HOST') throw new NotificationWithoutVMoves(notificationId);
    return n;
  }

  /** vmoves.py index. Filters status, type. */
  async listVMoves(notificationId: string, q: QueryParams): Promise<VMoveRecordView[]> {
    const params = parseListParams(q, this.config.osapi_max_limit);
    const n = this.vmoveNotification(notificationId);
    const all = await fromStore(() => this.repo.listVMoves(n.notification_uuid));
    const rows = filterRows(all, q, { text: ['status', 'type'] });
    return paginate(rows, all, params, VMOVE_COLUMNS);
  }

  /**
   * vmoves.py show. Unlike Masakari, an unknown notification is a 404 (not a
   * 500) and a vmove of another notification is not found under this one.
   */
  async getVMove(notificationId: string, vmoveId: string): Promise<VMoveRecordView> {
    const n = this.vmoveNotification(notificationId);
    const v = isUuidLike(vmoveId) ? await fromStore(() => this.repo.getVMove(n.notification_uuid, vmoveId)) : undefined;
    if (!v || v.notification_uuid !== n.notification_uuid) throw new VMoveNotFound(vmoveId);
    return v;
  }
}
