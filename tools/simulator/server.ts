// One HTTP server on 127.0.0.1 serving three path prefixes:
//   /identity      Keystone v3   (OS_AUTH_URL = <url>/identity/v3)
//   /compute       Nova v2.1     (catalog: compute / nova → <url>/compute/v2.1)
//   /image         Glance v2     (catalog: image / glance → <url>/image; GET /v2/images/{id} only)
//   /_sim          control API   (control.ts)
// Faults and the API latency apply to /identity, /compute and /image only.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PasswordCredentials } from '../../src/openstack/credentials.ts';
import { controlRouter } from './control.ts';
import { glanceFault, glanceHandler } from './glance.ts';
import { keystoneError, keystoneRouter } from './keystone.ts';
import { novaFault, novaHandler } from './nova.ts';
import type { Router, SimRequest, SimResponse } from './router.ts';
import { BAD_JSON } from './router.ts';
import type { SimLatencies, SimServerInput } from './records.ts';
import { SimError, SimState } from './state.ts';

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /**
   * Address to listen on (default 127.0.0.1). The cluster tests use the test
   * node's local-only IP, which pods can reach and 127.0.0.1 is not.
   */
  host?: string;
  latencyMs?: Partial<SimLatencies>;
  hosts?: string[];
  servers?: SimServerInput[];
  /** instance-ha endpoint in the catalog (default http://127.0.0.1:15868/v1). */
  masakariUrl?: string;
  adminPassword?: string;
  memberPassword?: string;
  tokenTtlMs?: number;
  /** Nova [api] max_limit (default 1000). */
  maxLimit?: number;
}

export interface Simulator {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Keystone v3 URL for OS_AUTH_URL. */
  authUrl: string;
  /** OS_* environment values for the admin user. */
  credentials: Record<string, string>;
  /** The same admin login in the OpenStack client's credential shape. */
  clientCredentials: PasswordCredentials;
  /** Direct access for in-process tests. */
  state: SimState;
  stop(): Promise<void>;
}

const MAX_BODY_BYTES = 1 << 20;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return BAD_JSON;
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return BAD_JSON;
  }
}

function send(res: ServerResponse, r: SimResponse): void {
  const headers: Record<string, string> = { 'x-openstack-request-id': `req-${randomUUID()}`, ...r.headers };
  if (r.body !== undefined) {
    const text = JSON.stringify(r.body);
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(text));
    res.writeHead(r.status, headers).end(text);
  } else {
    headers['content-length'] = '0';
    res.writeHead(r.status, headers).end();
  }
}

function routed(
  router: Router,
  req: SimRequest,
  notFound: (status: number, msg: string) => SimResponse,
): Promise<SimResponse> | SimResponse {
  const match = router.match(req.method, req.path);
  if (!match) return notFound(404, 'The resource could not be found.');
  if ('methodNotAllowed' in match) return notFound(405, 'The method specified is not allowed for this resource.');
  return match.handler(req, match.params);
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const state = new SimState({
    ...(opts.hosts ? { hosts: opts.hosts } : {}),
    ...(opts.servers ? { servers: opts.servers } : {}),
    ...(opts.latencyMs ? { latencyMs: opts.latencyMs } : {}),
    ...(opts.adminPassword ? { adminPassword: opts.adminPassword } : {}),
    ...(opts.memberPassword ? { memberPassword: opts.memberPassword } : {}),
    ...(opts.tokenTtlMs ? { tokenTtlMs: opts.tokenTtlMs } : {}),
    ...(opts.maxLimit ? { maxLimit: opts.maxLimit } : {}),
    ...(opts.masakariUrl ? { masakariUrl: opts.masakariUrl } : {}),
  });
  const keystone = keystoneRouter(state);
  const nova = novaHandler(state);
  const glance = glanceHandler(state);
  const control = controlRouter(state);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    const body = await readBody(req);
    const prefix = ['/identity', '/compute', '/image', '/_sim'].find(
      (p) => url.pathname === p || url.pathname.startsWith(p + '/'),
    );
    if (!prefix) return send(res, { status: 404, body: { error: `no API at ${url.pathname}` } });
    const simReq: SimRequest = {
      method,
      path: url.pathname.slice(prefix.length) || '/',
      query: url.searchParams,
      headers: req.headers,
      body,
      origin,
    };

    if (prefix === '/_sim') {
      try {
        return send(res, await routed(control, simReq, (status, message) => ({ status, body: { error: message } })));
      } catch (err) {
        if (err instanceof SimError) return send(res, { status: err.status, body: { error: err.message } });
        throw err;
      }
    }

    const faultResponse = (status: number) =>
      prefix === '/compute'
        ? novaFault(status, 'Simulated fault')
        : prefix === '/image'
          ? glanceFault(status, 'Simulated fault')
          : keystoneError(status, 'Simulated fault');
    const log = (status: number) =>
      state.logRequest({
        at: new Date().toISOString(),
        method,
        path: url.pathname + url.search,
        requestId: (req.headers['x-openstack-request-id'] as string | undefined) ?? null,
        microversion:
          (req.headers['openstack-api-version'] as string | undefined) ??
          (req.headers['x-openstack-nova-api-version'] as string | undefined) ??
          null,
        status,
      });
    // A server or aggregate action's name is the one key of its body ({"unlock": null}).
    const action =
      method === 'POST' && url.pathname.endsWith('/action') && body && typeof body === 'object' && !Array.isArray(body)
        ? Object.keys(body)[0]
        : undefined;
    const applyFault = (when: 'before' | 'after'): boolean => {
      const fault = state.takeFault(method, url.pathname, when, action);
      if (!fault) return false;
      if (fault.kind === 'hang') {
        log(0); // never answered; the client's timeout ends it, stop() closes the socket
      } else if (fault.kind === 'reset') {
        log(0);
        req.socket.destroy();
      } else {
        log(fault.kind);
        send(res, faultResponse(fault.kind));
      }
      return true;
    };

    if (applyFault('before')) return;
    const held = state.holds.hold(method, url.pathname, body);
    if (held) await held;
    if (state.latencies.api > 0) await sleep(state.latencies.api);
    const response =
      prefix === '/compute'
        ? nova(simReq)
        : prefix === '/image'
          ? glance(simReq)
          : await routed(keystone, simReq, (status, message) => keystoneError(status, message));
    if (applyFault('after')) return;
    log(response.status);
    send(res, method === 'HEAD' ? { ...response, body: undefined } : response);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        send(res, { status: 500, body: { error: err instanceof Error ? err.message : String(err) } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  const authUrl = `${url}/identity/v3`;
  const adminPassword = opts.adminPassword ?? 'admin-secret';

  return {
    url,
    authUrl,
    state,
    credentials: {
      OS_AUTH_URL: authUrl,
      OS_AUTH_TYPE: 'password',
      OS_IDENTITY_API_VERSION: '3',
      OS_USERNAME: 'admin',
      OS_PASSWORD: adminPassword,
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_REGION_NAME: 'RegionOne',
      OS_INTERFACE: 'public',
    },
    clientCredentials: {
      auth_url: authUrl,
      username: 'admin',
      password: adminPassword,
      project_name: 'admin',
      user_domain_name: 'Default',
      project_domain_name: 'Default',
      region_name: 'RegionOne',
      interface: 'public',
    },
    async stop() {
      state.clearTimers();
      state.holds.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
