// The KubeClient contract (src/k8s/client.ts) over KubeTransport: CRUD,
// merge/JSON patch, server-side apply, status subresource, delete with
// preconditions, paged list and streaming watch.
import type { KubeConnectionConfig } from './kubeconfig.ts';
import { KubeError } from './client.ts';
import type {
  JsonPatchOp,
  KubeClient,
  KubeList,
  ListOptions,
  ResourceRef,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from './client.ts';
import { KubeTransport } from './transport.ts';
import type { TransportOptions } from './transport.ts';
import { query, resourcePath } from './paths.ts';
import { WatchLineDecoder } from './watch-decoder.ts';
import { parseListKept } from './list-items.ts';

export interface ClosableKubeClient extends KubeClient {
  /** Closes pooled connections; open watches end. */
  close(): Promise<void>;
}

const MERGE_PATCH = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

const label = (ref: ResourceRef, namespace: string | undefined, name?: string): string =>
  `${ref.plural} ${[namespace, name].filter(Boolean).join('/')}`.trim();

const writeQuery = (opts: WriteOptions | undefined, extra: Record<string, string | boolean | undefined> = {}) =>
  query({ fieldManager: opts?.fieldManager, dryRun: opts?.dryRun ? 'All' : undefined, ...extra });

const listCall = (ref: ResourceRef, namespace: string | undefined, o: ListOptions) => ({
  method: 'GET' as const,
  path:
    resourcePath(ref, namespace, undefined, undefined, true) +
    query({
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      resourceVersion: o.resourceVersion,
      limit: o.limit,
      continue: o.continue,
    }),
  what: `LIST ${label(ref, namespace)}`,
});

export function createKubeClient(kc: KubeConnectionConfig, opts: TransportOptions = {}): ClosableKubeClient {
  const http = new KubeTransport(kc, opts);

  const patch = async <T>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    body: unknown,
    contentType: string,
    qs: string,
    status: boolean | undefined,
  ): Promise<T> =>
    http.json<T>({
      method: 'PATCH',
      path: resourcePath(ref, namespace, name, status ? 'status' : undefined) + qs,
      body,
      contentType,
      what: `PATCH ${label(ref, namespace, name)}${status ? '/status' : ''}`,
    });

  return {
    get: async (ref, namespace, name) =>
      http.json({
        method: 'GET',
        path: resourcePath(ref, namespace, name),
        what: `GET ${label(ref, namespace, name)}`,
      }),

    list: async <T>(ref: ResourceRef, namespace: string | undefined, o: ListOptions = {}) =>
      http.json<KubeList<T>>(listCall(ref, namespace, o)),

    listKept: async <T, U>(
      ref: ResourceRef,
      namespace: string | undefined,
      o: ListOptions,
      keep: (item: T) => U | undefined,
    ) => http.parsed(listCall(ref, namespace, o), (text) => parseListKept(text, keep)),

    create: async (ref, namespace, body, o) =>
      http.json({
        method: 'POST',
        path: resourcePath(ref, namespace) + writeQuery(o),
        body,
        what: `CREATE ${label(ref, namespace)}`,
      }),

    replace: async (ref, namespace, name, body, o) =>
      http.json({
        method: 'PUT',
        path: resourcePath(ref, namespace, name) + writeQuery(o),
        body,
        what: `UPDATE ${label(ref, namespace, name)}`,
      }),

    replaceStatus: async (ref, namespace, name, body, o) =>
      http.json({
        method: 'PUT',
        path: resourcePath(ref, namespace, name, 'status') + writeQuery(o),
        body,
        what: `UPDATE ${label(ref, namespace, name)}/status`,
      }),

    mergePatch: async (ref, namespace, name, body, o) =>
      patch(ref, namespace, name, body, MERGE_PATCH, writeQuery(o), o?.status),

    jsonPatch: async (ref, namespace, name, ops: JsonPatchOp[], o) =>
      patch(ref, namespace, name, ops, JSON_PATCH, writeQuery(o), o?.status),

    apply: async (ref, namespace, name, body, o) => {
      // JSON is valid YAML, so the body goes out as JSON under the apply type.
      if (!o.fieldManager) throw new KubeError(400, 'BadRequest', 'server-side apply needs a fieldManager');
      return patch(ref, namespace, name, body, APPLY_PATCH, writeQuery(o, { force: o.force }), o.status);
    },

    delete: async (ref, namespace, name, o = {}) => {
      const preconditions =
        o.preconditionUid || o.preconditionResourceVersion
          ? { uid: o.preconditionUid, resourceVersion: o.preconditionResourceVersion }
          : undefined;
      await http.json({
        method: 'DELETE',
        path: resourcePath(ref, namespace, name),
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions, propagationPolicy: o.propagationPolicy },
        what: `DELETE ${label(ref, namespace, name)}`,
      });
    },

    watch: async <T>(
      ref: ResourceRef,
      namespace: string | undefined,
      o: WatchOptions,
      onEvent: (e: WatchEvent<T>) => void,
      signal: AbortSignal,
    ) => {
      const what = `WATCH ${label(ref, namespace)}`;
      const decoder = new WatchLineDecoder<T>(what, onEvent);
      // The stream's own abort also ends it when onEvent throws or an ERROR event arrives.
      const local = new AbortController();
      const combined = AbortSignal.any([signal, local.signal]);
      await http.stream(
        {
          method: 'GET',
          path:
            resourcePath(ref, namespace, undefined, undefined, true) +
            query({
              watch: true,
              labelSelector: o.labelSelector,
              fieldSelector: o.fieldSelector,
              resourceVersion: o.resourceVersion,
              allowWatchBookmarks: o.allowWatchBookmarks,
              timeoutSeconds: o.timeoutSeconds,
              sendInitialEvents: o.sendInitialEvents,
              resourceVersionMatch: o.sendInitialEvents ? 'NotOlderThan' : undefined,
            }),
          what,
        },
        combined,
        (chunk) => {
          if (decoder.failed) return;
          decoder.push(chunk);
          if (decoder.failed) local.abort();
        },
      );
      if (decoder.failed) throw decoder.failed;
      if (signal.aborted) return;
      decoder.end();
      if (decoder.failed) throw decoder.failed;
    },

    close: () => http.close(),
  };
}
