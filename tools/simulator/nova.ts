// Nova compute API v2.1, the subset Masakari and the operator call (N1–N12,
// the table "Masakari calls" in src/openstack/README.md), with Nova's status codes, fault bodies, messages and
// microversion negotiation (nova/api/openstack/wsgi.py, api_version_request.py).
// The routes are here; the plumbing is in nova-wsgi.ts, the documents in
// nova-views.ts and the server actions in nova-server-actions.ts.

import type { SimRequest, SimResponse } from './router.ts';
import { BAD_JSON, Router } from './router.ts';
import type { SimState } from './state.ts';
import { nowIso } from './state.ts';
import type { NovaCtx, NovaHandler } from './nova-wsgi.ts';
import {
  atLeast,
  Fault,
  fail,
  header,
  NOVA_MAX_MICROVERSION,
  NOVA_MIN_MICROVERSION,
  novaFault,
  objectBody,
  onlyKeys,
  page,
  requestedVersion,
  requireAdmin,
} from './nova-wsgi.ts';
import { aggregateView, migrationView, serverView, serviceView } from './nova-views.ts';
import type { ActionHandler } from './nova-server-actions.ts';
import { SERVER_ACTIONS, visibleServer } from './nova-server-actions.ts';

export { novaFault } from './nova-wsgi.ts';

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
    svc.updatedAt = nowIso();
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
    const action = Object.keys(body).find((k) => Object.hasOwn(SERVER_ACTIONS, k));
    if (!action) return fail(400, `There is no such action: ${Object.keys(body)[0] ?? ''}`);
    const server = visibleServer(state, id as string, ctx);
    state.count('actionCalls', action, server.id);
    const res = (SERVER_ACTIONS[action] as ActionHandler)(state, server, body[action], ctx);
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
    agg.updatedAt = nowIso();
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
