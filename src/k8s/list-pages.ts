// Paged LIST: fetches every page of a collection as one consistent snapshot.
import type { KubeClient, KubeList, ListOptions, ResourceRef } from './client.ts';
import { KubeError } from './client.ts';
import { keepAll } from './list-items.ts';

export const DEFAULT_PAGE_SIZE = 500;
/** Snapshots compacted away mid-way before listAllPages gives up (the caller's backoff retries later). */
export const MAX_PAGED_SNAPSHOTS = 3;

/**
 * Lists a whole collection in pages of pageSize. All pages share the first
 * page's snapshot (the continue token pins it), and the returned
 * metadata.resourceVersion is that snapshot's, ready to start a watch from.
 *
 * If the snapshot is compacted away mid-way (410 on a continue token), the
 * pages read so far are dropped and paging starts again from a fresh
 * snapshot, up to MAX_PAGED_SNAPSHOTS times, then the 410 is thrown. Unlike
 * client-go's pager (FullListIfExpired), it never falls back to one unpaged
 * list: with 100,000 objects that single answer is what paging exists to
 * avoid (API server memory, our heap, a request timeout that makes it fail
 * again).
 *
 * `keep` maps each item as its page arrives (undefined drops it): a caller
 * that keeps less than the whole object never holds every full object at once.
 *
 * `pageGapMs` waits that long before each page after the first: background
 * work (a periodic sweep) then takes the API server and this process a
 * little at a time instead of in one burst beside the requests users wait for.
 */
export async function listAllPages<T, U = T>(
  kube: KubeClient,
  ref: ResourceRef,
  namespace: string | undefined,
  opts: Omit<ListOptions, 'limit' | 'continue'> = {},
  pageSize = DEFAULT_PAGE_SIZE,
  keep: (item: T) => U | undefined = (item) => item as unknown as U,
  pageGapMs = 0,
): Promise<KubeList<U>> {
  for (let snapshot = 1; ; snapshot++) {
    try {
      return await listOneSnapshot<T, U>(kube, ref, namespace, opts, pageSize, keep, pageGapMs);
    } catch (err) {
      if (!(err instanceof ContinueExpired) || snapshot >= MAX_PAGED_SNAPSHOTS) {
        throw err instanceof ContinueExpired ? err.cause : err;
      }
    }
  }
}

class ContinueExpired extends Error {
  constructor(override readonly cause: KubeError) {
    super(cause.message);
  }
}

async function listOneSnapshot<T, U>(
  kube: KubeClient,
  ref: ResourceRef,
  namespace: string | undefined,
  opts: Omit<ListOptions, 'limit' | 'continue'>,
  pageSize: number,
  keep: (item: T) => U | undefined,
  pageGapMs: number,
): Promise<KubeList<U>> {
  const items: U[] = [];
  // The first page's envelope only: its items are full objects, not kept.
  let first: Omit<KubeList<T>, 'items'> | undefined;
  let cont: string | undefined;
  // Each page is reduced as it arrives, so the API server's full objects
  // (managedFields and all) are never all in memory at once.
  const readPage = (o: ListOptions): Promise<KubeList<U>> => listPageKept(kube, ref, namespace, o, keep);
  do {
    let page: KubeList<U>;
    if (cont && pageGapMs > 0) await new Promise((resolve) => setTimeout(resolve, pageGapMs));
    try {
      page = await readPage({ ...opts, limit: pageSize, continue: cont });
    } catch (err) {
      if (cont && err instanceof KubeError && err.code === 410) throw new ContinueExpired(err);
      throw err;
    }
    if (!first) {
      const { items: _items, ...envelope } = page;
      first = envelope;
    }
    for (const item of page.items) items.push(item);
    cont = page.metadata.continue || undefined;
  } while (cont);
  return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items } as KubeList<U>;
}

/**
 * One page of a LIST with `keep` applied to each item (undefined drops it).
 * A client that can (KubeClient.listKept) reduces each item as it reads it,
 * so not even one page of full objects is in memory at once.
 */
export function listPageKept<T, U>(
  kube: KubeClient,
  ref: ResourceRef,
  namespace: string | undefined,
  opts: ListOptions,
  keep: (item: T) => U | undefined,
): Promise<KubeList<U>> {
  return kube.listKept
    ? kube.listKept<T, U>(ref, namespace, opts, keep)
    : kube.list<T>(ref, namespace, opts).then((page) => ({ ...page, items: keepAll(page.items, keep) }));
}
