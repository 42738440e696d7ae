// Nova compute API v2.1, the subset Masakari and the operator call (N1–N12 of
// the engine spec §5.3), with Nova's status codes, fault bodies
// ({"itemNotFound": {"code": 404, "message": "..."}}), messages and
// microversion negotiation (nova/api/openstack/wsgi.py, api_version_request.py).

import { createHash } from 'node:crypto';
import type { SimRequest, SimResponse } from './router.ts';
import { BAD_JSON, Router } from './router.ts';
import type { SimAggregate, SimMigration, SimServer, SimService, SimState, SimToken } from './state.ts';
import { POWER_STATE, powerStateFor, serverStatus } from './state.ts';

/** Nova 34.0.0's range (nova/api/openstack/api_version_request.py). */
export const NOVA_MIN_MICROVERSION = { major: 2, minor: 1 };
export const NOVA_MAX_MICROVERSION = { major: 2, minor: 104 };

const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export function novaFault(status: number, message: string): SimResponse {
  return { status, body: { [FAULT_NAMES[status] ?? 'computeFault']: { code: status, message } } };
}

interface Version {
  major: number;
  minor: number;
}
const atLeast = (v: Version, minor: number) => v.major > 2 || (v.major === 2 && v.minor >= minor);

interface NovaCtx {
  token: SimToken;
  admin: boolean;
  version: Version;
}

type NovaHandler = (req: SimRequest, params: Record<string, string>, ctx: NovaCtx) => SimResponse;

class Fault extends Error {
  constructor(readonly response: SimResponse) {
    super('nova fault');
  }
}
const fail = (status: number, message: string): never => {
  throw new Fault(novaFault(status, message));
};

function requireAdmin(ctx: NovaCtx, policy: string): void {
  if (!ctx.admin) fail(403, `Policy doesn't allow ${policy} to be performed.`);
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Version from `OpenStack-API-Version: compute X.Y` or the legacy header; 2.1 when absent. */
export function requestedVersion(req: SimRequest): Version | SimResponse {
  let raw: string | undefined;
  const modern = header(req.headers['openstack-api-version']);
  if (modern) {
    for (const part of modern.split(',')) {
      const [service, value] = part.trim().split(/\s+/);
      if (service?.toLowerCase() === 'compute' && value) raw = value;
    }
  }
  raw ??= header(req.headers['x-openstack-nova-api-version']);
  if (!raw) return NOVA_MIN_MICROVERSION;
  if (raw.toLowerCase() === 'latest') return NOVA_MAX_MICROVERSION;
  const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(raw);
  if (!m) {
    return novaFault(400, `API Version String ${raw} is of invalid format. Must be of format MajorNum.MinorNum.`);
  }
  const v = { major: Number(m[1]), minor: Number(m[2]) };
  const cmp = (a: Version, b: Version) => a.major - b.major || a.minor - b.minor;
  if (cmp(v, NOVA_MIN_MICROVERSION) < 0 || cmp(v, NOVA_MAX_MICROVERSION) > 0) {
    return novaFault(
      406,
      `Version ${v.major}.${v.minor} is not supported by the API. Minimum is ${NOVA_MIN_MICROVERSION.major}.${NOVA_MIN_MICROVERSION.minor} and maximum is ${NOVA_MAX_MICROVERSION.major}.${NOVA_MAX_MICROVERSION.minor}.`,
    );
  }
  return v;
}

function nonNegativeInt(value: string | null, name: string): number | undefined {
  if (value === null) return undefined;
  if (!/^\d+$/.test(value))
    fail(400, `Invalid input for query parameters ${name}. Value: ${value}. '${value}' does not match '^[0-9]*$'`);
  return Number(value);
}

/** limit/marker paging and the rel=next link, as nova/api/openstack/common.py does it. */
function page<T>(
  state: SimState,
  req: SimRequest,
  items: T[],
  idOf: (t: T) => string,
  collection: string,
  markerMissing: (marker: string) => string,
): { items: T[]; links?: unknown[] } {
  const requested = nonNegativeInt(req.query.get('limit'), 'limit');
  const limit = Math.min(requested ?? state.maxLimit, state.maxLimit);
  const marker = req.query.get('marker');
  let start = 0;
  if (marker !== null) {
    const i = items.findIndex((t) => idOf(t) === marker);
    if (i < 0) fail(400, markerMissing(marker));
    start = i + 1;
  }
  const slice = items.slice(start, start + limit);
  if (limit > 0 && slice.length === limit) {
    const params = new URLSearchParams([...req.query.entries()].filter(([k]) => k !== 'marker').sort());
    params.set('marker', idOf(slice[slice.length - 1] as T));
    return { items: slice, links: [{ rel: 'next', href: `${req.origin}/compute/v2.1/${collection}?${params}` }] };
  }
  return { items: slice };
}

function serviceView(state: SimState, s: SimService, v: Version): Record<string, unknown> {
  return {
    id: atLeast(v, 53) ? s.uuid : s.id,
    binary: s.binary,
    host: s.host,
    zone: s.zone,
    status: s.disabled ? 'disabled' : 'enabled',
    state: state.isUp(s) ? 'up' : 'down',
    updated_at: s.updatedAt,
    disabled_reason: s.disabledReason,
    forced_down: s.forcedDown,
  };
}

/** Statuses whose servers carry "progress" (nova/api/openstack/compute/views/servers.py _progress_statuses). */
const PROGRESS_STATUSES = new Set(['ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING']);

/** Nova's hostname for a server: its display name, lowercased, other characters as '-' (nova/utils.py sanitize_hostname). */
function sanitizedHostname(name: string): string {
  return name
    .toLowerCase()
    .replace(/[ _]/g, '-')
    .replace(/[^\w.-]+/g, '')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 63);
}

/** host_status (2.16+): nova/compute/api.py get_instance_host_status. */
function hostStatus(state: SimState, s: SimServer): string {
  if (!s.host) return '';
  const svc = state.serviceOf(s.host);
  if (!svc) return '';
  if (svc.forcedDown) return 'DOWN';
  if (svc.disabled) return 'MAINTENANCE';
  return state.isUp(svc) ? 'UP' : 'UNKNOWN';
}

function serverView(req: SimRequest, s: SimServer, ctx: NovaCtx, state: SimState): Record<string, unknown> {
  const link = `${req.origin}/compute/v2.1/servers/${s.id}`;
  const view: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status: serverStatus(s.vmState, s.taskState),
    tenant_id: s.projectId,
    user_id: s.userId,
    metadata: s.metadata,
    hostId: s.host
      ? createHash('sha224')
          .update(s.projectId + s.host)
          .digest('hex')
      : '',
    image: '',
    flavor: { vcpus: 1, ram: 512, disk: 1, ephemeral: 0, swap: 0, original_name: 'm1.tiny', extra_specs: {} },
    created: s.createdAt.replace(/\.\d+$/, 'Z'),
    updated: s.updatedAt.replace(/\.\d+$/, 'Z'),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: [
      { rel: 'self', href: link },
      { rel: 'bookmark', href: link.replace('/v2.1', '') },
    ],
    'OS-DCF:diskConfig': 'MANUAL',
    'OS-EXT-AZ:availability_zone': 'nova',
    config_drive: '',
    key_name: null,
    'OS-SRV-USG:launched_at': s.createdAt,
    'OS-SRV-USG:terminated_at': null,
    'OS-EXT-STS:task_state': s.taskState,
    'OS-EXT-STS:vm_state': s.vmState,
    'OS-EXT-STS:power_state': s.powerState,
    'os-extended-volumes:volumes_attached': [],
    description: null,
    tags: [],
  };
  if (ctx.admin) {
    // Admin-only attributes (os_compute_api:servers:show:host_status and extended attributes).
    view['OS-EXT-SRV-ATTR:host'] = s.host;
    view['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.node;
    view['OS-EXT-SRV-ATTR:instance_name'] = `instance-${s.id.slice(0, 8)}`;
    if (atLeast(ctx.version, 3)) {
      view['OS-EXT-SRV-ATTR:hostname'] = sanitizedHostname(s.name);
      view['OS-EXT-SRV-ATTR:kernel_id'] = '';
      view['OS-EXT-SRV-ATTR:launch_index'] = 0;
      view['OS-EXT-SRV-ATTR:ramdisk_id'] = '';
      view['OS-EXT-SRV-ATTR:reservation_id'] = `r-${s.id.replace(/-/g, '').slice(0, 8)}`;
      view['OS-EXT-SRV-ATTR:root_device_name'] = '/dev/sda';
      view['OS-EXT-SRV-ATTR:user_data'] = null;
    }
    if (atLeast(ctx.version, 16)) view.host_status = hostStatus(state, s);
  }
  if (PROGRESS_STATUSES.has(view.status as string)) view.progress = 0;
  if (atLeast(ctx.version, 9)) view.locked = s.locked;
  if (atLeast(ctx.version, 73)) view.locked_reason = null;
  return view;
}

function migrationView(m: SimMigration, v: Version): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: m.id,
    status: m.status,
    instance_uuid: m.instanceUuid,
    source_compute: m.sourceCompute,
    source_node: m.sourceNode,
    dest_compute: m.destCompute,
    dest_node: m.destNode,
    dest_host: null,
    old_instance_type_id: 1,
    new_instance_type_id: 1,
    source_region: 'RegionOne',
    dest_region: 'RegionOne',
    created_at: m.createdAt,
    updated_at: m.updatedAt,
  };
  if (atLeast(v, 23)) view.migration_type = m.migrationType;
  if (atLeast(v, 59)) view.uuid = m.uuid;
  return view;
}

function aggregateView(a: SimAggregate, v: Version): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: a.id,
    name: a.name,
    availability_zone: a.availabilityZone,
    hosts: a.hosts,
    metadata: a.metadata,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
    deleted_at: null,
    deleted: false,
  };
  if (atLeast(v, 41)) view.uuid = a.uuid;
  return view;
}

/** The server if the caller may see it; Nova answers 404 for other projects' servers. */
function visibleServer(state: SimState, id: string, ctx: NovaCtx): SimServer {
  const s = state.servers.get(id);
  if (!s || (!ctx.admin && s.projectId !== ctx.token.projectId)) fail(404, `Instance ${id} could not be found.`);
  return s as SimServer;
}

function invalidState(action: string, id: string, attr: string, value: string | null): never {
  return fail(409, `Cannot '${action}' instance ${id} while it is in ${attr} ${value}`);
}

function checkState(s: SimServer, action: string, vmStates: string[] | null): void {
  if (vmStates && !vmStates.includes(s.vmState)) invalidState(action, s.id, 'vm_state', s.vmState);
  if (s.taskState !== null) invalidState(action, s.id, 'task_state', s.taskState);
}

function checkLock(s: SimServer, ctx: NovaCtx): void {
  // nova/compute/api.py check_instance_lock: admins may act on locked servers.
  if (s.locked && !ctx.admin) fail(409, `Instance ${s.id} is locked`);
}

function objectBody(req: SimRequest): Record<string, unknown> {
  const b = req.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) fail(400, 'Malformed request body');
  return b as Record<string, unknown>;
}

function onlyKeys(field: string, value: Record<string, unknown>, allowed: string[]): void {
  const extra = Object.keys(value).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    fail(
      400,
      `Invalid input for field/attribute ${field}. Value: ${JSON.stringify(value)}. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  }
}

export function novaRouter(state: SimState): Router<NovaHandler> {
  const r = new Router<NovaHandler>();

  r.add('GET', '/os-services', (req, _p, ctx) => {
    requireAdmin(ctx, 'os_compute_api:os-services:list');
    const host = req.query.get('host');
    const binary = req.query.get('binary');
    const services = [...state.services.values()].filter(
      (s) => (!host || s.host === host) && (!binary || s.binary === binary),
    );
    return { status: 200, body: { services: services.map((s) => serviceView(state, s, ctx.version)) } };
  });

  r.add('PUT', '/os-services/:id', (req, { id }, ctx) => {
    requireAdmin(ctx, 'os_compute_api:os-services:update');
    if (!atLeast(ctx.version, 53)) {
      fail(400, 'This simulator supports PUT /os-services/{service_id} only at microversion 2.53 or later.');
    }
    if (!/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(id as string)) {
      fail(400, `Invalid uuid ${id}`);
    }
    const body = objectBody(req);
    onlyKeys('request body', body, ['status', 'disabled_reason', 'forced_down']);
    const svc = state.services.get(id as string);
    if (!svc) return fail(404, `Service ${id} could not be found.`);
    if (svc.binary !== 'nova-compute') {
      fail(400, `Updating a ${svc.binary} service is not supported. Only nova-compute services can be updated.`);
    }
    if ('status' in body && body.status !== 'enabled' && body.status !== 'disabled') {
      fail(
        400,
        `Invalid input for field/attribute status. Value: ${String(body.status)}. '${String(body.status)}' is not one of ['enabled', 'disabled']`,
      );
    }
    if ('disabled_reason' in body) {
      const reason = body.disabled_reason;
      if (typeof reason !== 'string' || reason.length < 1 || reason.length > 255) {
        fail(
          400,
          `Invalid input for field/attribute disabled_reason. Value: ${String(reason)}. Expected a string of 1 to 255 characters`,
        );
      }
    }
    if ('forced_down' in body && typeof body.forced_down !== 'boolean') {
      fail(
        400,
        `Invalid input for field/attribute forced_down. Value: ${String(body.forced_down)}. ${JSON.stringify(body.forced_down)} is not of type 'boolean'`,
      );
    }
    if (!('status' in body) && !('forced_down' in body)) {
      fail(400, "No updates were requested. Fields 'status' or 'forced_down' should be specified.");
    }
    if (body.status === 'enabled') {
      if (body.disabled_reason) fail(400, "Specifying 'disabled_reason' with status 'enabled' is invalid.");
      svc.disabled = false;
      svc.disabledReason = null;
    } else if (body.status === 'disabled') {
      svc.disabled = true;
      svc.disabledReason = typeof body.disabled_reason === 'string' ? body.disabled_reason : null;
    }
    if (typeof body.forced_down === 'boolean') svc.forcedDown = body.forced_down;
    svc.updatedAt = new Date().toISOString().replace(/\.\d{3}Z$/, '.000000');
    return { status: 200, body: { service: serviceView(state, svc, ctx.version) } };
  });

  const listServers = (detail: boolean) => (req: SimRequest, _p: Record<string, string>, ctx: NovaCtx) => {
    const allTenants =
      req.query.has('all_tenants') && !/^(0|false|f|no|n|off)$/i.test(req.query.get('all_tenants') ?? '');
    if (allTenants) requireAdmin(ctx, 'os_compute_api:servers:index:get_all_tenants');
    const host = ctx.admin ? req.query.get('host') : null;
    // Nova's default sort is created_at desc, id desc: newest first.
    const all = [...state.servers.values()]
      .reverse()
      .filter((s) => (allTenants ? true : s.projectId === ctx.token.projectId))
      .filter((s) => host === null || s.host === host);
    const { items, links } = page(
      state,
      req,
      all,
      (s) => s.id,
      detail ? 'servers/detail' : 'servers',
      (m) => `marker [${m}] not found`,
    );
    const servers = items.map((s) =>
      detail ? serverView(req, s, ctx, state) : { id: s.id, name: s.name, links: serverView(req, s, ctx, state).links },
    );
    return { status: 200, body: links ? { servers, servers_links: links } : { servers } };
  };
  r.add('GET', '/servers/detail', listServers(true));
  r.add('GET', '/servers', listServers(false));

  r.add('GET', '/servers/:id', (req, { id }, ctx) => ({
    status: 200,
    body: { server: serverView(req, visibleServer(state, id as string, ctx), ctx, state) },
  }));

  r.add('POST', '/servers/:id/action', (req, { id }, ctx) => {
    const body = objectBody(req);
    const action = Object.keys(body).find((k) => Object.hasOwn(ACTIONS, k));
    if (!action) return fail(400, `There is no such action: ${Object.keys(body)[0] ?? ''}`);
    const server = visibleServer(state, id as string, ctx);
    state.count('actionCalls', action, server.id);
    const res = (ACTIONS[action] as ActionHandler)(state, server, body[action], ctx);
    state.count('actionCounts', action, server.id);
    state.touch(server);
    return res;
  });

  r.add('GET', '/os-aggregates', (_req, _p, ctx) => {
    requireAdmin(ctx, 'os_compute_api:os-aggregates:index');
    return {
      status: 200,
      body: { aggregates: [...state.aggregates.values()].map((a) => aggregateView(a, ctx.version)) },
    };
  });

  r.add('POST', '/os-aggregates/:id/action', (req, { id }, ctx) => {
    const body = objectBody(req);
    const action = 'add_host' in body ? 'add_host' : 'remove_host' in body ? 'remove_host' : undefined;
    if (!action) return fail(400, `There is no such action: ${Object.keys(body)[0] ?? ''}`);
    requireAdmin(ctx, `os_compute_api:os-aggregates:${action}`);
    const arg = body[action] as Record<string, unknown> | null;
    if (!arg || typeof arg !== 'object' || typeof arg.host !== 'string' || arg.host.length < 1) {
      return fail(
        400,
        `Invalid input for field/attribute ${action}. Value: ${JSON.stringify(arg)}. 'host' is a required property`,
      );
    }
    onlyKeys(action, arg, ['host']);
    if (!/^-?\d+$/.test(id as string)) fail(400, 'id must be an integer');
    const agg = state.aggregates.get(Number(id));
    if (!agg) return fail(404, `Aggregate ${id} could not be found.`);
    const host = arg.host;
    if (action === 'add_host') {
      if (!state.serviceOf(host)) fail(404, `Compute host ${host} could not be found.`);
      if (agg.hosts.includes(host)) fail(409, `Aggregate ${agg.id} already has host ${host}.`);
      agg.hosts.push(host);
    } else {
      if (!agg.hosts.includes(host)) fail(404, `Aggregate ${agg.id} has no host ${host}.`);
      agg.hosts = agg.hosts.filter((h) => h !== host);
    }
    agg.updatedAt = new Date().toISOString().replace(/\.\d{3}Z$/, '.000000');
    return { status: 200, body: { aggregate: aggregateView(agg, ctx.version) } };
  });

  r.add('GET', '/os-migrations', (req, _p, ctx) => {
    requireAdmin(ctx, 'os_compute_api:os-migrations:index');
    const q = req.query;
    const paged = atLeast(ctx.version, 59);
    if (paged) {
      const allowed = [
        'hidden',
        'host',
        'instance_uuid',
        'source_compute',
        'status',
        'migration_type',
        'limit',
        'marker',
        'changes-since',
      ];
      if (atLeast(ctx.version, 66)) allowed.push('changes-before');
      if (atLeast(ctx.version, 80)) allowed.push('user_id', 'project_id');
      const extra = [...q.keys()].filter((k) => !allowed.includes(k));
      if (extra.length > 0)
        fail(400, `Invalid input for query parameters ${extra[0]}. Additional properties are not allowed`);
    }
    let rows = state.migrations.filter(
      (m) =>
        (!q.get('instance_uuid') || m.instanceUuid === q.get('instance_uuid')) &&
        (!q.get('migration_type') || m.migrationType === q.get('migration_type')) &&
        (!q.get('source_compute') || m.sourceCompute === q.get('source_compute')) &&
        (!q.get('status') || m.status === q.get('status')) &&
        (!q.get('host') || m.sourceCompute === q.get('host') || m.destCompute === q.get('host')),
    );
    if (!paged) {
      return { status: 200, body: { migrations: rows.map((m) => migrationView(m, ctx.version)) } };
    }
    rows = [...rows].reverse(); // created_at desc, id desc
    const { items, links } = page(
      state,
      req,
      rows,
      (m) => m.uuid,
      'os-migrations',
      (m) => `Marker ${m} could not be found.`,
    );
    const migrations = items.map((m) => migrationView(m, ctx.version));
    return { status: 200, body: links ? { migrations, migrations_links: links } : { migrations } };
  });

  return r;
}

type ActionHandler = (state: SimState, server: SimServer, arg: unknown, ctx: NovaCtx) => SimResponse;

const ACTIONS: Record<string, ActionHandler> = {
  evacuate(state, server, arg, ctx) {
    requireAdmin(ctx, 'os_compute_api:os-evacuate');
    if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) {
      return fail(
        400,
        `Invalid input for field/attribute evacuate. Value: ${JSON.stringify(arg)}. ${JSON.stringify(arg)} is not of type 'object'`,
      );
    }
    const body = arg as Record<string, unknown>;
    const allowed = ['host', 'adminPass'];
    if (!atLeast(ctx.version, 14)) allowed.push('onSharedStorage');
    if (atLeast(ctx.version, 29) && !atLeast(ctx.version, 68)) allowed.push('force');
    onlyKeys('evacuate', body, allowed);
    if (!atLeast(ctx.version, 14) && !('onSharedStorage' in body)) {
      fail(400, "Invalid input for field/attribute evacuate. Value: {}. 'onSharedStorage' is a required property");
    }
    const host = body.host;
    if (host !== undefined && (typeof host !== 'string' || host.length < 1 || host.length > 255)) {
      fail(
        400,
        `Invalid input for field/attribute host. Value: ${JSON.stringify(host)}. Expected a string of 1 to 255 characters`,
      );
    }
    if (body.force === true && !host) fail(400, "Can't force to a non-provided destination");
    if (typeof host === 'string' && !state.serviceOf(host)) fail(404, `Compute host ${host} not found.`);
    if (server.host === host) fail(400, "The target host can't be the same one.");
    checkState(server, 'evacuate', ['active', 'stopped', 'error']);
    const source = server.host ? state.serviceOf(server.host) : undefined;
    if (source && state.isUp(source)) fail(400, `Compute service of ${server.host} is still in use.`);

    // Accepted: the API marks the server rebuilding and writes the migration
    // tombstone; the conductor/scheduler/destination compute do the rest later.
    server.taskState = 'rebuilding';
    const migration = state.addMigration({
      instanceUuid: server.id,
      migrationType: 'evacuation',
      sourceCompute: server.host,
      destCompute: typeof host === 'string' ? host : null,
    });
    const wasStopped = server.vmState === 'stopped';
    // 2.95+: target_state stopped, which nova-compute's rebuild applies unless the server was in error.
    const stopAtTarget = atLeast(ctx.version, 95) && server.vmState !== 'error';
    state.schedule(state.latencies.evacuate, () => {
      if (state.servers.get(server.id) !== server) return;
      const target = state.pickTarget(migration.sourceCompute, typeof host === 'string' ? host : undefined);
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, '.000000');
      migration.updatedAt = now;
      if (!target) {
        // NoValidHost in the conductor: migration 'error', instance ERROR.
        migration.status = 'error';
        server.vmState = 'error';
        server.taskState = null;
      } else {
        migration.status = 'done';
        migration.destCompute = target.host;
        migration.destNode = target.host;
        server.host = target.host;
        server.node = target.host;
        server.taskState = null;
        // A stopped server is rebuilt stopped; active and error ones come back active (2.95+: active ones stopped).
        server.vmState = wasStopped || stopAtTarget ? 'stopped' : 'active';
        server.powerState = server.vmState === 'stopped' ? POWER_STATE.SHUTDOWN : POWER_STATE.RUNNING;
      }
      server.updatedAt = now;
    });
    return atLeast(ctx.version, 14) ? { status: 200 } : { status: 200, body: { adminPass: 'simulated-pass' } };
  },

  'os-resetState'(_state, server, arg, ctx) {
    requireAdmin(ctx, 'os_compute_api:os-admin-actions:reset_state');
    const state = (arg as { state?: unknown } | null)?.state;
    if (state !== 'active' && state !== 'error') {
      return fail(
        400,
        `Invalid input for field/attribute state. Value: ${String(state)}. '${String(state)}' is not one of ['active', 'error']`,
      );
    }
    server.vmState = state;
    server.taskState = null;
    return { status: 202 };
  },

  'os-stop'(state, server, _arg, ctx) {
    checkLock(server, ctx);
    checkState(server, 'stop', ['active', 'error']);
    server.taskState = 'powering-off';
    state.schedule(state.latencies.stop, () => {
      const svc = server.host ? state.serviceOf(server.host) : undefined;
      // An RPC cast to a dead compute is lost: the server stays powering-off, as in Nova.
      if (state.servers.get(server.id) !== server || !svc?.alive || server.taskState !== 'powering-off') return;
      server.vmState = 'stopped';
      server.powerState = POWER_STATE.SHUTDOWN;
      server.taskState = null;
      state.touch(server);
    });
    return { status: 202 };
  },

  'os-start'(state, server, _arg, ctx) {
    checkLock(server, ctx);
    checkState(server, 'start', ['stopped']);
    server.taskState = 'powering-on';
    state.schedule(state.latencies.start, () => {
      const svc = server.host ? state.serviceOf(server.host) : undefined;
      if (state.servers.get(server.id) !== server || !svc?.alive || server.taskState !== 'powering-on') return;
      server.vmState = 'active';
      server.powerState = powerStateFor('active');
      server.taskState = null;
      state.touch(server);
    });
    return { status: 202 };
  },

  lock(_state, server, _arg, ctx) {
    if (!server.locked) {
      server.locked = true;
      server.lockedBy = server.projectId === ctx.token.projectId ? 'owner' : 'admin';
    }
    return { status: 202 };
  },

  unlock(_state, server, _arg, ctx) {
    if (server.locked && server.lockedBy === 'admin' && !ctx.admin) {
      fail(403, "Policy doesn't allow os_compute_api:os-lock-server:unlock:unlock_override to be performed.");
    }
    server.locked = false;
    server.lockedBy = null;
    return { status: 202 };
  },
};

/** Entry point for everything under /compute: version documents, auth, microversion, routes. */
export function novaHandler(state: SimState): (req: SimRequest) => SimResponse {
  const router = novaRouter(state);
  return (req) => {
    if (req.path === '/' || req.path === '') return { status: 200, body: { versions: [versionDoc(req)] } };
    if (!req.path.startsWith('/v2.1')) return novaFault(404, 'The resource could not be found.');
    const path = req.path.slice('/v2.1'.length) || '/';
    if (path === '/') return { status: 200, body: { version: versionDoc(req) } };

    const token = state.liveToken(header(req.headers['x-auth-token']));
    if (!token) {
      return {
        status: 401,
        body: {
          error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
        },
      };
    }
    const version = requestedVersion(req);
    if ('status' in version) return version;
    const versionHeaders = {
      'openstack-api-version': `compute ${version.major}.${version.minor}`,
      'x-openstack-nova-api-version': `${version.major}.${version.minor}`,
      vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
    };
    const match = router.match(req.method, path);
    let res: SimResponse;
    if (!match) res = novaFault(404, 'The resource could not be found.');
    else if ('methodNotAllowed' in match)
      res = novaFault(405, 'The method specified is not allowed for this resource.');
    else if (req.body === BAD_JSON) res = novaFault(400, 'Malformed request body');
    else {
      try {
        res = match.handler(req, match.params, { token, admin: token.roles.includes('admin'), version });
      } catch (err) {
        if (!(err instanceof Fault)) throw err;
        res = err.response;
      }
    }
    return { ...res, headers: { ...versionHeaders, ...res.headers } };
  };
}

function versionDoc(req: SimRequest): unknown {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: `${NOVA_MAX_MICROVERSION.major}.${NOVA_MAX_MICROVERSION.minor}`,
    min_version: `${NOVA_MIN_MICROVERSION.major}.${NOVA_MIN_MICROVERSION.minor}`,
    updated: '2013-07-23T11:33:21Z',
    links: [{ rel: 'self', href: `${req.origin}/compute/v2.1/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
  };
}
