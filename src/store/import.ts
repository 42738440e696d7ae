// Store-level writes for `masakari-operator import` (src/cli/import/): copy a
// segment or host read from a running Masakari (src/store/import-mapping.ts)
// into a FailoverSegment or HaHost that keeps its Masakari uuid and, when the
// namespace's id sequence never handed it out, its integer id.
//
// The same admission protocol as a REST create (src/store/admission/create.ts): the
// name claim is taken before the object exists (NameTakenError when another
// object holds the name), the id comes from the sequence's compare-and-swap
// (reserveImportedId in ids.ts), and the object is admitted by a second
// write to status (uuid, id, Ready=True). Unlike a REST create nothing is
// rolled back: a failure or a crash between the writes leaves an object whose
// labels carry uuid and id; the store reconciler admits it with exactly those,
// and a re-run of the import finishes it too.
//
// The Repository contract is not involved: it cannot take a uuid or id from
// its caller, on purpose.
import type { Logger } from 'pino';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import { getIfExists } from '../k8s/get-if-exists.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { ANNOTATIONS, API_VERSION, FIELD_MANAGERS, FINALIZERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { FailoverSegment, HaHost, MasakariObject } from '../model/types.ts';
import type { AdmissionPlan } from './admission/create.ts';
import { createAdmitted, NoFreeNameError } from './admission/create.ts';
import type { AdmissionWriter } from './admission/status.ts';
import { admissionStatus, writeStatus } from './admission/status.ts';
import { NameClaims } from './claims.ts';
import { reserveImportedId } from './ids.ts';
import type { ImportCreated, SourceHost, SourceSegment } from './import-mapping.ts';
import { hostSpecFrom, segmentSpecFrom, toStatusTime } from './import-mapping.ts';
import { isAdmitted } from '../domain/admitted.ts';
import { objectId, objectUuid } from './mapping.ts';
import type { ClaimKind, IdKind } from './names.ts';
import { restObjectName, slugify } from './names.ts';
import { replaceSpec } from './replace-spec.ts';
import { rfc3339Seconds } from '../time/format.ts';
import { systemClock } from '../time/clock.ts';

export class ImportError extends Error {}

function statusNotWritten(ref: ResourceRef, obj: MasakariObject, e: unknown): ImportError {
  return new ImportError(
    `${ref.plural}/${obj.metadata.name} was written but its status was not (${(e as Error).message}); ` +
      're-run the import to finish it (the store reconciler also does)',
    { cause: e },
  );
}

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
  private readonly writer: AdmissionWriter & { claims: NameClaims };

  constructor(private readonly opts: StoreImporterOptions) {
    this.claims = new NameClaims({ kube: opts.kube, namespace: opts.namespace, log: opts.log });
    this.now = opts.now ?? (() => systemClock.now());
    this.writer = { ...opts, fieldManager: FIELD_MANAGERS.import, now: this.now, claims: this.claims };
  }

  /**
   * Creates the FailoverSegment with the source's uuid. With `keepId` it gets
   * the source's id unless the sequence has already reached it; otherwise (or
   * then) a new id, and `preserved` is false. The caller passes keepId only
   * for ids no object of the namespace has.
   */
  async createSegment(src: SourceSegment, keepId: boolean): Promise<ImportCreated<FailoverSegment>> {
    return this.createClaimed(RESOURCES.segments, 'segment', 'segments', src, keepId, {
      body: ({ name }, id) => this.segmentBody(src, name, id),
      status: () => ({ updatedAt: toStatusTime(src.updated_at) }),
    });
  }

  /** Creates the HaHost with the source's uuid in `segment` (an admitted FailoverSegment); `keepId` as for segments. */
  async createHost(segment: FailoverSegment, src: SourceHost, keepId: boolean): Promise<ImportCreated<HaHost>> {
    return this.createClaimed(RESOURCES.hosts, 'host', 'hosts', src, keepId, {
      body: ({ name }, id) => this.hostBody(src, segment, name, id),
      status: (created) => ({
        segmentUuid: objectUuid(segment) ?? '',
        reserved: src.reserved,
        onMaintenance: src.on_maintenance,
        flagsGeneration: created.metadata.generation,
        updatedAt: toStatusTime(src.updated_at),
      }),
    });
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
    const { updated: object, previousName } = await this.replaceSpec(RESOURCES.segments, 'segment', existing, (obj) =>
      segmentSpecFrom(src, obj.spec),
    );
    const status: Record<string, unknown> = {
      updatedAt: toStatusTime(src.updated_at) ?? rfc3339Seconds(this.now()),
      observedGeneration: object.metadata.generation,
    };
    if (!isAdmitted(object)) Object.assign(status, await this.lateAdmission(object, 'segments', src, {}));
    const written = await this.writeImportedStatus(RESOURCES.segments, object, status);
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
    const { updated: object, previousName } = await this.replaceSpec(RESOURCES.hosts, 'host', existing, (obj) =>
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
      Object.assign(status, await this.lateAdmission(object, 'hosts', src, { segmentUuid: src.segment_uuid }));
    }
    const written = await this.writeImportedStatus(RESOURCES.hosts, object, status);
    await this.releaseOld('host', previousName, written);
    return written;
  }

  // ---------------------------------------------------------------- helpers

  /**
   * The admission protocol (src/store/admission/create.ts) with the source's uuid:
   * the REST-style name, then one with the whole uuid if a kubectl-made object
   * already has that one. A server-side dry run before the id is taken means
   * an invalid spec consumes no id, so a re-run after fixing it can still
   * preserve the source's id.
   */
  private async createClaimed<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: ClaimKind,
    idKind: IdKind,
    src: { uuid: string; id: number; name: string },
    keepId: boolean,
    make: Pick<AdmissionPlan<T>, 'body' | 'status'>,
  ): Promise<ImportCreated<T>> {
    const { kube, namespace } = this.opts;
    let preserved = false;
    try {
      const { object, id } = await createAdmitted<T>(this.writer, {
        ref,
        kind,
        masakariName: src.name,
        candidates: [restObjectName(src.name, src.uuid, kind), `${slugify(src.name) || kind}-${src.uuid}`].map(
          (name) => ({ name, uuid: src.uuid }),
        ),
        nameInUse: async (name) => (await getIfExists(kube, ref, namespace, name)) !== undefined,
        preflight: async (candidate) => {
          const write = { fieldManager: FIELD_MANAGERS.import, dryRun: true };
          await kube.create<T>(ref, namespace, make.body(candidate, src.id), write);
        },
        takeId: async () => {
          const reserved = await reserveImportedId(kube, namespace, idKind, keepId ? src.id : undefined);
          preserved = reserved.preserved;
          return reserved.id;
        },
        ...make,
        bindClaim: true,
        statusFailed: (e, created) => statusNotWritten(ref, created, e),
      });
      return { object, id, preserved };
    } catch (e) {
      if (e instanceof NoFreeNameError) throw new ImportError(e.message);
      throw e;
    }
  }

  /** uuid, id and Ready for an object whose create was interrupted before its status was written. */
  private async lateAdmission(
    obj: MasakariObject,
    idKind: IdKind,
    src: { uuid: string },
    fields: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const id = objectId(obj) ?? (await reserveImportedId(this.opts.kube, this.opts.namespace, idKind, undefined)).id;
    return admissionStatus(obj, { ...fields, uuid: src.uuid, id }, this.now());
  }

  private async writeImportedStatus<T extends MasakariObject>(
    ref: ResourceRef,
    obj: T,
    status: Record<string, unknown>,
  ): Promise<T> {
    try {
      return await writeStatus(this.writer, ref, obj, status);
    } catch (e) {
      throw statusNotWritten(ref, obj, e);
    }
  }

  /** The spec compare-and-swap of src/store/replace-spec.ts, confirming the object's own claim too. */
  private replaceSpec<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: ClaimKind,
    start: T,
    edit: (obj: T) => T['spec'],
  ): Promise<{ updated: T; previousName: string }> {
    return replaceSpec(this.writer, ref, kind, start, edit, {
      confirmOwnClaim: true,
      error: (message) => new ImportError(message),
    });
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
