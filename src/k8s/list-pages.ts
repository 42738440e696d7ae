// Paged LIST: fetches every page of a collection as one consistent snapshot.
import type { KubeClient, KubeList, ListOptions, ResourceRef } from './client.ts';
import { KubeError } from './client.ts';

export const DEFAULT_PAGE_SIZE = 500;

/**
 * Lists a whole collection in pages of pageSize. All pages share the first
 * page's snapshot (the continue token pins it), and the returned
 * metadata.resourceVersion is that snapshot's, ready to start a watch from.
 * If the snapshot is compacted away mid-way (410 on a continue token), falls
 * back to one unpaged list, as client-go's pager does.
 */
export async function listAllPages<T>(
  kube: KubeClient,
  ref: ResourceRef,
  namespace: string | undefined,
  opts: Omit<ListOptions, 'limit' | 'continue'> = {},
  pageSize = DEFAULT_PAGE_SIZE,
): Promise<KubeList<T>> {
  const items: T[] = [];
  let first: KubeList<T> | undefined;
  let cont: string | undefined;
  do {
    let page: KubeList<T>;
    try {
      page = await kube.list<T>(ref, namespace, { ...opts, limit: pageSize, continue: cont });
    } catch (err) {
      if (cont && err instanceof KubeError && err.code === 410) return kube.list<T>(ref, namespace, opts);
      throw err;
    }
    first ??= page;
    items.push(...page.items);
    cont = page.metadata.continue || undefined;
  } while (cont);
  return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
}
