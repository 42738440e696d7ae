// FOR UNIT TESTS ONLY: the API server's rules behind FakeKube (fake-kube.ts),
// over the object tracker: resourceVersion preconditions (409 Conflict), 409
// AlreadyExists, the status subresource of custom resources, generation bumps,
// finalizers and delete preconditions, selectors and paged lists, watches from
// a resourceVersion. FakeKube wraps it with interception, scripted failures,
// transport faults and the call log.
import { randomUUID } from 'node:crypto';
import {
  KubeError,
  type JsonPatchOp,
  type KubeClient,
  type KubeList,
  type ListOptions,
  type ResourceRef,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '../../k8s/client.ts';
import { applyJsonPatch, applyMergePatch } from './patches.ts';
import { selectorMatcher } from './selectors.ts';
import type { ObjectTracker, StoredObject } from './tracker.ts';

/** Custom resources (non-core groups) have a status subresource; a Lease has no status, so it is alike here. */
const hasStatusSubresource = (ref: ResourceRef): boolean => ref.group !== '';
export const toSeconds = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** What the server records for the test's assertions (FakeKube exposes them). */
export interface ServerRecord {
  /** Every successful write, in order. */
  writes: Array<{ op: string; plural: string; name: string }>;
  /** Every JSON patch on /status, with its size on the wire. */
  patches: Array<{ plural: string; name: string; bytes: number }>;
}

export class FakeApiServer implements KubeClient {
  private readonly writes: ServerRecord['writes'];
  private readonly patches: ServerRecord['patches'];

  constructor(
    private readonly tracker: ObjectTracker,
    private readonly creationTime: (rv: number) => Date,
    record: ServerRecord,
  ) {
    this.writes = record.writes;
    this.patches = record.patches;
  }

  async get<T>(ref: ResourceRef, ns: string | undefined, name: string): Promise<T> {
    const o = this.tracker.get(ref.plural, ns, name);
    if (!o) throw notFound(ref, name);
    return o as unknown as T;
  }

  private readonly pagedLists = new Map<string, { rv: string; rest: StoredObject[] }>();

  async list<T>(ref: ResourceRef, ns: string | undefined, opts: ListOptions = {}): Promise<KubeList<T>> {
    let rv = String(this.tracker.rv);
    let items: StoredObject[];
    if (opts.continue) {
      const page = this.pagedLists.get(opts.continue);
      if (!page || this.tracker.isCompacted(Number(page.rv))) {
        throw new KubeError(410, 'Expired', 'The provided continue parameter is too old');
      }
      this.pagedLists.delete(opts.continue);
      ({ rv, rest: items } = page);
    } else {
      items = this.tracker.list(ref.plural, ns, selectorMatcher(opts.labelSelector, opts.fieldSelector));
    }
    const metadata: KubeList<T>['metadata'] = { resourceVersion: rv };
    if (opts.limit && items.length > opts.limit) {
      const token = randomUUID();
      this.pagedLists.set(token, { rv, rest: items.slice(opts.limit) });
      items = items.slice(0, opts.limit);
      metadata.continue = token;
    }
    return { metadata, items: items as unknown as T[] };
  }

  async create<T>(ref: ResourceRef, ns: string | undefined, body: T, opts: WriteOptions = {}): Promise<T> {
    const obj = structuredClone(body) as unknown as StoredObject;
    const name =
      obj.metadata.name ?? (obj.metadata.generateName ? `${obj.metadata.generateName}${this.tracker.rv}` : '');
    if (!name) throw new KubeError(422, 'Invalid', `${ref.plural}: metadata.name: Required value`);
    if (this.tracker.get(ref.plural, ns, name)) {
      throw new KubeError(409, 'AlreadyExists', `${ref.plural} "${name}" already exists`);
    }
    obj.metadata = {
      ...obj.metadata,
      name,
      ...(ref.namespaced ? { namespace: ns } : {}),
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: toSeconds(this.creationTime(this.tracker.rv + 1)),
    };
    delete obj.metadata.resourceVersion;
    if (hasStatusSubresource(ref)) delete obj.status;
    if (opts.dryRun) return obj as unknown as T;
    this.writes.push({ op: 'create', plural: ref.plural, name });
    return this.tracker.put(ref.plural, obj) as unknown as T;
  }

  async replace<T>(ref: ResourceRef, ns: string | undefined, name: string, body: T): Promise<T> {
    return this.put(false, ref, ns, name, body);
  }

  async replaceStatus<T>(ref: ResourceRef, ns: string | undefined, name: string, body: T): Promise<T> {
    return this.put(true, ref, ns, name, body);
  }

  /** PUT on the object or on /status. */
  private put<T>(statusOnly: boolean, ref: ResourceRef, ns: string | undefined, name: string, body: T): T {
    const op = statusOnly ? 'replaceStatus' : 'replace';
    return this.write(ref, this.current(ref, ns, name), structuredClone(body), statusOnly, op) as unknown as T;
  }

  async mergePatch<T>(
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    patch: unknown,
    opts: { status?: boolean } = {},
  ): Promise<T> {
    const cur = this.current(ref, ns, name);
    const next = applyMergePatch(structuredClone(cur), patch) as StoredObject;
    return this.write(ref, cur, next, !!opts.status, opts.status ? 'patchStatus' : 'mergePatch') as unknown as T;
  }

  /** A patched metadata.resourceVersion is a precondition, as on the API server. */
  async jsonPatch<T>(
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    ops: JsonPatchOp[],
    opts: { status?: boolean } = {},
  ): Promise<T> {
    const cur = this.current(ref, ns, name);
    const next = applyJsonPatch(structuredClone(cur), ops);
    const out = this.write(ref, cur, next, !!opts.status, opts.status ? 'patchStatus' : 'jsonPatch');
    if (opts.status) this.patches.push({ plural: ref.plural, name, bytes: JSON.stringify(ops).length });
    return out as unknown as T;
  }

  async apply<T>(ref: ResourceRef, ..._rest: unknown[]): Promise<T> {
    throw new KubeError(
      415,
      'UnsupportedMediaType',
      `FakeKube: server-side apply on ${ref.plural} needs an interceptor`,
    );
  }

  async delete(
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    opts: { preconditionUid?: string; preconditionResourceVersion?: string } = {},
  ): Promise<void> {
    const cur = this.current(ref, ns, name);
    if (opts.preconditionUid && opts.preconditionUid !== cur.metadata.uid) throw conflict(ref, name);
    if (opts.preconditionResourceVersion && opts.preconditionResourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(ref, name);
    }
    this.writes.push({ op: 'delete', plural: ref.plural, name });
    if (!cur.metadata.finalizers?.length) return this.tracker.remove(ref.plural, cur);
    if (!cur.metadata.deletionTimestamp) {
      cur.metadata.deletionTimestamp = toSeconds(new Date());
      this.tracker.put(ref.plural, cur);
    }
  }

  /** Streams changes until the signal aborts or endWatches(); rejects with 410 when resuming below compaction. */
  async watch<T>(
    ref: ResourceRef,
    ns: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) return;
    await new Promise<void>((resolve, reject) => {
      let close = (): void => {};
      const end = (): void => {
        close();
        signal.removeEventListener('abort', end);
        resolve();
      };
      try {
        close = this.tracker.watch(
          { plural: ref.plural, namespace: ns, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
          opts.resourceVersion,
          (e) => onEvent(e as unknown as WatchEvent<T>),
          end,
        );
      } catch (err) {
        reject(err);
        return;
      }
      signal.addEventListener('abort', end, { once: true });
    });
  }

  private current(ref: ResourceRef, ns: string | undefined, name: string): StoredObject {
    const cur = this.tracker.get(ref.plural, ns, name);
    if (!cur) throw notFound(ref, name);
    return cur;
  }

  /** A write through the main resource or the status subresource, as the API server applies it. */
  write(ref: ResourceRef, cur: StoredObject, body: unknown, statusOnly: boolean, op?: string): StoredObject {
    const next = body as StoredObject;
    const name = cur.metadata.name ?? '';
    if (next.metadata?.resourceVersion && next.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(ref, name);
    }
    let result: StoredObject;
    if (statusOnly) {
      result = { ...structuredClone(cur), status: structuredClone(next.status) };
    } else {
      result = { ...next, metadata: { ...next.metadata } };
      // Fields the client cannot change through the main resource.
      result.metadata.name = cur.metadata.name;
      result.metadata.namespace = cur.metadata.namespace;
      result.metadata.uid = cur.metadata.uid;
      result.metadata.creationTimestamp = cur.metadata.creationTimestamp;
      result.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
      result.metadata.generation = cur.metadata.generation;
      if (hasStatusSubresource(ref)) {
        if (cur.status === undefined) delete result.status;
        else result.status = structuredClone(cur.status);
      }
      if (JSON.stringify(next.spec) !== JSON.stringify(cur.spec)) {
        result.metadata.generation = (cur.metadata.generation ?? 1) + 1;
      }
    }
    this.writes.push({ op: op ?? (statusOnly ? 'replaceStatus' : 'replace'), plural: ref.plural, name });
    if (result.metadata.deletionTimestamp && !result.metadata.finalizers?.length) {
      this.tracker.remove(ref.plural, cur);
      return result;
    }
    return this.tracker.put(ref.plural, result);
  }
}

function notFound(ref: ResourceRef, name: string): KubeError {
  return new KubeError(404, 'NotFound', `${ref.plural} "${name}" not found`);
}

function conflict(ref: ResourceRef, name: string): KubeError {
  return new KubeError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${ref.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
  );
}
