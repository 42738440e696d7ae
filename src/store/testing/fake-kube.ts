// FOR UNIT TESTS ONLY: an in-memory KubeClient with the API-server semantics
// the store depends on (AlreadyExists on create, resourceVersion
// compare-and-swap on replace and on merge patches that carry one, the status
// subresource, generation bumps on spec changes, finalizers holding a deleted
// object, delete preconditions), plus an informer over it that always reads
// the current state. The integration tests prove the same behaviour against
// a real API server.
import { randomUUID } from 'node:crypto';
import type { KubeClient, KubeList, ListOptions, ResourceRef } from '../../k8s/client.ts';
import { KubeError } from '../../k8s/client.ts';
import type { IndexFunc, Informer, InformerOptions, KubeObjectLike } from '../../runtime/types.ts';
import type { ObjectMeta } from '../../model/types.ts';

interface Stored {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [k: string]: unknown;
}

const hasStatusSubresource = (ref: ResourceRef) => ref.group !== '';

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class FakeKube implements KubeClient {
  private readonly objects = new Map<string, Stored>();
  private rv = 1;
  /** Calls per verb, for tests that count round trips. */
  readonly calls: Record<string, number> = {};
  /** Told about every stored or removed object (FakeInformer turns these into informer events). */
  private readonly listeners: Array<(key: string, obj: Stored | undefined, old: Stored | undefined) => void> = [];

  onChange(listener: (key: string, obj: Stored | undefined, old: Stored | undefined) => void): void {
    this.listeners.push(listener);
  }

  /** The key FakeInformer matches events with. */
  keyOf(ref: ResourceRef, ns: string | undefined, name: string): string {
    return this.key(ref, ns, name);
  }

  private changed(k: string, old: Stored | undefined): void {
    const now = this.objects.get(k);
    for (const l of this.listeners) l(k, now && structuredClone(now), old);
  }

  private remove(k: string): void {
    const old = this.objects.get(k);
    this.objects.delete(k);
    if (old) this.changed(k, old);
  }

  private key(ref: ResourceRef, ns: string | undefined, name: string): string {
    return `${ref.plural}/${ns ?? ''}/${name}`;
  }

  private count(verb: string): void {
    this.calls[verb] = (this.calls[verb] ?? 0) + 1;
  }

  private notFound(ref: ResourceRef, name: string): KubeError {
    return new KubeError(404, 'NotFound', `${ref.plural} "${name}" not found`);
  }

  private conflict(ref: ResourceRef, name: string): KubeError {
    return new KubeError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${ref.plural} "${name}": the object has been modified`,
    );
  }

  private store(k: string, obj: Stored): Stored {
    obj.metadata.resourceVersion = String(++this.rv);
    const old = this.objects.get(k);
    this.objects.set(k, structuredClone(obj));
    this.changed(k, old);
    return structuredClone(obj);
  }

  /** Direct access for assertions. */
  peek<T>(ref: ResourceRef, ns: string, name: string): T | undefined {
    const o = this.objects.get(this.key(ref, ns, name));
    return o ? (structuredClone(o) as unknown as T) : undefined;
  }

  all<T>(ref: ResourceRef, ns: string): T[] {
    const prefix = `${ref.plural}/${ns}/`;
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([, v]) => structuredClone(v) as unknown as T);
  }

  async get<T>(ref: ResourceRef, ns: string | undefined, name: string): Promise<T> {
    this.count('get');
    const o = this.objects.get(this.key(ref, ns, name));
    if (!o) throw this.notFound(ref, name);
    return structuredClone(o) as unknown as T;
  }

  async list<T>(ref: ResourceRef, ns: string | undefined, opts: ListOptions = {}): Promise<KubeList<T>> {
    this.count('list');
    const wanted = (opts.labelSelector ?? '')
      .split(',')
      .filter(Boolean)
      .map((s) => s.split('=') as [string, string]);
    const items = this.all<Stored>(ref, ns ?? '').filter((o) => wanted.every(([k, v]) => o.metadata.labels?.[k] === v));
    return { metadata: { resourceVersion: String(this.rv) }, items: items as unknown as T[] };
  }

  async create<T>(ref: ResourceRef, ns: string | undefined, body: T): Promise<T> {
    this.count('create');
    const obj = structuredClone(body) as unknown as Stored;
    const name = obj.metadata.name ?? '';
    const k = this.key(ref, ns, name);
    if (this.objects.has(k)) throw new KubeError(409, 'AlreadyExists', `${ref.plural} "${name}" already exists`);
    obj.metadata = {
      ...obj.metadata,
      namespace: ns,
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    if (hasStatusSubresource(ref)) delete obj.status;
    return this.store(k, obj) as unknown as T;
  }

  async replace<T>(ref: ResourceRef, ns: string | undefined, name: string, body: T): Promise<T> {
    this.count('replace');
    const k = this.key(ref, ns, name);
    const cur = this.objects.get(k);
    if (!cur) throw this.notFound(ref, name);
    const next = structuredClone(body) as unknown as Stored;
    if (next.metadata.resourceVersion && next.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw this.conflict(ref, name);
    }
    return this.write(ref, k, cur, next, false) as unknown as T;
  }

  async replaceStatus<T>(ref: ResourceRef, ns: string | undefined, name: string, body: T): Promise<T> {
    this.count('replaceStatus');
    const k = this.key(ref, ns, name);
    const cur = this.objects.get(k);
    if (!cur) throw this.notFound(ref, name);
    const next = structuredClone(body) as unknown as Stored;
    if (next.metadata.resourceVersion && next.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw this.conflict(ref, name);
    }
    return this.write(ref, k, cur, next, true) as unknown as T;
  }

  async mergePatch<T>(
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    patch: unknown,
    opts: { status?: boolean } = {},
  ): Promise<T> {
    this.count(opts.status ? 'mergePatchStatus' : 'mergePatch');
    const k = this.key(ref, ns, name);
    const cur = this.objects.get(k);
    if (!cur) throw this.notFound(ref, name);
    const wantRv = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (wantRv && wantRv !== cur.metadata.resourceVersion) throw this.conflict(ref, name);
    const next = mergePatch(structuredClone(cur), patch) as Stored;
    return this.write(ref, k, cur, next, !!opts.status) as unknown as T;
  }

  async jsonPatch<T>(): Promise<T> {
    throw new Error('FakeKube: jsonPatch is not used by the store');
  }

  async apply<T>(): Promise<T> {
    throw new Error('FakeKube: apply is not used by the store');
  }

  async delete(
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    opts: { preconditionUid?: string; preconditionResourceVersion?: string } = {},
  ): Promise<void> {
    this.count('delete');
    const k = this.key(ref, ns, name);
    const cur = this.objects.get(k);
    if (!cur) throw this.notFound(ref, name);
    if (opts.preconditionUid && opts.preconditionUid !== cur.metadata.uid) throw this.conflict(ref, name);
    if (opts.preconditionResourceVersion && opts.preconditionResourceVersion !== cur.metadata.resourceVersion) {
      throw this.conflict(ref, name);
    }
    if (cur.metadata.finalizers?.length) {
      if (!cur.metadata.deletionTimestamp) {
        cur.metadata.deletionTimestamp = new Date().toISOString();
        this.store(k, cur);
      }
      return;
    }
    this.remove(k);
  }

  async watch(): Promise<void> {
    throw new Error('FakeKube: watch is not used; FakeInformer reads the store directly');
  }

  /** A write through the main resource or the status subresource, as the API server applies it. */
  private write(ref: ResourceRef, k: string, cur: Stored, next: Stored, statusOnly: boolean): Stored {
    let result: Stored;
    if (statusOnly) {
      result = { ...structuredClone(cur), status: next.status };
    } else {
      result = { ...next, metadata: { ...next.metadata } };
      // Fields the client cannot change through the main resource.
      result.metadata.uid = cur.metadata.uid;
      result.metadata.creationTimestamp = cur.metadata.creationTimestamp;
      result.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
      result.metadata.generation = cur.metadata.generation;
      if (hasStatusSubresource(ref)) {
        if (cur.status === undefined) delete result.status;
        else result.status = structuredClone(cur.status);
        if (JSON.stringify(next.spec) !== JSON.stringify(cur.spec)) {
          result.metadata.generation = (cur.metadata.generation ?? 1) + 1;
        }
      }
    }
    if (result.metadata.deletionTimestamp && !result.metadata.finalizers?.length) {
      this.remove(k);
      return result;
    }
    return this.store(k, result);
  }
}

/** An Informer that reads FakeKube's current state (so it is always "synced" and never stale). */
export class FakeInformer<T extends KubeObjectLike> implements Informer<T> {
  private readonly handlers: Record<string, Array<(obj: T, old?: T) => void>> = {};
  constructor(
    private readonly kube: FakeKube,
    private readonly ref: ResourceRef,
    private readonly opts: InformerOptions<T>,
  ) {
    const prefix = kube.keyOf(ref, opts.namespace, '');
    kube.onChange((key, obj, old) => {
      if (!key.startsWith(prefix)) return;
      const emit = (event: string, o: T, prev?: T): void => {
        for (const h of this.handlers[event] ?? []) h(o, prev);
      };
      if (!obj) emit('delete', old as unknown as T);
      else if (old) emit('update', obj as unknown as T, old as unknown as T);
      else emit('add', obj as unknown as T);
    });
  }

  async start(): Promise<void> {}
  stop(): void {}
  hasSynced(): boolean {
    return true;
  }
  get(name: string): T | undefined {
    return this.kube.peek<T>(this.ref, this.opts.namespace, name);
  }
  list(): T[] {
    return this.kube.all<T>(this.ref, this.opts.namespace);
  }
  byIndex(index: string, value: string): T[] {
    const fn: IndexFunc<T> | undefined = this.opts.indexes?.[index];
    if (!fn) throw new Error(`no index ${index}`);
    return this.list().filter((o) => fn(o).includes(value));
  }
  on(event: string, handler: (obj: T, old?: T) => void): void {
    (this.handlers[event] ??= []).push(handler);
  }
  lastResourceVersion(): string | undefined {
    return undefined;
  }
  upsertLocal(): void {}
  deleteLocal(): void {}
  async waitForResourceVersion(): Promise<boolean> {
    return true;
  }
}
