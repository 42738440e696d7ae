// An in-memory Repository with the contract's guarantees (unique live names,
// increasing integer ids per table, atomic duplicate detection, cascade on
// segment delete), for fast tests of the rules and the HTTP layer. It also
// lets tests play the engine: set a notification's status or add vmoves.

import { randomUUID } from 'node:crypto';
import type { HostRecord, NotificationRecord, SegmentRecord, VMoveRecordView } from '../records.ts';
import type { NewHost, NewNotification, NewSegment, Repository } from '../repository.ts';
import { DuplicateNotificationError, NameTakenError, NotFoundInStoreError } from '../repository.ts';
import type { NotificationStatus, WorkflowTaskRecord } from '../../model/types.ts';
import { nowRecordTime, toMicros } from '../../time/format.ts';

export interface MemoryRepositoryOptions {
  /** Clock for created_at/updated_at. */
  now?: () => Date;
}

export class MemoryRepository implements Repository {
  private readonly segments = new Map<string, SegmentRecord>();
  private readonly hosts = new Map<string, HostRecord>();
  private readonly notifications = new Map<string, NotificationRecord>();
  private readonly vmoves = new Map<string, VMoveRecordView>();
  private readonly nextId = { segments: 1, hosts: 1, notifications: 1, vmoves: 1 };
  private readonly now: () => Date;

  constructor(opts: MemoryRepositoryOptions = {}) {
    this.now = opts.now ?? (() => new Date());
  }

  private stamp(): string {
    return nowRecordTime(this.now());
  }

  private id(kind: keyof MemoryRepository['nextId']): number {
    return this.nextId[kind]++;
  }

  /** A new segment or host row, created now, with the name its object would have in the store. */
  private insert<R extends SegmentRecord | HostRecord>(
    table: Map<string, R>,
    kind: 'segment' | 'host',
    row: Omit<R, 'created_at' | 'updated_at' | 'k8sName'>,
  ): R {
    const rec = { ...row, created_at: this.stamp(), updated_at: null, k8sName: `${kind}-${row.uuid}` } as R;
    table.set(rec.uuid, rec);
    return { ...rec };
  }

  /** A segment or host updated now; a new name must be free in its table. */
  private update<R extends SegmentRecord | HostRecord>(
    table: Map<string, R>,
    uuid: string,
    patch: Partial<NewSegment> | Partial<NewHost>,
  ): R {
    const cur = table.get(uuid);
    if (!cur) throw new NotFoundInStoreError(uuid);
    const name = patch.name;
    if (name !== undefined && name !== cur.name && [...table.values()].some((x) => x.name === name)) {
      throw new NameTakenError(name);
    }
    const next = { ...cur, ...stripUndefined(patch), updated_at: this.stamp() };
    table.set(uuid, next);
    return { ...next };
  }

  // ---------------------------------------------------------------- segments
  listSegments(): SegmentRecord[] {
    return [...this.segments.values()].map((s) => ({ ...s }));
  }

  getSegment(uuid: string): SegmentRecord | undefined {
    const s = this.segments.get(uuid);
    return s && { ...s };
  }

  async createSegment(s: NewSegment): Promise<SegmentRecord> {
    if ([...this.segments.values()].some((x) => x.name === s.name)) throw new NameTakenError(s.name);
    return this.insert(this.segments, 'segment', {
      id: this.id('segments'),
      uuid: randomUUID(),
      name: s.name,
      service_type: s.service_type,
      enabled: s.enabled,
      description: s.description,
      recovery_method: s.recovery_method,
    });
  }

  async updateSegment(uuid: string, patch: Partial<NewSegment>): Promise<SegmentRecord> {
    return this.update(this.segments, uuid, patch);
  }

  async deleteSegment(uuid: string): Promise<void> {
    if (!this.segments.delete(uuid)) throw new NotFoundInStoreError(uuid);
    for (const h of [...this.hosts.values()]) if (h.failover_segment_id === uuid) this.hosts.delete(h.uuid);
  }

  // ---------------------------------------------------------------- hosts
  listHosts(segmentUuid?: string): HostRecord[] {
    return [...this.hosts.values()]
      .filter((h) => segmentUuid === undefined || h.failover_segment_id === segmentUuid)
      .map((h) => ({ ...h }));
  }

  getHost(uuid: string): HostRecord | undefined {
    const h = this.hosts.get(uuid);
    return h && { ...h };
  }

  getHostByName(name: string): HostRecord | undefined {
    const h = [...this.hosts.values()].find((x) => x.name === name);
    return h && { ...h };
  }

  async createHost(segmentUuid: string, h: NewHost): Promise<HostRecord> {
    if (!this.segments.has(segmentUuid)) throw new NotFoundInStoreError(segmentUuid);
    if (this.getHostByName(h.name)) throw new NameTakenError(h.name);
    return this.insert(this.hosts, 'host', {
      id: this.id('hosts'),
      uuid: randomUUID(),
      name: h.name,
      failover_segment_id: segmentUuid,
      type: h.type,
      reserved: h.reserved,
      control_attributes: h.control_attributes,
      on_maintenance: h.on_maintenance,
    });
  }

  async updateHost(uuid: string, patch: Partial<NewHost>): Promise<HostRecord> {
    return this.update(this.hosts, uuid, patch);
  }

  async deleteHost(uuid: string): Promise<void> {
    if (!this.hosts.delete(uuid)) throw new NotFoundInStoreError(uuid);
  }

  // ---------------------------------------------------------------- notifications
  listNotifications(): NotificationRecord[] {
    return [...this.notifications.values()].map((n) => structuredClone(n));
  }

  getNotification(uuid: string): NotificationRecord | undefined {
    const n = this.notifications.get(uuid);
    return n && { ...structuredClone(n), recovery_workflow_details: [] };
  }

  async getNotificationDetails(uuid: string): Promise<NotificationRecord | undefined> {
    const n = this.notifications.get(uuid);
    return n && structuredClone(n);
  }

  async createNotification(n: NewNotification, windowSeconds: number): Promise<NotificationRecord> {
    // Check-and-insert without an await in between: atomic on Node's single thread.
    const since = toMicros(n.generated_time) - BigInt(windowSeconds) * 1_000_000n;
    const duplicate = [...this.notifications.values()].some(
      (x) =>
        x.type === n.type &&
        x.source_host_uuid === n.source_host_uuid &&
        toMicros(x.generated_time) >= since &&
        samePayload(x.payload, n.payload),
    );
    if (duplicate) throw new DuplicateNotificationError(`${n.hostname} ${n.type}`);
    const uuid = randomUUID();
    const rec: NotificationRecord = {
      id: this.id('notifications'),
      notification_uuid: uuid,
      generated_time: n.generated_time,
      source_host_uuid: n.source_host_uuid,
      type: n.type,
      payload: { ...n.payload },
      status: 'new',
      failover_segment_uuid: n.failover_segment_uuid,
      message: null,
      created_at: this.stamp(),
      updated_at: null,
      recovery_workflow_details: [],
      k8sName: `notification-${uuid}`,
    };
    this.notifications.set(uuid, rec);
    return structuredClone(rec);
  }

  // ---------------------------------------------------------------- vmoves
  async listVMoves(notificationUuid: string): Promise<VMoveRecordView[]> {
    return [...this.vmoves.values()].filter((v) => v.notification_uuid === notificationUuid).map((v) => ({ ...v }));
  }

  async getVMove(notificationUuid: string, vmoveUuid: string): Promise<VMoveRecordView | undefined> {
    const v = this.vmoves.get(vmoveUuid);
    return v && v.notification_uuid === notificationUuid ? { ...v } : undefined;
  }

  // ---------------------------------------------------------------- test helpers (the engine's writes)

  /** Sets what the engine would set on a notification. */
  setNotificationState(
    uuid: string,
    patch: { status?: NotificationStatus; message?: string | null; recovery_workflow_details?: WorkflowTaskRecord[] },
    opts: { touch?: boolean } = {},
  ): void {
    const cur = this.notifications.get(uuid);
    if (!cur) throw new NotFoundInStoreError(uuid);
    const updated_at = opts.touch === false ? cur.updated_at : this.stamp();
    this.notifications.set(uuid, { ...cur, ...stripUndefined(patch), updated_at });
  }

  /** Sets the engine's effective host flags. */
  setHostFlags(uuid: string, patch: { reserved?: boolean; on_maintenance?: boolean }): void {
    const cur = this.hosts.get(uuid);
    if (!cur) throw new NotFoundInStoreError(uuid);
    this.hosts.set(uuid, { ...cur, ...stripUndefined(patch) });
  }

  /** Adds a vmove row as the host-failure workflow would. */
  addVMove(notificationUuid: string, v: Partial<VMoveRecordView> & { instance_uuid: string }): VMoveRecordView {
    const rec: VMoveRecordView = {
      id: this.id('vmoves'),
      uuid: randomUUID(),
      notification_uuid: notificationUuid,
      instance_name: null,
      source_host: null,
      dest_host: null,
      start_time: null,
      end_time: null,
      type: 'evacuation',
      status: 'pending',
      message: null,
      created_at: this.stamp(),
      updated_at: null,
      ...v,
    };
    this.vmoves.set(rec.uuid, rec);
    return { ...rec };
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Masakari compares payload dicts for equality. */
function samePayload(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
