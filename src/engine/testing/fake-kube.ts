// An in-memory KubeClient and Informer for unit tests of the engine core.
// Writes enforce resourceVersion compare-and-swap like the API server
// (409 Conflict on a stale resourceVersion), PUT /status changes only status,
// and informers see every write through a synchronous "watch".

import { KubeError } from '../../k8s/client.ts';
import type { JsonPatchOp, KubeClient, KubeList, ResourceRef } from '../../k8s/client.ts';
import type { Informer, InformerEvent, KubeObjectLike } from '../../runtime/types.ts';

type Obj = KubeObjectLike & {
  metadata: { generation?: number; creationTimestamp?: string };
  status?: unknown;
  spec?: unknown;
};
type Listener = (type: 'upsert' | 'delete', obj: Obj) => void;

function applyJsonPatch(doc: Obj, ops: JsonPatchOp[]): Obj {
  for (const o of ops) {
    const keys = o.path
      .split('/')
      .slice(1)
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop() as string;
    let parent = doc as unknown as Record<string, unknown>;
    for (const k of keys) {
      if (typeof parent[k] !== 'object' || parent[k] === null) {
        throw new KubeError(422, 'Invalid', `path ${o.path} does not exist`);
      }
      parent = parent[k] as Record<string, unknown>;
    }
    if (o.op === 'remove') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (Array.isArray(parent) && o.op !== 'test') {
      if (last === '-') parent.push(structuredClone(o.value));
      else if (o.op === 'add') parent.splice(Number(last), 0, structuredClone(o.value));
      else parent[Number(last)] = structuredClone(o.value);
    } else if (o.op === 'test') {
      if (JSON.stringify(parent[last]) !== JSON.stringify(o.value)) throw new KubeError(422, 'Invalid', 'test failed');
    } else parent[last] = structuredClone(o.value);
  }
  return doc;
}

export class FakeKube implements KubeClient {
  private rv = 100;
  private readonly store = new Map<string, Obj>();
  private readonly listeners = new Map<string, Listener[]>();
  private readonly failures: Array<{ op: string; plural?: string; err: KubeError }> = [];
  readonly writes: Array<{ op: string; plural: string; name: string }> = [];
  /** Every status merge patch, with its size on the wire. */
  readonly patches: Array<{ plural: string; name: string; bytes: number }> = [];

  private k(ref: ResourceRef, name: string): string {
    return `${ref.plural}/${name}`;
  }

  /** Every stored object of a kind (an informer's initial list). */
  snapshot(plural: string): Obj[] {
    return [...this.store.entries()].filter(([k]) => k.startsWith(`${plural}/`)).map(([, v]) => structuredClone(v));
  }

  watchKind(plural: string, l: Listener): void {
    this.listeners.set(plural, [...(this.listeners.get(plural) ?? []), l]);
  }

  /** The next matching call throws err. */
  failNext(op: 'get' | 'replaceStatus' | 'patchStatus' | 'create' | 'replace', err: KubeError, plural?: string): void {
    this.failures.push({ op, err, ...(plural ? { plural } : {}) });
  }

  private maybeFail(op: string, plural: string): void {
    const i = this.failures.findIndex((f) => f.op === op && (!f.plural || f.plural === plural));
    if (i >= 0) {
      const [f] = this.failures.splice(i, 1);
      throw f?.err;
    }
  }

  private emit(plural: string, type: 'upsert' | 'delete', obj: Obj): void {
    for (const l of this.listeners.get(plural) ?? []) l(type, structuredClone(obj));
  }

  /** Test setup: stores an object as if created (assigns rv, generation, creationTimestamp). */
  seed<T>(ref: ResourceRef, obj: T): T {
    const o = structuredClone(obj) as unknown as Obj;
    o.metadata.resourceVersion = String(++this.rv);
    o.metadata.generation ??= 1;
    o.metadata.creationTimestamp ??= new Date(Date.UTC(2026, 0, 1) + this.rv * 1000)
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
    o.metadata.uid ??= `uid-${o.metadata.name}`;
    this.store.set(this.k(ref, o.metadata.name ?? ''), o);
    this.emit(ref.plural, 'upsert', o);
    return structuredClone(o) as unknown as T;
  }

  peek<T>(ref: ResourceRef, name: string): T {
    const o = this.store.get(this.k(ref, name));
    if (!o) throw new Error(`no ${ref.plural}/${name}`);
    return structuredClone(o) as unknown as T;
  }

  async get<T>(ref: ResourceRef, _ns: string | undefined, name: string): Promise<T> {
    this.maybeFail('get', ref.plural);
    const o = this.store.get(this.k(ref, name));
    if (!o) throw new KubeError(404, 'NotFound', `${ref.plural} "${name}" not found`);
    return structuredClone(o) as unknown as T;
  }

  async list<T>(ref: ResourceRef, _ns?: string, opts: { labelSelector?: string } = {}): Promise<KubeList<T>> {
    // Equality selectors only (a=b,c=d), as the engine uses them.
    const wanted = (opts.labelSelector ?? '')
      .split(',')
      .filter(Boolean)
      .map((term) => term.split('=') as [string, string]);
    const items = [...this.store.entries()]
      .filter(([k]) => k.startsWith(`${ref.plural}/`))
      .filter(([, v]) => wanted.every(([key, value]) => v.metadata.labels?.[key] === value))
      .map(([, v]) => structuredClone(v));
    return { metadata: { resourceVersion: String(this.rv) }, items: items as unknown as T[] };
  }

  async create<T>(ref: ResourceRef, _ns: string | undefined, body: T): Promise<T> {
    this.maybeFail('create', ref.plural);
    const o = body as unknown as Obj;
    if (this.store.has(this.k(ref, o.metadata.name ?? ''))) throw new KubeError(409, 'AlreadyExists', 'already exists');
    this.writes.push({ op: 'create', plural: ref.plural, name: o.metadata.name ?? '' });
    return this.seed(ref, body);
  }

  private cas(ref: ResourceRef, name: string, body: Obj, statusOnly: boolean, op?: string): Obj {
    const cur = this.store.get(this.k(ref, name));
    if (!cur) throw new KubeError(404, 'NotFound', `${ref.plural} "${name}" not found`);
    if (body.metadata.resourceVersion && body.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw new KubeError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${ref.plural} "${name}": the object has been modified`,
      );
    }
    const next = structuredClone(cur);
    if (statusOnly) next.status = structuredClone(body.status);
    else {
      next.spec = structuredClone(body.spec);
      next.metadata.labels = body.metadata.labels;
      if (JSON.stringify(cur.spec) !== JSON.stringify(body.spec))
        next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    }
    next.metadata.resourceVersion = String(++this.rv);
    this.store.set(this.k(ref, name), next);
    this.writes.push({ op: op ?? (statusOnly ? 'replaceStatus' : 'replace'), plural: ref.plural, name });
    this.emit(ref.plural, 'upsert', next);
    return structuredClone(next);
  }

  async replace<T>(ref: ResourceRef, _ns: string | undefined, name: string, body: T): Promise<T> {
    this.maybeFail('replace', ref.plural);
    return this.cas(ref, name, body as unknown as Obj, false) as unknown as T;
  }

  async replaceStatus<T>(ref: ResourceRef, _ns: string | undefined, name: string, body: T): Promise<T> {
    this.maybeFail('replaceStatus', ref.plural);
    return this.cas(ref, name, body as unknown as Obj, true) as unknown as T;
  }

  /** Test helper: change an object as another writer would (bumps resourceVersion). */
  mutate<T>(ref: ResourceRef, name: string, fn: (o: T) => void, statusOnly = true): T {
    const o = this.peek<T>(ref, name);
    fn(o);
    return this.cas(ref, name, o as unknown as Obj, statusOnly) as unknown as T;
  }

  async mergePatch<T>(): Promise<T> {
    throw new Error('FakeKube.mergePatch is not used by the engine');
  }

  /** JSON patch on /status; a patched metadata.resourceVersion is a precondition, as on the API server. */
  async jsonPatch<T>(
    ref: ResourceRef,
    _ns: string | undefined,
    name: string,
    ops: JsonPatchOp[],
    opts: { status?: boolean } = {},
  ): Promise<T> {
    if (!opts.status) throw new Error('FakeKube.jsonPatch: the engine patches status only');
    this.maybeFail('patchStatus', ref.plural);
    const cur = this.store.get(this.k(ref, name));
    if (!cur) throw new KubeError(404, 'NotFound', `${ref.plural} "${name}" not found`);
    const body = applyJsonPatch(structuredClone(cur), ops);
    const next = this.cas(ref, name, body, true, 'patchStatus');
    this.patches.push({ plural: ref.plural, name, bytes: JSON.stringify(ops).length });
    return next as unknown as T;
  }
  async apply<T>(): Promise<T> {
    throw new Error('FakeKube.apply is not used by the engine');
  }
  async delete(ref: ResourceRef, _ns: string | undefined, name: string): Promise<void> {
    const o = this.store.get(this.k(ref, name));
    if (!o) throw new KubeError(404, 'NotFound', 'not found');
    this.store.delete(this.k(ref, name));
    this.emit(ref.plural, 'delete', o);
  }
  async watch(): Promise<void> {
    throw new Error('FakeKube.watch is not used; FakeInformer subscribes directly');
  }
}

export class FakeInformer<T extends KubeObjectLike> implements Informer<T> {
  private readonly items = new Map<string, T>();
  private readonly handlers: Record<InformerEvent, Array<(o: T, old?: T) => void>> = {
    add: [],
    update: [],
    delete: [],
  };

  constructor(
    kube: FakeKube,
    plural: string,
    private readonly indexes: Record<string, (o: T) => string[]> = {},
    /** InformerOptions.keep: objects that fail it are not cached (removed as deletes), as in the real informer. */
    private readonly keep: (o: T) => boolean = () => true,
  ) {
    for (const o of kube.snapshot(plural)) {
      if (this.keep(o as unknown as T)) this.items.set(o.metadata.name ?? '', o as unknown as T);
    }
    kube.watchKind(plural, (type, obj) => {
      const o = obj as unknown as T;
      if (type === 'delete') this.deleteLocal(o.metadata.name ?? '');
      else this.apply(o);
    });
  }

  private apply(o: T): void {
    const name = o.metadata.name ?? '';
    if (!this.keep(o)) return this.deleteLocal(name);
    const old = this.items.get(name);
    if (old && Number(old.metadata.resourceVersion) >= Number(o.metadata.resourceVersion)) return;
    this.items.set(name, o);
    for (const h of old ? this.handlers.update : this.handlers.add) h(o, old);
  }

  async start(): Promise<void> {}
  stop(): void {}
  hasSynced(): boolean {
    return true;
  }
  get(name: string): T | undefined {
    const o = this.items.get(name);
    return o ? structuredClone(o) : undefined;
  }
  list(): T[] {
    return [...this.items.values()].map((o) => structuredClone(o));
  }
  byIndex(index: string, value: string): T[] {
    const f = this.indexes[index];
    if (!f) throw new Error(`no index ${index}`);
    return this.list().filter((o) => f(o).includes(value));
  }
  on(event: InformerEvent, handler: (obj: T, old?: T) => void): void {
    this.handlers[event].push(handler);
  }
  lastResourceVersion(): string | undefined {
    return undefined;
  }
  upsertLocal(obj: T): void {
    this.apply(structuredClone(obj));
  }
  deleteLocal(name: string): void {
    const old = this.items.get(name);
    this.items.delete(name);
    if (old) for (const h of this.handlers.delete) h(old);
  }
  async waitForResourceVersion(): Promise<boolean> {
    return true;
  }
}
