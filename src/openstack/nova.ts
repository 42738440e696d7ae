// NovaClient (src/openstack/types.ts) over HTTP: the Nova calls Masakari's
// engine makes (masakari/compute/nova.py), at microversion 2.53 or later.
// Timeouts and retries live in http.ts; this module builds requests and
// follows pages. Which POST actions may be sent twice (ACTION_RETRY) and how
// errors are translated, the way masakari/compute/nova.py does, is
// nova-protocol.ts.

import type { EndpointFilter, EndpointInterface } from './catalog.ts';
import { normalizeInterface, parseCatalogInfo } from './catalog.ts';
import type { HttpMethod, HttpResponse, RetryPolicy } from './http.ts';
import type { OpenStackSession } from './session.ts';
import type {
  CallOptions,
  GlanceImage,
  NovaAggregate,
  NovaClient,
  NovaMigration,
  NovaServer,
  NovaService,
} from './types.ts';
import { NovaError } from './types.ts';
import {
  MIN_NOVA_MICROVERSION,
  MIGRATIONS_PAGING_MICROVERSION,
  EVACUATE_MAX_MICROVERSION,
  parseMicroversion,
  compareMicroversions,
  novaFaultMessage,
  novaErrorFor,
  setName,
  glanceFaultMessage,
  translateFailure,
  retryPolicyOf,
  enc,
  query,
  array,
  field,
  nextPage,
} from './nova-protocol.ts';

export { ACTION_RETRY, MIN_NOVA_MICROVERSION } from './nova-protocol.ts';

/** Hard stop for page-following, far above any real host (1000 pages of max_limit). */
const MAX_PAGES = 1000;

export interface NovaClientOptions {
  /** `nova_catalog_admin_info`, e.g. 'compute:nova:publicURL'. */
  catalogInfo?: string;
  /** Overrides the interface part of catalogInfo. */
  interface?: string | null;
  region?: string | null;
  /** Default '2.53'; must be >= 2.53. */
  microversion?: string;
  /** Skip the catalog and use this compute URL (e.g. http://nova:8774/v2.1). */
  endpointOverride?: string;
}

interface NovaRequest {
  method: HttpMethod;
  path: string;
  pathTemplate: string;
  action?: string;
  json?: unknown;
  microversion?: string;
  /** For POST: ACTION_RETRY of the action. GET and PUT keep the transport's default ('idempotent'). */
  retry?: RetryPolicy;
}

export class HttpNovaClient implements NovaClient {
  readonly microversion: string;
  private readonly filter: EndpointFilter;

  constructor(
    readonly session: OpenStackSession,
    private readonly opts: NovaClientOptions = {},
  ) {
    this.microversion = opts.microversion ?? MIN_NOVA_MICROVERSION;
    parseMicroversion(this.microversion);
    if (compareMicroversions(this.microversion, MIN_NOVA_MICROVERSION) < 0) {
      throw new Error(`Nova microversion ${this.microversion} is below the minimum ${MIN_NOVA_MICROVERSION}`);
    }
    const info = parseCatalogInfo(opts.catalogInfo ?? 'compute:nova:publicURL');
    const iface: EndpointInterface = opts.interface ? normalizeInterface(opts.interface) : info.interface;
    this.filter = { ...info, interface: iface, region: opts.region ?? null };
  }

  async listServices(q: { host?: string; binary?: string }, o?: CallOptions): Promise<NovaService[]> {
    const res = await this.call({ method: 'GET', path: `/os-services${query(q)}`, pathTemplate: '/os-services' }, o);
    return array<NovaService>(res, 'services');
  }

  async updateService(
    id: string,
    body: { status?: 'enabled' | 'disabled'; disabled_reason?: string; forced_down?: boolean },
    o?: CallOptions,
  ): Promise<NovaService> {
    const res = await this.call(
      { method: 'PUT', path: `/os-services/${enc(id)}`, pathTemplate: '/os-services/{id}', json: body },
      o,
    );
    return field<NovaService>(res, 'service');
  }

  /**
   * Every server on the host, across all projects. Unlike novaclient (which
   * stops after the first page, capping the result at Nova's max_limit), this
   * follows `servers_links` until there is no next page.
   */
  async listServersOnHost(host: string, o?: CallOptions): Promise<NovaServer[]> {
    const servers = await this.collect<NovaServer>(
      { all_tenants: 'True', host },
      '/servers/detail',
      'servers',
      'servers_links',
      (s) => s.id,
      this.microversion,
      o,
    );
    // Nova ignores the host filter for callers without the right policy and
    // would list the whole project; never hand back a server it places elsewhere.
    return servers.filter((s) => {
      const at = s['OS-EXT-SRV-ATTR:host'];
      return at === undefined || at === host;
    });
  }

  async getServer(id: string, o?: CallOptions): Promise<NovaServer> {
    const res = await this.call({ method: 'GET', path: `/servers/${enc(id)}`, pathTemplate: '/servers/{id}' }, o);
    return field<NovaServer>(res, 'server');
  }

  resetState(id: string, state: 'error' | 'active', o?: CallOptions): Promise<void> {
    return this.action(id, 'os-resetState', { state }, o);
  }

  evacuate(id: string, targetHost: string | undefined, o?: CallOptions): Promise<void> {
    // Only `host`: no force, onSharedStorage or adminPass, exactly as Masakari sends it.
    const microversion =
      compareMicroversions(this.microversion, EVACUATE_MAX_MICROVERSION) > 0
        ? EVACUATE_MAX_MICROVERSION
        : this.microversion;
    return this.action(id, 'evacuate', targetHost ? { host: targetHost } : {}, o, microversion);
  }

  stopServer(id: string, o?: CallOptions): Promise<void> {
    return this.action(id, 'os-stop', null, o);
  }

  startServer(id: string, o?: CallOptions): Promise<void> {
    return this.action(id, 'os-start', null, o);
  }

  lockServer(id: string, o?: CallOptions): Promise<void> {
    return this.action(id, 'lock', null, o);
  }

  unlockServer(id: string, o?: CallOptions): Promise<void> {
    return this.action(id, 'unlock', null, o);
  }

  async listAggregates(o?: CallOptions): Promise<NovaAggregate[]> {
    const res = await this.call({ method: 'GET', path: '/os-aggregates', pathTemplate: '/os-aggregates' }, o);
    return array<NovaAggregate>(res, 'aggregates');
  }

  /**
   * One Glance image (GET /v2/images/{id}), for its properties. Nova's own
   * image proxy is gone above microversion 2.35, so this asks the catalog's
   * `image` service on the interface and region of the compute endpoint,
   * through the same session: same token, timeout and retries as a Nova GET.
   */
  async getImage(id: string, o: CallOptions = {}): Promise<GlanceImage> {
    let res: HttpResponse;
    try {
      const baseUrl = await this.session.endpoint({ ...this.filter, serviceType: 'image', serviceName: null }, o);
      res = await this.session.request(
        {
          service: 'image',
          method: 'GET',
          baseUrl: baseUrl.replace(/\/+$/, ''),
          path: `/v2/images/${enc(id)}`,
          pathTemplate: '/v2/images/{id}',
          headers: {},
        },
        o,
      );
    } catch (err) {
      throw translateFailure(err, o);
    }
    if (res.status >= 400) throw setName(novaErrorFor(res.status, glanceFaultMessage(res)));
    const body = res.body as GlanceImage | undefined;
    if (!body || typeof body !== 'object' || typeof body.id !== 'string') {
      throw setName(new NovaError(res.status, 'Glance response is no image'));
    }
    return body;
  }

  async addHostToAggregate(aggregateId: number, host: string, o?: CallOptions): Promise<void> {
    await this.call(
      {
        method: 'POST',
        path: `/os-aggregates/${enc(String(aggregateId))}/action`,
        pathTemplate: '/os-aggregates/{id}/action',
        action: 'add_host',
        json: { add_host: { host } },
        retry: retryPolicyOf('add_host'),
      },
      o,
    );
  }

  /**
   * GET /os-migrations at max(configured, 2.59): 2.59 adds the migration uuid
   * and limit/marker paging, so a busy cloud cannot truncate the answer. A Nova
   * older than 2.59 answers 406; then the configured version is used, unpaged.
   */
  async listMigrations(
    q: { instanceUuid?: string; migrationType?: string; sourceCompute?: string },
    o?: CallOptions,
  ): Promise<NovaMigration[]> {
    const filters = {
      instance_uuid: q.instanceUuid,
      migration_type: q.migrationType,
      source_compute: q.sourceCompute,
    };
    const paged =
      compareMicroversions(this.microversion, MIGRATIONS_PAGING_MICROVERSION) >= 0
        ? this.microversion
        : MIGRATIONS_PAGING_MICROVERSION;
    try {
      return await this.collect<NovaMigration>(
        filters,
        '/os-migrations',
        'migrations',
        'migrations_links',
        (m) => m.uuid ?? String(m.id),
        paged,
        o,
      );
    } catch (err) {
      if (!(err instanceof NovaError) || err.status !== 406 || paged === this.microversion) throw err;
      const res = await this.call(
        { method: 'GET', path: `/os-migrations${query(filters)}`, pathTemplate: '/os-migrations' },
        o,
      );
      return array<NovaMigration>(res, 'migrations');
    }
  }

  private async action(
    id: string,
    name: string,
    value: unknown,
    o?: CallOptions,
    microversion?: string,
  ): Promise<void> {
    await this.call(
      {
        method: 'POST',
        path: `/servers/${enc(id)}/action`,
        pathTemplate: '/servers/{id}/action',
        action: name,
        json: { [name]: value },
        retry: retryPolicyOf(name),
        ...(microversion ? { microversion } : {}),
      },
      o,
    );
  }

  /** Follows `<linksKey>` rel=next pages by marker; stops on a repeated marker or after MAX_PAGES. */
  private async collect<T>(
    filters: Record<string, string | undefined>,
    path: string,
    key: string,
    linksKey: string,
    idOf: (item: T) => string,
    microversion: string,
    o?: CallOptions,
  ): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let page: Record<string, string | undefined> = { ...filters };
    for (let n = 0; n < MAX_PAGES; n++) {
      const res = await this.call(
        { method: 'GET', path: `${path}${query(page)}`, pathTemplate: path, microversion },
        o,
      );
      for (const item of array<T>(res, key)) {
        const id = idOf(item);
        if (seen.has(id)) continue;
        seen.add(id);
        items.push(item);
      }
      const next = nextPage(res, linksKey);
      if (!next || next.marker === page.marker) return items;
      // Only limit and marker are taken from the link: its host part may be
      // Nova's idea of its public URL, not the endpoint we were told to use.
      page = { ...filters, ...next };
    }
    throw new NovaError(0, `${path}: more than ${MAX_PAGES} pages, giving up`);
  }

  private async call(req: NovaRequest, o: CallOptions = {}): Promise<HttpResponse> {
    const microversion = req.microversion ?? this.microversion;
    let res: HttpResponse;
    try {
      const baseUrl = this.opts.endpointOverride?.replace(/\/+$/, '') ?? (await this.session.endpoint(this.filter, o));
      res = await this.session.request(
        {
          service: 'compute',
          method: req.method,
          baseUrl,
          path: req.path,
          pathTemplate: req.pathTemplate,
          ...(req.action !== undefined ? { action: req.action } : {}),
          ...(req.json !== undefined ? { json: req.json } : {}),
          ...(req.retry !== undefined ? { retry: req.retry } : {}),
          headers: {
            'x-openstack-nova-api-version': microversion,
            'openstack-api-version': `compute ${microversion}`,
          },
        },
        o,
      );
    } catch (err) {
      throw translateFailure(err, o);
    }
    if (res.status >= 400) throw setName(novaErrorFor(res.status, novaFaultMessage(res)));
    return res;
  }
}
