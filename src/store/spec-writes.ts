// REST writes of FailoverSegments and HaHosts: create (the admission protocol
// of src/store/admission/create.ts, rolled back when its status cannot be written),
// update (spec by compare-and-swap, then status) and delete (src/store/lifecycle.ts).
import { randomUUID } from 'node:crypto';
import type { ResourceRef } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION, FINALIZERS, KINDS, LABELS, MANAGED_BY } from '../model/constants.ts';
import type { FailoverSegment, FailoverSegmentSpec, HaHost, HaHostSpec } from '../model/types.ts';
import type { HostRecord, SegmentRecord } from '../domain/records.ts';
import type { NewHost, NewSegment } from '../domain/repository.ts';
import { NotFoundInStoreError } from '../domain/repository.ts';
import type { AdmissionPlan, StoreDeps } from './admission/create.ts';
import type { AdmissionWriter } from './admission/status.ts';
import type { IdAllocator } from './ids.ts';
import type { Informer } from '../runtime/types.ts';
import { createAdmitted } from './admission/create.ts';
import { writeStatus } from './admission/status.ts';
import { toHostRecord, toSegmentRecord } from './mapping.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import type { ClaimKind } from './names.ts';
import { restObjectName } from './names.ts';
import { RepositoryReads } from './repository-reads.ts';
import { replaceSpec } from './replace-spec.ts';
import { rfc3339Seconds } from '../time/format.ts';

/** A metadata.name collision with a kubectl-created object is retried with a new uuid this many times. */
const MAX_CREATE_ATTEMPTS = 3;

export type StoreWriteDeps = StoreDeps & AdmissionWriter;

type SegmentPatch = Partial<NewSegment>;
type HostPatch = Partial<NewHost>;

function segmentSpec(base: FailoverSegmentSpec | undefined, p: SegmentPatch): FailoverSegmentSpec {
  const spec: FailoverSegmentSpec = { ...(base as FailoverSegmentSpec) };
  if (p.name !== undefined) spec.name = p.name;
  if (p.service_type !== undefined) spec.serviceType = p.service_type;
  if (p.recovery_method !== undefined) spec.recoveryMethod = p.recovery_method;
  if (p.description !== undefined) spec.description = p.description;
  if (p.enabled !== undefined) spec.enabled = p.enabled;
  return spec;
}

function hostSpec(base: HaHostSpec, p: HostPatch): HaHostSpec {
  const spec: HaHostSpec = { ...base };
  if (p.name !== undefined) spec.name = p.name;
  if (p.type !== undefined) spec.type = p.type;
  if (p.control_attributes !== undefined) spec.controlAttributes = p.control_attributes;
  if (p.reserved !== undefined) spec.reserved = p.reserved;
  if (p.on_maintenance !== undefined) spec.onMaintenance = p.on_maintenance;
  return spec;
}

/** REST-style candidates: the readable name with a short uuid, a new uuid each time. */
function restCandidates(masakariName: string, kind: ClaimKind): Array<{ name: string; uuid: string }> {
  return Array.from({ length: MAX_CREATE_ATTEMPTS }, () => {
    const uuid = randomUUID();
    return { name: restObjectName(masakariName, uuid, kind), uuid };
  });
}

/** The Repository's reads plus its segment and host writes (src/store/repository.ts adds the notification intake). */
export class SpecWrites extends RepositoryReads {
  constructor(protected readonly deps: StoreWriteDeps) {
    super(deps);
  }

  // --------------------------------------------------------------- segments

  async createSegment(s: NewSegment): Promise<SegmentRecord> {
    const { caches, ids, lifecycle } = this.deps;
    const object = await this.restCreate(RESOURCES.segments, 'segment', s.name, caches.segments, ids.segments, {
      body: ({ name, uuid }, id): FailoverSegment => ({
        apiVersion: API_VERSION,
        kind: 'FailoverSegment',
        metadata: {
          name,
          labels: { [LABELS.uuid]: uuid, [LABELS.id]: String(id), [LABELS.managedBy]: MANAGED_BY },
          finalizers: [FINALIZERS.segmentCascade],
        },
        spec: segmentSpec(undefined, s),
      }),
      rollback: (created) => lifecycle.deleteSegment(created),
    });
    return toSegmentRecord(object);
  }

  async updateSegment(uuid: string, patch: SegmentPatch): Promise<SegmentRecord> {
    const start = this.segmentObject(uuid);
    if (!start) throw new NotFoundInStoreError(`segment ${uuid} not found`);
    const written = await this.update(
      RESOURCES.segments,
      'segment',
      start,
      (obj) => segmentSpec(obj.spec, patch),
      () => ({}),
    );
    this.deps.caches.segments.upsertLocal(written);
    return toSegmentRecord(written);
  }

  async deleteSegment(uuid: string): Promise<void> {
    const seg = this.segmentObject(uuid);
    if (!seg) throw new NotFoundInStoreError(`segment ${uuid} not found`);
    await this.deps.lifecycle.deleteSegment(seg);
  }

  // ------------------------------------------------------------------ hosts

  async createHost(segmentUuid: string, h: NewHost): Promise<HostRecord> {
    const { caches, ids, lifecycle } = this.deps;
    const seg = this.segmentObject(segmentUuid);
    if (!seg) throw new NotFoundInStoreError(`segment ${segmentUuid} not found`);
    const segmentName = seg.metadata.name ?? '';
    const object = await this.restCreate(RESOURCES.hosts, 'host', h.name, caches.hosts, ids.hosts, {
      body: ({ name, uuid }, id): HaHost => ({
        apiVersion: API_VERSION,
        kind: 'HaHost',
        metadata: {
          name,
          labels: {
            [LABELS.uuid]: uuid,
            [LABELS.id]: String(id),
            [LABELS.segmentUuid]: segmentUuid,
            [LABELS.managedBy]: MANAGED_BY,
          },
          finalizers: [FINALIZERS.hostCleanup],
          ownerReferences: [
            { apiVersion: API_VERSION, kind: KINDS.segment.kind, name: segmentName, uid: seg.metadata.uid ?? '' },
          ],
        },
        spec: {
          name: h.name,
          segmentRef: { name: segmentName },
          type: h.type,
          controlAttributes: h.control_attributes,
          reserved: h.reserved,
          onMaintenance: h.on_maintenance,
        },
      }),
      status: (created) => ({
        segmentUuid,
        reserved: h.reserved,
        onMaintenance: h.on_maintenance,
        flagsGeneration: created.metadata.generation,
      }),
      rollback: (created) => lifecycle.deleteHost(created),
    });
    return toHostRecord(object);
  }

  /**
   * PUT of a host. The spec gets the patched fields and, for the flags, the
   * EFFECTIVE values (so an engine latch is not lost by an unrelated edit);
   * status then gets the same flags stamped with the new generation. Writing
   * status even when spec did not change is what makes PUT on_maintenance=false
   * clear an engine latch while spec was already false.
   */
  async updateHost(uuid: string, patch: HostPatch): Promise<HostRecord> {
    const start = this.hostObject(uuid);
    if (!start) throw new NotFoundInStoreError(`host ${uuid} not found`);
    const edit = (obj: HaHost): HaHostSpec => {
      const flags = effectiveFlags(obj);
      return hostSpec(obj.spec, {
        ...patch,
        reserved: patch.reserved ?? flags.reserved,
        on_maintenance: patch.on_maintenance ?? flags.onMaintenance,
      });
    };
    const written = await this.update(RESOURCES.hosts, 'host', start, edit, (updated) => ({
      reserved: updated.spec.reserved === true,
      onMaintenance: updated.spec.onMaintenance === true,
      flagsGeneration: updated.metadata.generation,
    }));
    this.deps.caches.hosts.upsertLocal(written);
    return toHostRecord(written);
  }

  async deleteHost(uuid: string): Promise<void> {
    const host = this.hostObject(uuid);
    if (!host) throw new NotFoundInStoreError(`host ${uuid} not found`);
    await this.deps.lifecycle.deleteHost(host);
  }

  /** createAdmitted with the REST path's choices: new uuids, the cache for names in use, rollback on failure. */
  private async restCreate<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: ClaimKind,
    masakariName: string,
    cache: Informer<T>,
    ids: IdAllocator,
    plan: Pick<AdmissionPlan<T>, 'body' | 'status'> & { rollback: (created: T) => Promise<void> },
  ): Promise<T> {
    const { object } = await createAdmitted(this.deps, {
      ref,
      kind,
      masakariName,
      candidates: restCandidates(masakariName, kind),
      nameInUse: (name) => cache.get(name) !== undefined,
      takeId: () => ids.next(),
      ...plan,
      bindClaim: false,
      statusFailed: (e, created) => inStoreTerms(e, ref, created.metadata.name),
    });
    cache.upsertLocal(object);
    return object;
  }

  /** Spec by compare-and-swap, then status (updatedAt, observedGeneration and `status`), then the old name's claim released. */
  private async update<T extends FailoverSegment | HaHost>(
    ref: ResourceRef,
    kind: ClaimKind,
    start: T,
    edit: (obj: T) => T['spec'],
    status: (updated: T) => Record<string, unknown>,
  ): Promise<T> {
    const { updated, previousName } = await replaceSpec(this.deps, ref, kind, start, edit);
    const written = await writeStatus(this.deps, ref, updated, {
      ...status(updated),
      updatedAt: rfc3339Seconds(this.deps.now()),
      observedGeneration: updated.metadata.generation,
    }).catch((e: unknown) => {
      throw inStoreTerms(e, ref, updated.metadata.name);
    });
    if (previousName !== written.spec.name) {
      await this.deps.claims.release(kind, previousName, written.metadata.name ?? '');
    }
    return written;
  }
}

/** A 404 from the API server during a status write: the object vanished under us. */
function inStoreTerms(e: unknown, ref: ResourceRef, name: string | undefined): unknown {
  return isNotFound(e) ? new NotFoundInStoreError(`${ref.plural}/${name} vanished during the update`) : e;
}
