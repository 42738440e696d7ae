// What an import will do, decided before anything is written, from the
// source snapshot and the namespace's current objects. Pure: the same plan is
// printed by --dry-run and carried out by execute.ts.
//
// Matching is by Masakari uuid only: an object of the namespace with the
// source object's uuid is that object (updated when a field differs, else
// skipped); anything else is created; objects only the namespace has are left
// alone and reported.
import type { FailoverSegment, HaHost } from '../../model/types.ts';
import type { ImportTarget, SourceHost, SourceSegment } from '../../store/index.ts';
import { byUuid, hostChanges, hostSegmentUuid, objectId, objectUuid, segmentChanges } from '../../store/index.ts';
import { isInvalid, type InvalidRecord } from './source.ts';
import type { SourceSnapshot } from './source.ts';
import { isAdmitted } from '../../domain/admitted.ts';

export type ItemKind = 'segment' | 'host';
/** create / update / skip: what happens; fail: cannot be imported (why in `reason`); leave: only in the namespace. */
export type PlannedAction = 'create' | 'update' | 'skip' | 'fail' | 'leave';

interface ItemBase {
  kind: ItemKind;
  name: string;
  uuid: string;
  /** Hosts: the uuid and Masakari name of their segment. */
  segmentUuid?: string;
  segmentName?: string;
  /** The id in Masakari. */
  sourceId?: number;
  /** The id in the namespace: existing, or (create) the one the plan expects the sequence to give. */
  id?: number;
  /** A create expected to keep its source id (written before the creates that get new ids). */
  keepsId?: boolean;
  action: PlannedAction;
  /** Field changes of an update ('enabled: true -> false'), id notes of a create. */
  details: string[];
  reason?: string;
}

export interface SegmentItem extends ItemBase {
  kind: 'segment';
  source?: SourceSegment;
  existing?: FailoverSegment;
}

export interface HostItem extends ItemBase {
  kind: 'host';
  source?: SourceHost;
  existing?: HaHost;
}

export type PlanItem = SegmentItem | HostItem;

export interface ImportPlan {
  /** Display order: each segment followed by its hosts, then what only the namespace has. */
  items: PlanItem[];
}

/** The next unreserved id of each sequence (ids.ts highWaterMark), to predict which source ids survive. */
export interface IdMarks {
  segments: number;
  hosts: number;
}

/** Names in use by live objects of the namespace: Masakari name → uuid of the holder. */
function namesInUse(objects: Array<FailoverSegment | HaHost>): Map<string, string> {
  const names = new Map<string, string>();
  for (const o of objects) {
    if (o.metadata.deletionTimestamp) continue;
    names.set(o.spec.name, objectUuid(o) ?? o.metadata.name ?? '');
  }
  return names;
}

/**
 * A name the import wants that an object of the namespace holds and keeps
 * (the holder is not in the source, so nothing will rename it).
 */
function nameConflict(
  kind: ItemKind,
  name: string,
  uuid: string,
  names: Map<string, string>,
  sourceUuids: Set<string>,
): string | undefined {
  const holder = names.get(name);
  if (holder === undefined || holder === uuid || sourceUuids.has(holder)) return undefined;
  return `${kind} name ${JSON.stringify(name)} is already used by ${kind} ${holder} in the namespace (not in the source); rename or delete one of them`;
}

export function buildPlan(source: SourceSnapshot, target: ImportTarget, marks: IdMarks): ImportPlan {
  const segments = byUuid(target.segments);
  const hosts = byUuid(target.hosts);
  const segmentNames = namesInUse(target.segments);
  const hostNames = namesInUse(target.hosts);
  const sourceSegmentUuids = new Set<string>();
  const sourceHostUuids = new Set<string>();
  for (const e of source.segments) {
    if (!isInvalid(e.segment)) sourceSegmentUuids.add(e.segment.uuid);
    for (const h of e.hosts) if (!isInvalid(h)) sourceHostUuids.add(h.uuid);
  }

  const items: PlanItem[] = [];
  for (const entry of source.segments) {
    const seg = entry.segment;
    let segItem: SegmentItem;
    if (isInvalid(seg)) {
      segItem = { kind: 'segment', ...invalidRecordItem(seg) };
    } else {
      segItem = planObject('segment', seg, segments.get(seg.uuid), segmentNames, sourceSegmentUuids, (o) =>
        segmentChanges(o, seg),
      );
    }
    items.push(segItem);
    for (const host of entry.hosts) {
      const base = { segmentUuid: segItem.uuid, segmentName: segItem.name };
      if (isInvalid(host)) {
        items.push({ kind: 'host', ...base, ...invalidRecordItem(host) });
        continue;
      }
      const existing = hosts.get(host.uuid);
      const item: HostItem = {
        ...planObject('host', host, existing, hostNames, sourceHostUuids, (o) => hostChanges(o, host)),
        ...base,
      };
      if (item.action !== 'fail' && segItem.action === 'fail') {
        Object.assign(item, { action: 'fail', reason: 'its segment cannot be imported' });
      } else if (item.action !== 'fail' && existing && hostSegmentUuid(existing) !== host.segment_uuid) {
        Object.assign(item, {
          action: 'fail',
          reason: `the namespace has this host in segment ${hostSegmentUuid(existing)}, Masakari in ${host.segment_uuid}; a host cannot move: delete it here and re-run`,
        });
      }
      items.push(item);
    }
  }

  predictIds(items, 'segment', marks.segments, target.segments);
  predictIds(items, 'host', marks.hosts, target.hosts);

  for (const seg of target.segments) {
    const uuid = objectUuid(seg);
    if (!isAdmitted(seg) || !uuid || sourceSegmentUuids.has(uuid)) continue;
    items.push({ kind: 'segment', ...leftAlone(seg, uuid) });
  }
  for (const host of target.hosts) {
    const uuid = objectUuid(host);
    if (!isAdmitted(host) || !uuid || sourceHostUuids.has(uuid)) continue;
    const segUuid = hostSegmentUuid(host);
    const segName = segUuid ? segments.get(segUuid)?.spec.name : undefined;
    items.push({
      kind: 'host',
      ...leftAlone(host, uuid),
      ...(segUuid ? { segmentUuid: segUuid } : {}),
      ...(segName ? { segmentName: segName } : {}),
    });
  }
  return { items };
}

function leftAlone(obj: FailoverSegment | HaHost, uuid: string) {
  const id = objectId(obj);
  return {
    name: obj.spec.name,
    uuid,
    ...(id !== undefined ? { id } : {}),
    action: 'leave' as const,
    details: ['only in the namespace, not in Masakari: left alone'],
  };
}

/** A record Masakari returned that cannot be read fails, saying why. */
function invalidRecordItem(r: InvalidRecord) {
  return {
    name: r.name ?? '?',
    uuid: r.uuid ?? '?',
    ...(r.id !== undefined ? { sourceId: r.id } : {}),
    action: 'fail' as const,
    details: [],
    reason: `invalid record from Masakari: ${r.invalid}`,
  };
}

function planObject<K extends ItemKind, S extends SourceSegment | SourceHost, T extends FailoverSegment | HaHost>(
  kind: K,
  src: S,
  existing: T | undefined,
  names: Map<string, string>,
  sourceUuids: Set<string>,
  changes: (o: T) => string[],
): ItemBase & { kind: K; source: S; existing?: T } {
  const base = { kind, name: src.name, uuid: src.uuid, sourceId: src.id, source: src, details: [] as string[] };
  const conflict = nameConflict(kind, src.name, src.uuid, names, sourceUuids);
  if (!existing) {
    return conflict ? { ...base, action: 'fail', reason: conflict } : { ...base, action: 'create' };
  }
  const id = objectId(existing);
  const known = { ...base, existing, ...(id !== undefined ? { id } : {}) };
  if (existing.metadata.deletionTimestamp) {
    return {
      ...known,
      action: 'fail',
      reason: 'the namespace object with this uuid is being deleted; re-run once it is gone',
    };
  }
  const diff = changes(existing);
  if (diff.length === 0) return { ...known, action: 'skip' };
  if (conflict) return { ...known, action: 'fail', reason: conflict };
  return { ...known, action: 'update', details: diff };
}

/**
 * Which id each create will get, replaying what execution does: first the
 * creates whose source id no object has and the sequence has not reached, in
 * ascending order (each moves the sequence past it, so they all keep their
 * ids); then the others, which take the sequence's next ids. Allocating the
 * new ids last keeps them from using up source ids still to come.
 */
function predictIds(items: PlanItem[], kind: ItemKind, mark: number, existing: Array<FailoverSegment | HaHost>): void {
  const used = new Set(existing.map(objectId).filter((id): id is number => id !== undefined));
  const creates = items
    .filter((i) => i.kind === kind && i.action === 'create' && i.sourceId !== undefined)
    .sort(bySourceId);
  let next = mark;
  for (const item of creates) {
    const sourceId = item.sourceId as number;
    if (used.has(sourceId) || sourceId < next) continue;
    item.id = sourceId;
    item.keepsId = true;
    next = sourceId + 1;
  }
  for (const item of creates) {
    if (item.keepsId) continue;
    const sourceId = item.sourceId as number;
    item.id = next++;
    item.details.push(
      `id ${sourceId} is already ${used.has(sourceId) ? 'used' : 'allocated'} in the namespace: new id ${item.id}`,
    );
  }
}

function bySourceId(a: PlanItem, b: PlanItem): number {
  return (a.sourceId ?? Number.MAX_SAFE_INTEGER) - (b.sourceId ?? Number.MAX_SAFE_INTEGER);
}

/**
 * Items of one kind in the order execution writes them: creates that keep
 * their source id first, ascending (so each stays above the sequence's mark),
 * then everything else by source id.
 */
export function executionOrder(items: PlanItem[], kind: ItemKind): PlanItem[] {
  const ofKind = items.filter((i) => i.kind === kind);
  return [...ofKind.filter((i) => i.keepsId).sort(bySourceId), ...ofKind.filter((i) => !i.keepsId).sort(bySourceId)];
}
