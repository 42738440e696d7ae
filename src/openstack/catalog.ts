// Endpoint selection from a Keystone v3 service catalog, as keystoneauth does
// it for Masakari's `nova_catalog_admin_info = <type>:<name>:<interface>`.

export interface CatalogEndpoint {
  id?: string;
  interface: string;
  region_id?: string | null;
  region?: string | null;
  url: string;
}

export interface CatalogEntry {
  id?: string;
  type: string;
  name?: string;
  endpoints: CatalogEndpoint[];
}

export type EndpointInterface = 'public' | 'internal' | 'admin';

export interface EndpointFilter {
  serviceType: string;
  /** Empty or undefined matches any name. */
  serviceName?: string | null;
  interface: EndpointInterface;
  /** Empty or undefined matches any region (the first match wins). */
  region?: string | null;
}

export class EndpointNotFound extends Error {
  constructor(filter: EndpointFilter) {
    const parts = [
      `type=${filter.serviceType}`,
      filter.serviceName ? `name=${filter.serviceName}` : undefined,
      `interface=${filter.interface}`,
      filter.region ? `region=${filter.region}` : undefined,
    ].filter(Boolean);
    super(`No endpoint in the service catalog matches ${parts.join(', ')}`);
    this.name = 'EndpointNotFound';
  }
}

/** Accepts keystone v3 names and the v2-era `publicURL`/`internalURL`/`adminURL`. */
export function normalizeInterface(value: string): EndpointInterface {
  const v = value.trim().toLowerCase().replace(/url$/, '');
  if (v === 'public' || v === 'internal' || v === 'admin') return v;
  throw new Error(`Invalid endpoint interface '${value}': expected public, internal or admin (or publicURL etc.)`);
}

/**
 * Parses `nova_catalog_admin_info`: `<service_type>:<service_name>:<interface>`,
 * e.g. `compute:nova:publicURL`; an empty name (`compute::internalURL`) matches any.
 */
export function parseCatalogInfo(info: string): Omit<EndpointFilter, 'region'> {
  const parts = info.split(':');
  if (parts.length !== 3 || !parts[0]) {
    throw new Error(`Invalid catalog info '${info}': expected <service_type>:<service_name>:<endpoint_type>`);
  }
  const [serviceType, serviceName, iface] = parts as [string, string, string];
  return { serviceType, serviceName: serviceName || null, interface: normalizeInterface(iface) };
}

/** Returns the URL (without a trailing slash) of the first endpoint matching the filter. */
export function selectEndpoint(catalog: readonly CatalogEntry[], filter: EndpointFilter): string {
  for (const entry of catalog) {
    if (entry.type !== filter.serviceType) continue;
    if (filter.serviceName && entry.name !== filter.serviceName) continue;
    for (const ep of entry.endpoints ?? []) {
      if (ep.interface !== filter.interface) continue;
      if (filter.region && (ep.region_id ?? ep.region) !== filter.region) continue;
      return ep.url.replace(/\/+$/, '');
    }
  }
  throw new EndpointNotFound(filter);
}
