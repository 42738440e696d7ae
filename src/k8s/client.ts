// CONTRACT (implemented by the runtime helper; other modules code against it).
// A small typed client for the Kubernetes API, over a kubeconfig for auth and
// TLS (src/k8s/kubeconfig.ts). Every call has a timeout.
//
// Errors: every non-2xx answer throws KubeError with .code (HTTP status),
// .reason (Status.reason, e.g. 'AlreadyExists', 'Conflict', 'NotFound',
// 'Invalid', 'Forbidden') and .message (Status.message). Network errors and
// timeouts throw KubeError with code 0.

export interface ResourceRef {
  group: string; // '' for core
  version: string;
  plural: string;
  namespaced: boolean;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  limit?: number;
  continue?: string;
}

export interface WriteOptions {
  fieldManager?: string;
  dryRun?: boolean;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
}

export type JsonPatchOp =
  { op: 'add' | 'replace' | 'test'; path: string; value: unknown } | { op: 'remove'; path: string };

export class KubeError extends Error {
  constructor(
    public readonly code: number,
    public readonly reason: string,
    message: string,
    public readonly body?: unknown,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof KubeError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof KubeError && e.code === 409;
/** No answer or a timeout (code 0), 429, or a 5xx (etcd out of space is one): the same request may succeed later. */
export const isTransient = (e: unknown): boolean =>
  e instanceof KubeError && (e.code === 0 || e.code === 429 || e.code >= 500);
export const isAlreadyExists = (e: unknown): boolean =>
  e instanceof KubeError && e.code === 409 && e.reason === 'AlreadyExists';

export interface KubeClient {
  get<T>(ref: ResourceRef, namespace: string | undefined, name: string): Promise<T>;
  list<T>(ref: ResourceRef, namespace: string | undefined, opts?: ListOptions): Promise<KubeList<T>>;
  /**
   * list, with `keep` applied to each item as it is read (undefined drops it),
   * so a caller that keeps less than the whole object never holds a whole
   * page of full objects (src/k8s/list-items.ts). Optional: without it,
   * listAllPages maps the items of list. A wrapper that changes what list
   * does (a test denying a resource) must change listKept alike.
   */
  listKept?<T, U>(
    ref: ResourceRef,
    namespace: string | undefined,
    opts: ListOptions,
    keep: (item: T) => U | undefined,
  ): Promise<KubeList<U>>;
  create<T>(ref: ResourceRef, namespace: string | undefined, body: T, opts?: WriteOptions): Promise<T>;
  /** PUT; body.metadata.resourceVersion makes it a compare-and-swap. */
  replace<T>(ref: ResourceRef, namespace: string | undefined, name: string, body: T, opts?: WriteOptions): Promise<T>;
  /** PUT on /status. */
  replaceStatus<T>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    body: T,
    opts?: WriteOptions,
  ): Promise<T>;
  mergePatch<T>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    opts?: WriteOptions & { status?: boolean },
  ): Promise<T>;
  jsonPatch<T>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    ops: JsonPatchOp[],
    opts?: WriteOptions & { status?: boolean },
  ): Promise<T>;
  /** Server-side apply (application/apply-patch+yaml); fieldManager required. */
  apply<T>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions & { force?: boolean; status?: boolean },
  ): Promise<T>;
  delete(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    opts?: {
      preconditionUid?: string;
      preconditionResourceVersion?: string;
      propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
    },
  ): Promise<void>;
  /**
   * Streams watch events until the server ends the watch, the signal aborts,
   * or an error occurs. Resolves when the stream ends; rejects on error.
   */
  watch<T>(
    ref: ResourceRef,
    namespace: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void>;
}
