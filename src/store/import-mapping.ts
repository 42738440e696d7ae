// What `masakari-operator import` (src/cli/import/) reads from a running
// Masakari and how it maps onto FailoverSegments and HaHosts: the source
// records, their specs, the field-by-field difference to an existing object
// and the match by uuid. The writes are in src/store/import.ts.
import type { KubeClient } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type {
  FailoverSegment,
  FailoverSegmentSpec,
  HaHost,
  HaHostSpec,
  MasakariObject,
  RecoveryMethod,
} from '../model/types.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { toRecordTime } from '../time/format.ts';
import { objectUuid } from './mapping.ts';

/** A segment as Masakari's API returns it (microversion >= 1.2), the fields that are copied. */
export interface SourceSegment {
  id: number;
  uuid: string;
  name: string;
  service_type: string;
  recovery_method: RecoveryMethod;
  description: string | null;
  enabled: boolean;
  /** Masakari's created_at, kept as the record's created_at (annotation; see mapping.ts). */
  created_at?: string | null;
  updated_at: string | null;
}

/** A host as Masakari's API returns it, the fields that are copied. */
export interface SourceHost {
  id: number;
  uuid: string;
  name: string;
  /** failover_segment_id: the uuid of its segment. */
  segment_uuid: string;
  type: string;
  control_attributes: string;
  reserved: boolean;
  on_maintenance: boolean;
  created_at?: string | null;
  updated_at: string | null;
}

export interface ImportTarget {
  segments: FailoverSegment[];
  hosts: HaHost[];
}

/** What a create wrote: the object, and the id it got (the source's when `preserved`). */
export interface ImportCreated<T> {
  object: T;
  id: number;
  preserved: boolean;
}

/** Every FailoverSegment and HaHost of the namespace, read from the API server (not a cache). */
export async function listImportTarget(kube: KubeClient, namespace: string): Promise<ImportTarget> {
  const [segments, hosts] = await Promise.all([
    listAllPages<FailoverSegment>(kube, RESOURCES.segments, namespace),
    listAllPages<HaHost>(kube, RESOURCES.hosts, namespace),
  ]);
  return { segments: segments.items, hosts: hosts.items };
}

export const show = (v: unknown): string => JSON.stringify(v ?? null);

function change(field: string, from: unknown, to: unknown): string | undefined {
  return (from ?? null) === (to ?? null) ? undefined : `${field}: ${show(from)} -> ${show(to)}`;
}

/**
 * How the object differs from the source, field by field in Masakari's names
 * ('enabled: true -> false'); empty when the import has nothing to change. Host
 * flags compare the EFFECTIVE values (what the API shows, engine latches included).
 */
export function segmentChanges(obj: FailoverSegment, src: SourceSegment): string[] {
  return [
    change('name', obj.spec.name, src.name),
    change('service_type', obj.spec.serviceType, src.service_type),
    change('recovery_method', obj.spec.recoveryMethod, src.recovery_method),
    change('description', obj.spec.description, src.description),
    change('enabled', obj.spec.enabled !== false, src.enabled),
    isAdmitted(obj) ? undefined : 'not yet admitted (an earlier create was interrupted): finish it',
  ].filter((c): c is string => c !== undefined);
}

export function hostChanges(obj: HaHost, src: SourceHost): string[] {
  const flags = effectiveFlags(obj);
  return [
    change('name', obj.spec.name, src.name),
    change('type', obj.spec.type, src.type),
    change('control_attributes', obj.spec.controlAttributes, src.control_attributes),
    change('reserved', flags.reserved, src.reserved),
    change('on_maintenance', flags.onMaintenance, src.on_maintenance),
    isAdmitted(obj) ? undefined : 'not yet admitted (an earlier create was interrupted): finish it',
  ].filter((c): c is string => c !== undefined);
}

/** Masakari's updated_at ('2026-01-02T03:04:05.000000', UTC) as status.updatedAt ('2026-01-02T03:04:05Z'). */
export function toStatusTime(masakariTime: string | null): string | null {
  const t = toRecordTime(masakariTime);
  return t === null ? null : `${t}Z`;
}

export function segmentSpecFrom(src: SourceSegment, base?: FailoverSegmentSpec): FailoverSegmentSpec {
  return {
    ...base,
    name: src.name,
    serviceType: src.service_type,
    recoveryMethod: src.recovery_method,
    description: src.description,
    enabled: src.enabled,
  };
}

export function hostSpecFrom(src: SourceHost, segmentName: string, base?: HaHostSpec): HaHostSpec {
  return {
    ...base,
    name: src.name,
    segmentRef: { name: segmentName },
    type: src.type,
    controlAttributes: src.control_attributes,
    reserved: src.reserved,
    onMaintenance: src.on_maintenance,
  };
}

/** uuid → object, for matching source objects to what the namespace already has (label or status uuid). */
export function byUuid<T extends MasakariObject>(objects: T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const o of objects) {
    const uuid = objectUuid(o);
    // Two objects with one uuid (a hand-made copy): prefer the admitted one, which is what the API shows.
    if (uuid && (!map.has(uuid) || isAdmitted(o))) map.set(uuid, o);
  }
  return map;
}
