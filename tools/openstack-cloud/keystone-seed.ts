// Seeds the freshly bootstrapped Keystone over its REST API (faster than many
// `openstack` CLI runs): project service with the users nova and placement
// (roles admin + service, as devstack gives them), project demo with user
// member (role member), and the catalog: compute "nova" (the recording proxy;
// Masakari finds Nova by compute:nova:publicURL), placement, image and network
// (the stand-ins). It then serves as the harness's admin client for Nova.
import { Agent, fetch } from 'undici';
import { ADMIN_PASSWORD, MEMBER_PASSWORD, SERVICE_PASSWORD, type CloudPorts } from './config.ts';

export const HARNESS_USER_AGENT = 'masakari-openstack-cloud';

export interface ApiResult {
  status: number;
  body: unknown;
}

export interface KeystoneAdmin {
  /** A call to Nova (through the catalog's compute endpoint) as the cloud admin, microversion 2.latest by default. */
  nova(method: string, path: string, body?: unknown, microversion?: string): Promise<ApiResult>;
  /** Adds or replaces the public and internal endpoints of a service in RegionOne. */
  setEndpoint(type: string, name: string, url: string): Promise<void>;
  /** An admin token (project admin), renewed when close to expiry. */
  token(): Promise<string>;
}

/**
 * Connections idle at most 500 ms, under gunicorn's 2 s keepalive: reusing a
 * connection the server is closing fails a request it never saw.
 */
const dispatcher = new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500 });

async function call(
  url: string,
  method: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResult & { headers: { get(name: string): string | null } }> {
  const r = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      'user-agent': HARNESS_USER_AGENT,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { 'x-auth-token': token } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
    dispatcher,
  });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: r.status, body: parsed, headers: r.headers };
}

function ok(what: string, r: ApiResult, ...statuses: number[]): ApiResult {
  if (!(statuses.length ? statuses : [200, 201, 204]).includes(r.status)) {
    throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  }
  return r;
}

export async function passwordToken(
  keystone: string,
  user: string,
  password: string,
  project: string,
): Promise<string> {
  const r = await call(`${keystone}/v3/auth/tokens`, 'POST', undefined, {
    auth: {
      identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
      scope: { project: { name: project, domain: { id: 'default' } } },
    },
  });
  ok(`token for ${user}`, r, 201);
  const token = r.headers.get('x-subject-token');
  if (!token) throw new Error(`token for ${user}: no X-Subject-Token`);
  return token;
}

/** A Nova caller with a password token of its own (renewed every 30 min), for the admin or a member. */
export function novaCaller(
  keystone: string,
  novaUrl: string,
  user: string,
  password: string,
  project: string,
): (method: string, path: string, body?: unknown, microversion?: string) => Promise<ApiResult> {
  let cached: { token: string; at: number } | undefined;
  return async (method, path, body, microversion = 'latest') => {
    if (!cached || Date.now() - cached.at > 30 * 60_000) {
      cached = { token: await passwordToken(keystone, user, password, project), at: Date.now() };
    }
    return call(`${novaUrl}${path}`, method, cached.token, body, {
      'openstack-api-version': `compute ${microversion}`,
    });
  };
}

export async function seedKeystone(keystone: string, ports: CloudPorts): Promise<KeystoneAdmin> {
  let cached: { token: string; at: number } | undefined;
  const token = async () => {
    // fernet tokens live an hour by default; renew well before
    if (!cached || Date.now() - cached.at > 30 * 60_000) {
      cached = { token: await passwordToken(keystone, 'admin', ADMIN_PASSWORD, 'admin'), at: Date.now() };
    }
    return cached.token;
  };
  const ks = async (method: string, path: string, body?: unknown) =>
    call(`${keystone}/v3${path}`, method, await token(), body);

  const roles = new Map(
    (ok('roles', await ks('GET', '/roles')).body as { roles: { id: string; name: string }[] }).roles.map((r) => [
      r.name,
      r.id,
    ]),
  );
  const role = (name: string) => {
    const id = roles.get(name);
    if (!id) throw new Error(`Keystone has no role ${name} after bootstrap`);
    return id;
  };
  const project = async (name: string) =>
    (
      ok(`project ${name}`, await ks('POST', '/projects', { project: { name, domain_id: 'default', enabled: true } }))
        .body as {
        project: { id: string };
      }
    ).project.id;
  const user = async (name: string, password: string, projectId: string) =>
    (
      ok(
        `user ${name}`,
        await ks('POST', '/users', {
          user: { name, password, domain_id: 'default', default_project_id: projectId, enabled: true },
        }),
      ).body as {
        user: { id: string };
      }
    ).user.id;
  const grant = async (projectId: string, userId: string, roleName: string) =>
    ok(`grant ${roleName}`, await ks('PUT', `/projects/${projectId}/users/${userId}/roles/${role(roleName)}`));

  // one write at a time: concurrent writes to Keystone's SQLite fail with "database is locked"
  const serviceId = await project('service');
  const demoId = await project('demo');
  const novaId = await user('nova', SERVICE_PASSWORD, serviceId);
  const placementId = await user('placement', SERVICE_PASSWORD, serviceId);
  const memberId = await user('member', MEMBER_PASSWORD, demoId);
  await grant(serviceId, novaId, 'admin');
  await grant(serviceId, novaId, 'service');
  await grant(serviceId, placementId, 'admin');
  await grant(serviceId, placementId, 'service');
  await grant(demoId, memberId, 'member');
  await grant(demoId, memberId, 'reader');

  const setEndpoint = async (type: string, name: string, url: string) => {
    const services = (
      ok('services', await ks('GET', `/services?type=${encodeURIComponent(type)}`)).body as {
        services: { id: string; name: string }[];
      }
    ).services;
    let serviceId2 = services.find((s) => s.name === name)?.id;
    if (!serviceId2) {
      serviceId2 = (
        ok(`service ${type}`, await ks('POST', '/services', { service: { type, name, enabled: true } })).body as {
          service: { id: string };
        }
      ).service.id;
    }
    const existing = (
      ok('endpoints', await ks('GET', `/endpoints?service_id=${serviceId2}`)).body as {
        endpoints: { id: string }[];
      }
    ).endpoints;
    for (const e of existing) ok('delete endpoint', await ks('DELETE', `/endpoints/${e.id}`), 204);
    for (const iface of ['public', 'internal', 'admin']) {
      ok(
        `endpoint ${type} ${iface}`,
        await ks('POST', '/endpoints', {
          endpoint: { service_id: serviceId2, interface: iface, url, region_id: 'RegionOne', enabled: true },
        }),
      );
    }
  };

  // the database template was bootstrapped with a placeholder URL (templates.ts)
  await setEndpoint('identity', 'keystone', `${keystone}/v3/`);
  await setEndpoint('compute', 'nova', `http://127.0.0.1:${ports.nova}/v2.1`);
  await setEndpoint('placement', 'placement', `http://127.0.0.1:${ports.placement}`);
  await setEndpoint('image', 'glance', `http://127.0.0.1:${ports.glance}`);
  await setEndpoint('network', 'neutron', `http://127.0.0.1:${ports.neutron}`);

  return {
    token,
    setEndpoint,
    async nova(method, path, body, microversion = 'latest') {
      return call(`http://127.0.0.1:${ports.nova}/v2.1${path}`, method, await token(), body, {
        'openstack-api-version': `compute ${microversion}`,
      });
    },
  };
}
