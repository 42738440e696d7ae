// FOR UNIT TESTS ONLY: one in-memory KubeClient for every unit test, modelled
// on controller-runtime's pkg/client/fake + pkg/client/interceptor. Behind it
// is an object tracker (kube/tracker.ts) with the API server's rules that our
// code depends on:
// - one resourceVersion counter; a write carrying a stale resourceVersion is a
//   409 Conflict; create of an existing name is 409 AlreadyExists;
// - custom resources (non-core groups) have a status subresource: create and
//   the main resource ignore status, /status changes only status; a spec change
//   bumps metadata.generation;
// - finalizers hold a deleted object (deletionTimestamp set) until removed;
//   delete preconditions (uid, resourceVersion);
// - label and field selectors, paged lists (limit/continue);
// - watches that replay from a resourceVersion (410 Gone after compact()) and
//   stream every change. They feed the REAL informer (src/runtime/informer.ts),
//   see testing/informers.ts; holdWatches() makes those caches lag behind.
// Faults: `interceptors` per verb (interceptor.Funcs: each gets the
// un-intercepted client and the call's arguments), failNext for one scripted
// error, and useFaults(KubeFaultInjector) to replay the transport-level faults
// of src/k8s/fault-injection.ts (503, refused, timeout, lost response, delay).
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
} from '../k8s/client.ts';
import type { KubeFaultInjector } from '../k8s/fault-injection.ts';
import { resourcePath, query } from '../k8s/paths.ts';
import type { HttpCall, HttpMethod } from '../k8s/transport.ts';
import { applyJsonPatch, applyMergePatch } from './kube/patches.ts';
import { selectorMatcher } from './kube/selectors.ts';
import { ObjectTracker } from './kube/tracker.ts';
import type { StoredObject } from './kube/tracker.ts';

export type { StoredObject } from './kube/tracker.ts';
/** The verbs the fake serves; it has no listKept, so listAllPages maps the items of its list. */
export type KubeVerb = Exclude<keyof KubeClient, 'listKept'>;

/** Per-verb interceptors: each gets the un-intercepted client and the call's arguments. */
export type Interceptors = {
  [V in KubeVerb]?: (client: KubeClient, ...args: Parameters<KubeClient[V]>) => ReturnType<KubeClient[V]>;
};

/** What a scripted verb does (scriptedKube): a value, a promise, or a throw. */
export type Script = { [V in KubeVerb]?: (...args: Parameters<KubeClient[V]>) => unknown };

export interface RecordedCall {
  method: KubeVerb;
  args: unknown[];
}

/** Names failNext matches: the verbs, plus patchStatus for a JSON or merge patch on /status. */
export type FailableOp = KubeVerb | 'patchStatus';

export interface FakeKubeOptions {
  interceptors?: Interceptors;
  /** metadata.creationTimestamp of a new object, given its resourceVersion. Default: the wall clock. */
  creationTime?: (resourceVersion: number) => Date;
  /** First resourceVersion handed out is this + 1. Default 100. */
  firstResourceVersion?: number;
}

/** Custom resources (non-core groups) have a status subresource; a Lease has no status, so it is alike here. */
const hasStatusSubresource = (ref: ResourceRef): boolean => ref.group !== '';
const toSeconds = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');
const METHODS: Record<KubeVerb, HttpMethod> = {
  get: 'GET',
  list: 'GET',
  watch: 'GET',
  create: 'POST',
  replace: 'PUT',
  replaceStatus: 'PUT',
  mergePatch: 'PATCH',
  jsonPatch: 'PATCH',
  apply: 'PATCH',
  delete: 'DELETE',
};

export class FakeKube implements KubeClient {
  readonly tracker: ObjectTracker;
  /** Calls per verb (patches on /status count as mergePatchStatus / jsonPatchStatus). */
  readonly calls: Record<string, number> = {};
  /** Every successful write, in order. */
  readonly writes: Array<{ op: string; plural: string; name: string }> = [];
  /** Every call with its arguments, in order. */
  readonly log: RecordedCall[] = [];
  /** Every JSON patch on /status, with its size on the wire. */
  readonly patches: Array<{ plural: string; name: string; bytes: number }> = [];
  private interceptors: Interceptors;
  private readonly failures: Array<{ op: FailableOp; plural?: string; err: Error }> = [];
  private faults: KubeFaultInjector | undefined;
  private readonly creationTime: (rv: number) => Date;

  /** The un-intercepted client that interceptors call through to. */
  readonly direct: KubeClient;

  constructor(o: FakeKubeOptions = {}) {
    this.tracker = new ObjectTracker(o.firstResourceVersion);
    this.interceptors = { ...o.interceptors };
    this.creationTime = o.creationTime ?? (() => new Date());
    this.direct = {
      get: (...a) => this.doGet(...a),
      list: (...a) => this.doList(...a),
      create: (...a) => this.doCreate(...a),
      replace: (ref, ns, name, body) => this.doPut(false, ref, ns, name, body),
      replaceStatus: (ref, ns, name, body) => this.doPut(true, ref, ns, name, body),
      mergePatch: (...a) => this.doMergePatch(...a),
      jsonPatch: (...a) => this.doJsonPatch(...a),
      apply: (...a) => this.doApply(...a),
      delete: (...a) => this.doDelete(...a),
      watch: (...a) => this.doWatch(...a),
    };
  }

  /** Adds (or replaces) interceptors; returns a function that removes the ones it added. */
  intercept(more: Interceptors): () => void {
    const before = { ...this.interceptors };
    this.interceptors = { ...this.interceptors, ...more };
    return () => {
      this.interceptors = before;
    };
  }

  /** Interceptors that ignore the client: each verb does what fn says (a value, a promise, or a throw). */
  script(more: Script): void {
    const wrapped: Record<string, unknown> = {};
    for (const [verb, fn] of Object.entries(more) as Array<[KubeVerb, (...a: unknown[]) => unknown]>) {
      wrapped[verb] = (_client: KubeClient, ...args: unknown[]) => Promise.resolve(fn(...args));
    }
    this.intercept(wrapped as Interceptors);
  }

  callsOf(verb: KubeVerb): RecordedCall[] {
    return this.log.filter((c) => c.method === verb);
  }

  /** The next call matching op (and plural, when given) throws err instead of running. */
  failNext(op: FailableOp, err: Error, plural?: string): void {
    this.failures.push({ op, err, ...(plural ? { plural } : {}) });
  }

  /** Every call goes through the injector's transport-level faults, as over HTTP. */
  useFaults(injector: KubeFaultInjector | undefined): void {
    this.faults = injector;
  }

  // ------------------------------------------------------------------ test setup and assertions

  /** Stores obj as is (status included), as a test's precondition: assigns resourceVersion, uid, generation. */
  seed<T>(ref: ResourceRef, obj: T): T {
    const o = structuredClone(obj) as unknown as StoredObject;
    o.metadata.generation ??= 1;
    o.metadata.uid ??= randomUUID();
    o.metadata.creationTimestamp ??= toSeconds(this.creationTime(this.tracker.rv + 1));
    return this.tracker.put(ref.plural, o) as unknown as T;
  }

  /** The stored object: peek(ref, ns, name) is undefined when missing; peek(ref, name) looks in every namespace and throws. */
  peek<T>(ref: ResourceRef, name: string): T;
  peek<T>(ref: ResourceRef, namespace: string | undefined, name: string): T | undefined;
  peek<T>(ref: ResourceRef, nsOrName: string | undefined, name?: string): T | undefined {
    if (name !== undefined) return this.tracker.get(ref.plural, nsOrName, name) as T | undefined;
    const found = this.tracker.list(ref.plural, undefined).find((o) => o.metadata.name === nsOrName);
    if (!found) throw new Error(`no ${ref.plural}/${nsOrName}`);
    return found as unknown as T;
  }

  /** Every stored object of a resource (in one namespace, or all). */
  all<T>(ref: ResourceRef | string, namespace?: string): T[] {
    return this.tracker.list(typeof ref === 'string' ? ref : ref.plural, namespace) as unknown as T[];
  }

  /** Changes an object as another writer would (bumps resourceVersion; status only unless statusOnly is false). */
  mutate<T>(ref: ResourceRef, name: string, fn: (o: T) => void, statusOnly = true): T {
    const cur = this.peek<StoredObject>(ref, name);
    const next = structuredClone(cur);
    fn(next as unknown as T);
    return this.write(ref, cur, next, statusOnly) as unknown as T;
  }

  /** See ObjectTracker: hold/resume watch delivery, end every watch, compact history. */
  holdWatches(): void {
    this.tracker.holdWatches();
  }
  resumeWatches(): void {
    this.tracker.resumeWatches();
  }

  // ------------------------------------------------------------------ KubeClient

  get: KubeClient['get'] = (...a) => this.call('get', a);
  list: KubeClient['list'] = (...a) => this.call('list', a);
  create: KubeClient['create'] = (...a) => this.call('create', a);
  replace: KubeClient['replace'] = (...a) => this.call('replace', a);
  replaceStatus: KubeClient['replaceStatus'] = (...a) => this.call('replaceStatus', a);
  mergePatch: KubeClient['mergePatch'] = (...a) => this.call('mergePatch', a);
  jsonPatch: KubeClient['jsonPatch'] = (...a) => this.call('jsonPatch', a);
  apply: KubeClient['apply'] = (...a) => this.call('apply', a);
  delete: KubeClient['delete'] = (...a) => this.call('delete', a);
  watch: KubeClient['watch'] = (...a) => this.call('watch', a);

  private async call<T>(verb: KubeVerb, args: unknown[]): Promise<T> {
    const [ref] = args as [ResourceRef];
    this.log.push({ method: verb, args });
    const statusPatch = (verb === 'mergePatch' || verb === 'jsonPatch') && !!(args[4] as { status?: boolean })?.status;
    this.calls[statusPatch ? `${verb}Status` : verb] = (this.calls[statusPatch ? `${verb}Status` : verb] ?? 0) + 1;
    const i = this.failures.findIndex(
      (f) => (f.op === verb || (f.op === 'patchStatus' && statusPatch)) && (!f.plural || f.plural === ref.plural),
    );
    if (i >= 0) throw this.failures.splice(i, 1)[0]!.err;
    const intercepted = this.interceptors[verb] as ((c: KubeClient, ...a: unknown[]) => Promise<T>) | undefined;
    const run = (): Promise<T> =>
      intercepted ? intercepted(this.direct, ...args) : (this.direct[verb] as (...a: unknown[]) => Promise<T>)(...args);
    if (!this.faults) return run();
    let result: T | undefined;
    await this.faults.intercept(httpCallOf(verb, args), async () => {
      result = await run();
      return '';
    });
    return result as T;
  }

  private async doGet<T>(ref: ResourceRef, ns: string | undefined, name: string): Promise<T> {
    const o = this.tracker.get(ref.plural, ns, name);
    if (!o) throw notFound(ref, name);
    return o as unknown as T;
  }

  private readonly pagedLists = new Map<string, { rv: string; rest: StoredObject[] }>();

  private async doList<T>(ref: ResourceRef, ns: string | undefined, opts: ListOptions = {}): Promise<KubeList<T>> {
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

  private async doCreate<T>(ref: ResourceRef, ns: string | undefined, body: T, opts: WriteOptions = {}): Promise<T> {
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

  /** PUT on the object or on /status. */
  private async doPut<T>(statusOnly: boolean, ref: ResourceRef, ns: string | undefined, name: string, body: T) {
    const op = statusOnly ? 'replaceStatus' : 'replace';
    return this.write(ref, this.current(ref, ns, name), structuredClone(body), statusOnly, op) as unknown as T;
  }

  private async doMergePatch<T>(
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
  private async doJsonPatch<T>(
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

  private async doApply<T>(ref: ResourceRef, ..._rest: unknown[]): Promise<T> {
    throw new KubeError(
      415,
      'UnsupportedMediaType',
      `FakeKube: server-side apply on ${ref.plural} needs an interceptor`,
    );
  }

  private async doDelete(
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
  private async doWatch<T>(
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

  // ------------------------------------------------------------------ the API server's write rules

  private current(ref: ResourceRef, ns: string | undefined, name: string): StoredObject {
    const cur = this.tracker.get(ref.plural, ns, name);
    if (!cur) throw notFound(ref, name);
    return cur;
  }

  /** A write through the main resource or the status subresource, as the API server applies it. */
  private write(ref: ResourceRef, cur: StoredObject, body: unknown, statusOnly: boolean, op?: string): StoredObject {
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

/**
 * A FakeKube for tests of one client-side mechanism (informer, pager, event
 * recorder): every verb does what the script says, and an unscripted verb
 * rejects with 501 so an unexpected call fails loudly. kube.script() changes
 * the script later.
 */
export function scriptedKube(script: Script = {}): FakeKube {
  const kube = new FakeKube();
  const unscripted: Script = {};
  for (const verb of Object.keys(METHODS) as KubeVerb[]) {
    unscripted[verb] = () => {
      throw new KubeError(501, 'NotImplemented', `unscripted ${verb}`);
    };
  }
  kube.script({ ...unscripted, ...script });
  return kube;
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

/** The HTTP request a real client would send for this call, for KubeFaultInjector's matchers. */
function httpCallOf(verb: KubeVerb, args: unknown[]): HttpCall {
  const [ref, ns, third] = args as [ResourceRef, string | undefined, unknown];
  const named = !['list', 'watch', 'create'].includes(verb);
  const status = verb === 'replaceStatus' || !!(args[4] as { status?: boolean } | undefined)?.status;
  const name = named ? String(third) : undefined;
  let path = resourcePath(ref, ns, name, status ? 'status' : undefined, true);
  if (verb === 'watch') path += query({ watch: true });
  if (verb === 'list') path += query({ limit: (third as ListOptions | undefined)?.limit });
  return { method: METHODS[verb], path, what: `${METHODS[verb]} ${ref.plural} ${ns ?? ''}/${name ?? ''}` };
}
