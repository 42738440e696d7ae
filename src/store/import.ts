// Store-level writes for `masakari-operator import` (src/cli/import/): copy a
// segment or host read from a running Masakari into a FailoverSegment or
// HaHost that keeps its Masakari uuid and, when the namespace's id sequence
// never handed it out, its integer id.
//
// The same guarantees as a REST create (src/store/repository.ts): the name
// claim is taken before the object exists (NameTakenError when another object
// holds the name), the id comes from the sequence's compare-and-swap
// (reserveImportedId in ids.ts), and the object is admitted by a second
// write to status (uuid, id, Ready=True). A crash between the writes leaves an
// object whose labels carry uuid and id; the store reconciler admits it with
// exactly those, and a re-run of the import finishes it too.
//
// The Repository contract is not involved: it cannot take a uuid or id from
// its caller, on purpose.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { ANNOTATIONS, API_VERSION, FIELD_MANAGERS, FINALIZERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type {
  FailoverSegment,
  FailoverSegmentSpec,
  HaHost,
  HaHostSpec,
  MasakariObject,
  RecoveryMethod,
} from '../model/types.ts';
import { NameClaims } from './claims.ts';
import { admittedConditions } from './conditions.ts';
import { reserveImportedId } from './ids.ts';
import { objectId, objectUuid } from './mapping.ts';
import type { ClaimKind, IdKind } from './names.ts';
import { restObjectName, slugify } from './names.ts';
import { rfc3339Seconds, toRecordTime } from '../time/format.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { effectiveFlags } from '../domain/host-flags.ts';

/** Attempts for a spec update that keeps meeting 409 (someone else wrote the object between our read and write). */
const MAX_UPDATE_ATTEMPTS = 10;

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

const show = (v: unknown): string => JSON.stringify(v ?? null);

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

function segmentSpecFrom(src: SourceSegment, base?: FailoverSegmentSpec): FailoverSegmentSpec {
  return {
    ...base,
    name: src.name,
    serviceType: src.service_type,
    recoveryMethod: src.recovery_method,
    description: src.description,
    enabled: src.enabled,
  };
}

function hostSpecFrom(src: SourceHost, segmentName: string, base?: HaHostSpec): HaHostSpec {
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

export class ImportError extends Error {}

/** metadata.name a dry run validates with: the full-uuid form, which is never taken by the REST path. */
function dryRunName(src: { name: string; uuid: string }): string {
  return `${slugify(src.name) || 'x'}-${src.uuid}`;
}

export interface StoreImporterOptions {
  kube: KubeClient;
  namespace: string;
  log: Logger;
  /** Masakari endpoint the objects come from (no credentials); recorded in an annotation on created objects. */
  importedFrom: string;
  now?: () => Date;
}

export class StoreImporter {
  private readonly claims: NameClaims;
  private readonly now: () => Date;

  constructor(private readonly opts: StoreImporterOptions) {
    this.claims = new NameClaims({ kube: opts.kube, namespace: opts.namespace, log: opts.log });
    this.now = opts.now ?? (() => new Date());
  }

  /**
   * Creates the FailoverSegment with the source's uuid. With `keepId` it gets
   * the source's id unless the sequence has already reached it; otherwise (or
   * then) a new id, and `preserved` is false. The caller passes keepId only
   * for ids no object of the namespace has.
   */
  async createSegment(src: SourceSegment, keepId: boolean): Promise<ImportCreated<FailoverSegment>> {
    const { created, id, preserved } = await this.createClaimed(
      RESOURCES.segments,
      'segment',
      'segments',
      src,
      keepId,
      (name, id) => this.segmentBody(src, name, id),
    );
    const admitted = await this.patchStatus(RESOURCES.segments, created, {
      ...this.admission(src.uuid, id, created),
      updatedAt: toStatusTime(src.updated_at),
    });
    return { object: admitted, id, preserved };
  }

  /** Creates the HaHost with the source's uuid in `segment` (an admitted FailoverSegment); `keepId` as for segments. */
  async createHost(segment: FailoverSegment, src: SourceHost, keepId: boolean): Promise<ImportCreated<HaHost>> {
    const { created, id, preserved } = await this.createClaimed(
      RESOURCES.hosts,
      'host',
      'hosts',
      src,
      keepId,
      (name, id) => this.hostBody(src, segment, name, id),
    );
    const admitted = await this.patchStatus(RESOURCES.hosts, created, {
      ...this.admission(src.uuid, id, created),
      segmentUuid: objectUuid(segment) ?? '',
      reserved: src.reserved,
      onMaintenance: src.on_maintenance,
      flagsGeneration: created.metadata.generation,
      updatedAt: toStatusTime(src.updated_at),
    });
    return { object: admitted, id, preserved };
  }

  /**
   * For --dry-run: asks the API server whether it would store the segment
   * (server-side dry run of the create, or of the update of `existing`;
   * nothing is written). Throws the API server's KubeError, e.g. 422 Invalid
   * with the schema rule broken, or 404 when the namespace does not exist.
   */
  async dryRunSegment(src: SourceSegment, existing?: FailoverSegment): Promise<void> {
    const { kube, namespace } = this.opts;
    const write = { fieldManager: FIELD_MANAGERS.import, dryRun: true };
    if (existing) {
      const spec = segmentSpecFrom(src, existing.spec);
      await kube.replace(RESOURCES.segments, namespace, existing.metadata.name ?? '', { ...existing, spec }, write);
    } else {
      await kube.create(RESOURCES.segments, namespace, this.segmentBody(src, dryRunName(src), src.id), write);
    }
  }

  /** As dryRunSegment, for a host; `segmentName` is its segment's metadata.name (planned, for a new segment). */
  async dryRunHost(src: SourceHost, segmentName: string, existing?: HaHost): Promise<void> {
    const { kube, namespace } = this.opts;
    const write = { fieldManager: FIELD_MANAGERS.import, dryRun: true };
    if (existing) {
      const spec = hostSpecFrom(src, existing.spec.segmentRef.name, existing.spec);
      await kube.replace(RESOURCES.hosts, namespace, existing.metadata.name ?? '', { ...existing, spec }, write);
    } else {
      const segment = { metadata: { name: segmentName } } as FailoverSegment;
      await kube.create(RESOURCES.hosts, namespace, this.hostBody(src, segment, dryRunName(src), src.id), write);
    }
  }

  /** Where the object came from, and Masakari's created_at (Kubernetes sets creationTimestamp itself). */
  private importAnnotations(src: { created_at?: string | null }): Record<string, string> {
    const created = toStatusTime(src.created_at ?? null);
    return {
      [ANNOTATIONS.importedFrom]: this.opts.importedFrom,
      ...(created ? { [ANNOTATIONS.createdAt]: created } : {}),
    };
  }

  private segmentBody(src: SourceSegment, name: string, id: number): FailoverSegment {
    return {
      apiVersion: API_VERSION,
      kind: 'FailoverSegment',
      metadata: {
        name,
        labels: { [LABELS.uuid]: src.uuid, [LABELS.id]: String(id), [LABELS.managedBy]: MANAGED_BY },
        annotations: this.importAnnotations(src),
        finalizers: [FINALIZERS.segmentCascade],
      },
      spec: segmentSpecFrom(src),
    };
  }

  /** A host in `segment`; without the segment's uid (a dry run for a segment not created yet) no ownerReference. */
  private hostBody(src: SourceHost, segment: FailoverSegment, name: string, id: number): HaHost {
    const segmentName = segment.metadata.name ?? '';
    const uid = segment.metadata.uid;
    return {
      apiVersion: API_VERSION,
      kind: 'HaHost',
      metadata: {
        name,
        labels: {
          [LABELS.uuid]: src.uuid,
          [LABELS.id]: String(id),
          [LABELS.segmentUuid]: src.segment_uuid,
          [LABELS.managedBy]: MANAGED_BY,
        },
        annotations: this.importAnnotations(src),
        finalizers: [FINALIZERS.hostCleanup],
        ...(uid
          ? { ownerReferences: [{ apiVersion: API_VERSION, kind: KINDS.segment.kind, name: segmentName, uid }] }
          : {}),
      },
      spec: hostSpecFrom(src, segmentName),
    };
  }

  /**
   * Brings an existing segment (matched by uuid) to the source's fields:
   * spec by compare-and-swap (a rename claims the new name first), then
   * status (updated_at from the source; uuid, id and Ready if it was never
   * admitted). Its id is never changed.
   */
  async updateSegment(existing: FailoverSegment, src: SourceSegment): Promise<FailoverSegment> {
    const { object, previousName } = await this.replaceSpec(RESOURCES.segments, 'segment', existing, (obj) =>
      segmentSpecFrom(src, obj.spec),
    );
    const status: Record<string, unknown> = {
      updatedAt: toStatusTime(src.updated_at) ?? rfc3339Seconds(this.now()),
      observedGeneration: object.metadata.generation,
    };
    if (!isAdmitted(object)) Object.assign(status, await this.lateAdmission(object, 'segments', src));
    const written = await this.patchStatus(RESOURCES.segments, object, status);
    await this.releaseOld('segment', previousName, written);
    return written;
  }

  /**
   * Brings an existing host (matched by uuid) to the source's fields. The
   * flags go to spec AND to status stamped with the new generation, as a REST
   * PUT does, so an engine latch that disagrees with the source is replaced.
   */
  async updateHost(existing: HaHost, src: SourceHost): Promise<HaHost> {
    const segmentName = existing.spec.segmentRef.name;
    const { object, previousName } = await this.replaceSpec(RESOURCES.hosts, 'host', existing, (obj) =>
      hostSpecFrom(src, segmentName, obj.spec),
    );
    const status: Record<string, unknown> = {
      reserved: src.reserved,
      onMaintenance: src.on_maintenance,
      flagsGeneration: object.metadata.generation,
      updatedAt: toStatusTime(src.updated_at) ?? rfc3339Seconds(this.now()),
      observedGeneration: object.metadata.generation,
    };
    if (!isAdmitted(object)) {
      Object.assign(status, await this.lateAdmission(object, 'hosts', src), { segmentUuid: src.segment_uuid });
    }
    const written = await this.patchStatus(RESOURCES.hosts, object, status);
    await this.releaseOld('host', previousName, written);
    return written;
  }

  // ---------------------------------------------------------------- helpers

  /**
   * Claim, free metadata.name, id, create, in that order: a refused name or an
   * invalid spec (checked by a server-side dry run) consumes no id, so a
   * re-run after fixing it can still preserve the source's id.
   */
  private async createClaimed<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: ClaimKind,
    idKind: IdKind,
    src: { uuid: string; id: number; name: string },
    keepId: boolean,
    body: (name: string, id: number) => T,
  ): Promise<{ created: T; id: number; preserved: boolean }> {
    const { kube, namespace } = this.opts;
    const write = { fieldManager: FIELD_MANAGERS.import };
    // The usual REST-style name, then one with the whole uuid if a kubectl-made object already has that one.
    const candidates = [restObjectName(src.name, src.uuid, kind), `${slugify(src.name) || kind}-${src.uuid}`];
    for (const name of candidates) {
      // A claim whose ownerName is an existing object's name would look like ours; never take (or release) it.
      if (await this.exists(ref, name)) continue;
      await this.claims.take(kind, src.name, { name });
      let result: { created: T; id: number; preserved: boolean };
      try {
        await kube.create<T>(ref, namespace, body(name, src.id), { ...write, dryRun: true });
        const { id, preserved } = await reserveImportedId(kube, namespace, idKind, keepId ? src.id : undefined);
        result = { created: await kube.create<T>(ref, namespace, body(name, id), write), id, preserved };
      } catch (e) {
        await this.releaseQuietly(kind, src.name, name);
        if (isAlreadyExists(e)) continue;
        throw e;
      }
      // Binding the claim to the new uid lets a real cluster's garbage collector remove it with the object;
      // the store reconciler binds it too, so a failure here is not the import's.
      await this.claims
        .take(kind, src.name, { name, uid: result.created.metadata.uid ?? '' })
        .catch((err: unknown) => this.opts.log.warn({ err, claim: src.name }, 'could not bind the name claim'));
      return result;
    }
    throw new ImportError(`no free metadata.name for ${kind} ${show(src.name)} (tried ${candidates.join(', ')})`);
  }

  private async exists(ref: ResourceRef, name: string): Promise<boolean> {
    try {
      await this.opts.kube.get(ref, this.opts.namespace, name);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  private admission(uuid: string, id: number, created: MasakariObject): Record<string, unknown> {
    return {
      uuid,
      id,
      observedGeneration: created.metadata.generation,
      conditions: admittedConditions(undefined, created.metadata.generation, this.now()),
    };
  }

  /** uuid, id and Ready for an object whose create was interrupted before its status was written. */
  private async lateAdmission(
    obj: MasakariObject,
    idKind: IdKind,
    src: { uuid: string; id: number },
  ): Promise<Record<string, unknown>> {
    const id = objectId(obj) ?? (await reserveImportedId(this.opts.kube, this.opts.namespace, idKind, undefined)).id;
    return {
      uuid: src.uuid,
      id,
      conditions: admittedConditions(obj.status?.conditions, obj.metadata.generation, this.now()),
    };
  }

  private async patchStatus<T extends MasakariObject>(
    ref: ResourceRef,
    obj: T,
    status: Record<string, unknown>,
  ): Promise<T> {
    try {
      return await this.opts.kube.mergePatch<T>(
        ref,
        this.opts.namespace,
        obj.metadata.name ?? '',
        { status },
        { status: true, fieldManager: FIELD_MANAGERS.import },
      );
    } catch (e) {
      throw new ImportError(
        `${ref.plural}/${obj.metadata.name} was written but its status was not (${(e as Error).message}); ` +
          're-run the import to finish it (the store reconciler also does)',
        { cause: e },
      );
    }
  }

  /**
   * Read-modify-write of the spec with a resourceVersion compare-and-swap. The
   * object's own name claim is confirmed (bound to its uid) and a new name is
   * claimed before the write; a spec that would not change is not written.
   */
  private async replaceSpec<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: ClaimKind,
    start: T,
    edit: (obj: T) => T['spec'],
  ): Promise<{ object: T; previousName: string }> {
    const { kube, namespace } = this.opts;
    const name = start.metadata.name ?? '';
    const owner = { name, uid: start.metadata.uid ?? '' };
    let obj: T | undefined = start;
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      if (!obj || obj.metadata.uid !== start.metadata.uid) throw new ImportError(`${ref.plural}/${name} was deleted`);
      if (obj.metadata.deletionTimestamp) throw new ImportError(`${ref.plural}/${name} is being deleted`);
      const spec = edit(obj);
      await this.claims.take(kind, obj.spec.name, owner);
      if (spec.name !== obj.spec.name) await this.claims.take(kind, spec.name, owner);
      if (JSON.stringify(spec) === JSON.stringify(obj.spec)) return { object: obj, previousName: obj.spec.name };
      try {
        const object = await kube.replace<T>(
          ref,
          namespace,
          name,
          { ...obj, spec },
          {
            fieldManager: FIELD_MANAGERS.import,
          },
        );
        return { object, previousName: obj.spec.name };
      } catch (e) {
        if (spec.name !== obj.spec.name) await this.releaseQuietly(kind, spec.name, name);
        if (!isConflict(e)) throw e;
      }
      try {
        obj = await kube.get<T>(ref, namespace, name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        obj = undefined;
      }
    }
    throw new ImportError(`${ref.plural}/${name}: ${MAX_UPDATE_ATTEMPTS} conflicting updates`);
  }

  private async releaseOld(kind: ClaimKind, previousName: string, written: FailoverSegment | HaHost): Promise<void> {
    if (previousName !== written.spec.name) await this.releaseQuietly(kind, previousName, written.metadata.name ?? '');
  }

  private async releaseQuietly(kind: ClaimKind, masakariName: string, ownerName: string): Promise<void> {
    await this.claims.release(kind, masakariName, ownerName).catch((err: unknown) => {
      this.opts.log.warn({ err, claim: masakariName }, 'could not release a name claim; the store sweeper will');
    });
  }
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
