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
// The rules themselves are kube/server.ts; this file is the harness around
// them. Faults: `interceptors` per verb (interceptor.Funcs: each gets the
// un-intercepted client and the call's arguments), failNext for one scripted
// error, and useFaults(KubeFaultInjector) to replay the transport-level faults
// of src/k8s/fault-injection.ts (503, refused, timeout, lost response, delay).
import { randomUUID } from 'node:crypto';
import { KubeError, type KubeClient, type ListOptions, type ResourceRef } from '../k8s/client.ts';
import type { KubeFaultInjector } from '../k8s/fault-injection.ts';
import { resourcePath, query } from '../k8s/paths.ts';
import type { HttpCall, HttpMethod } from '../k8s/transport.ts';
import { FakeApiServer, toSeconds } from './kube/server.ts';
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
  private readonly server: FakeApiServer;

  constructor(o: FakeKubeOptions = {}) {
    this.tracker = new ObjectTracker(o.firstResourceVersion);
    this.interceptors = { ...o.interceptors };
    this.creationTime = o.creationTime ?? (() => new Date());
    this.server = new FakeApiServer(this.tracker, this.creationTime, this);
    this.direct = this.server;
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
    return this.server.write(ref, cur, next, statusOnly) as unknown as T;
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
