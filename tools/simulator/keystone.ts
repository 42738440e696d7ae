// Keystone v3, the part OpenStack clients and the operator use: version
// discovery, token issue (password, application credential), validation and
// revocation. Errors use Keystone's body {"error": {"code", "message", "title"}}.

import { randomBytes } from 'node:crypto';
import type { SimRequest, SimResponse } from './router.ts';
import { BAD_JSON, Router } from './router.ts';
import type { SimState } from './state.ts';
import type { SimToken } from './records.ts';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
};
const UNAUTHENTICATED = 'The request you have made requires authentication.';
const DEFAULT_DOMAIN = { id: 'default', name: 'Default' };
const REGION = 'RegionOne';

export function keystoneError(status: number, message: string): SimResponse {
  return { status, body: { error: { code: status, message, title: TITLES[status] ?? 'Error' } } };
}

function keystoneTime(d: Date): string {
  return d.toISOString().replace(/Z$/, '000Z');
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function isDefaultDomain(d: Record<string, unknown> | undefined): boolean {
  if (!d) return false;
  if (typeof d.id === 'string') return d.id === 'default';
  return typeof d.name === 'string' && d.name.toLowerCase() === 'default';
}

/** Service catalog of the simulated cloud: identity, compute (nova), image (glance), instance-ha (masakari). */
export function catalog(state: SimState, base: string): unknown[] {
  const endpoints = (service: string, url: string) =>
    ['public', 'internal', 'admin'].map((iface) => ({
      id: `${service}-${iface}`,
      interface: iface,
      region_id: REGION,
      region: REGION,
      url,
    }));
  return [
    { id: 'keystone', type: 'identity', name: 'keystone', endpoints: endpoints('keystone', `${base}/identity`) },
    { id: 'nova', type: 'compute', name: 'nova', endpoints: endpoints('nova', `${base}/compute/v2.1`) },
    { id: 'glance', type: 'image', name: 'glance', endpoints: endpoints('glance', `${base}/image`) },
    { id: 'masakari', type: 'instance-ha', name: 'masakari', endpoints: endpoints('masakari', state.masakariUrl) },
  ];
}

export function tokenBody(state: SimState, t: SimToken, base: string, withCatalog: boolean): unknown {
  const user = state.users.get(t.userId);
  const project = t.projectId ? state.projects.get(t.projectId) : undefined;
  const token: Record<string, unknown> = {
    methods: t.methods,
    user: { id: t.userId, name: user?.name ?? t.userId, domain: DEFAULT_DOMAIN, password_expires_at: null },
    audit_ids: [randomBytes(16).toString('base64url')],
    expires_at: keystoneTime(t.expiresAt),
    issued_at: keystoneTime(t.issuedAt),
  };
  if (project) {
    token.project = { id: project.id, name: project.name, domain: DEFAULT_DOMAIN };
    token.is_domain = false;
  }
  if (t.system) token.system = { all: true };
  if (project || t.system) {
    token.roles = t.roles.map((r) => ({ id: `role-${r}`, name: r }));
    if (withCatalog) token.catalog = catalog(state, base);
  }
  if (t.appCredentialId) {
    const ac = state.appCredentials.get(t.appCredentialId);
    token.application_credential = { id: ac?.id, name: ac?.name, restricted: true };
  }
  return { token };
}

export function keystoneRouter(state: SimState): Router {
  const r = new Router();

  r.add('GET', '/', (req) => ({
    status: 300,
    body: {
      versions: {
        values: [
          {
            id: 'v3.14',
            status: 'stable',
            updated: '2020-04-07T00:00:00Z',
            links: [{ rel: 'self', href: `${req.origin}/identity/v3/` }],
            'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
          },
        ],
      },
    },
  }));

  r.add('GET', '/v3', (req) => ({
    status: 200,
    body: {
      version: {
        id: 'v3.14',
        status: 'stable',
        updated: '2020-04-07T00:00:00Z',
        links: [{ rel: 'self', href: `${req.origin}/identity/v3/` }],
        'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
      },
    },
  }));

  r.add('POST', '/v3/auth/tokens', (req) => {
    if (req.body === BAD_JSON) return keystoneError(400, 'Malformed request body');
    const identity = obj(obj(obj(req.body)?.auth)?.identity);
    const methods = identity?.methods;
    if (!identity || !Array.isArray(methods) || methods.length === 0) {
      return keystoneError(
        400,
        'Expecting to find identity in auth. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.',
      );
    }
    const scope = obj(obj(obj(req.body)?.auth)?.scope);
    let userId: string;
    let appCred: ReturnType<SimState['appCredentials']['get']>;
    if (methods.includes('application_credential')) {
      const ac = obj(identity.application_credential);
      if (!ac || typeof ac.secret !== 'string') return keystoneError(400, "'secret' is a required property");
      if (typeof ac.id === 'string') {
        appCred = state.appCredentials.get(ac.id);
      } else if (typeof ac.name === 'string') {
        const u = obj(ac.user);
        const owner = u && (typeof u.id === 'string' ? state.users.get(u.id) : state.userByName(String(u.name)));
        appCred = owner
          ? [...state.appCredentials.values()].find((c) => c.name === ac.name && c.userId === owner.id)
          : undefined;
      } else {
        return keystoneError(400, 'Could not find application credential: id or name is required');
      }
      if (!appCred || appCred.secret !== ac.secret) return keystoneError(401, UNAUTHENTICATED);
      if (scope) return keystoneError(401, 'Cannot change scope of an application credential token.');
      userId = appCred.userId;
    } else if (methods.includes('password')) {
      const u = obj(obj(identity.password)?.user);
      if (!u || typeof u.password !== 'string') return keystoneError(400, 'Expecting to find password in user.');
      const user = typeof u.id === 'string' ? state.users.get(u.id) : state.userByName(String(u.name));
      if (typeof u.id !== 'string' && !isDefaultDomain(obj(u.domain))) return keystoneError(401, UNAUTHENTICATED);
      if (!user || user.password !== u.password) return keystoneError(401, UNAUTHENTICATED);
      userId = user.id;
    } else {
      return keystoneError(401, `Attempted to authenticate with an unsupported method.`);
    }

    const user = state.users.get(userId);
    if (!user) return keystoneError(401, UNAUTHENTICATED);
    let token: SimToken;
    if (appCred) {
      token = state.issueToken({
        userId,
        projectId: appCred.projectId,
        system: false,
        roles: appCred.roles,
        methods: ['application_credential'],
        appCredentialId: appCred.id,
      });
    } else if (scope?.system) {
      if (user.systemRoles.length === 0) return keystoneError(401, UNAUTHENTICATED);
      token = state.issueToken({
        userId,
        projectId: null,
        system: true,
        roles: user.systemRoles,
        methods: ['password'],
      });
    } else if (scope?.project) {
      const p = obj(scope.project);
      const project =
        typeof p?.id === 'string'
          ? state.projects.get(p.id)
          : isDefaultDomain(obj(p?.domain))
            ? state.projectByName(String(p?.name))
            : undefined;
      const roles = project ? user.roles[project.id] : undefined;
      if (!project || !roles || roles.length === 0) return keystoneError(401, UNAUTHENTICATED);
      token = state.issueToken({ userId, projectId: project.id, system: false, roles, methods: ['password'] });
    } else {
      token = state.issueToken({ userId, projectId: null, system: false, roles: [], methods: ['password'] });
    }
    return { status: 201, headers: { 'x-subject-token': token.id }, body: tokenBody(state, token, req.origin, true) };
  });

  const validate = (method: 'GET' | 'DELETE') => (req: SimRequest) => {
    const caller = state.liveToken(header(req.headers['x-auth-token']));
    if (!caller) return keystoneError(401, UNAUTHENTICATED);
    const subjectId = header(req.headers['x-subject-token']);
    const subject = state.liveToken(subjectId);
    // Keystone's identity:validate_token / revoke_token: admin, service, or the token's own user.
    const allowed =
      caller.roles.includes('admin') ||
      caller.roles.includes('service') ||
      (subject && subject.userId === caller.userId);
    if (!allowed)
      return keystoneError(
        403,
        `You are not authorized to perform the requested action: identity:${method === 'GET' ? 'validate' : 'revoke'}_token.`,
      );
    if (!subject) return keystoneError(404, `Could not find token: ${subjectId ?? ''}.`);
    if (method === 'DELETE') {
      state.tokens.delete(subject.id);
      return { status: 204 };
    }
    return {
      status: 200,
      headers: { 'x-subject-token': subject.id },
      body: tokenBody(state, subject, req.origin, !req.query.has('nocatalog')),
    };
  };
  r.add('GET', '/v3/auth/tokens', validate('GET'));
  r.add('DELETE', '/v3/auth/tokens', validate('DELETE'));
  return r;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
