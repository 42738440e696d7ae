// URL paths and query strings for the Kubernetes REST API.
import { KubeError } from './client.ts';
import type { ResourceRef } from './client.ts';

/**
 * /api/v1/... for the core group, /apis/<group>/<version>/... otherwise.
 * A namespaced resource without a namespace addresses all namespaces, which
 * only list and watch allow (callers pass allowAllNamespaces).
 */
export function resourcePath(
  ref: ResourceRef,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
  allowAllNamespaces = false,
): string {
  let path = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  if (ref.namespaced) {
    if (namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
    else if (!allowAllNamespaces) {
      throw new KubeError(400, 'BadRequest', `a namespace is required for ${ref.plural}`);
    }
  }
  path += `/${ref.plural}`;
  if (name !== undefined) {
    if (name === '') throw new KubeError(400, 'BadRequest', `a name is required for ${ref.plural}`);
    path += `/${encodeURIComponent(name)}`;
  }
  if (subresource) path += `/${subresource}`;
  return path;
}

/** Query string from the defined, non-empty values (booleans as "true"). */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '' || v === false) continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
