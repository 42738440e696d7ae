// The operations endpoint, on its own port (default 127.0.0.1:8081) so probes
// and Prometheus never compete with, or need the credentials of, the Masakari API:
//   GET /healthz  200 while the process serves requests (its event loop turns)
//                 and nothing in it is beyond retrying: 503 naming what is
//                 (a cache whose list/watch loop died), so the kubelet restarts it.
//                 API server errors never fail it: they are retried, and a
//                 restart would not help (docs/operations.md, "Probes").
//   GET /readyz   200 when every started component is ready; 503 with the
//                 names of those that are not (or while starting/stopping)
//   GET /metrics  Prometheus text format of the process registry
// With [operator] prometheus_listen, /metrics moves to a second server of its
// own (endpoints: ['metrics']) and this one keeps the probes, so a
// NetworkPolicy can admit Prometheus to the metrics port alone.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';

export interface Readiness {
  /** Phase of the process; only 'running' can be ready. */
  phase(): 'starting' | 'running' | 'stopping';
  /** Started components and whether each is ready. */
  components(): Array<{ name: string; ready: boolean }>;
}

/** What restarting the process would fix; empty while it is alive. */
export type Liveness = () => string[];

export type OpsEndpoint = 'health' | 'metrics';

export interface OpsServerOptions {
  host: string;
  port: number;
  /** What this server answers: health (/healthz, /readyz), metrics (/metrics); default both. */
  endpoints?: readonly OpsEndpoint[];
  registry: Registry;
  readiness: Readiness;
  liveness?: Liveness;
  log: Logger;
}

export interface OpsServer {
  /** The bound address (the port is real even when 0 was asked for). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

export interface ReadinessReport {
  status: 'ready' | 'not ready';
  phase: 'starting' | 'running' | 'stopping';
  components: Record<string, boolean>;
  not_ready: string[];
}

export function readinessReport(readiness: Readiness): ReadinessReport {
  const phase = readiness.phase();
  const components = readiness.components();
  const notReady = components.filter((c) => !c.ready).map((c) => c.name);
  return {
    status: phase === 'running' && components.length > 0 && notReady.length === 0 ? 'ready' : 'not ready',
    phase,
    components: Object.fromEntries(components.map((c) => [c.name, c.ready])),
    not_ready: notReady,
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

const sendJson = (res: ServerResponse, status: number, body: unknown) =>
  send(res, status, 'application/json', JSON.stringify(body));

async function handle(req: IncomingMessage, res: ServerResponse, opts: OpsServerOptions): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const endpoints = opts.endpoints ?? ['health', 'metrics'];
  const paths = [
    ...(endpoints.includes('health') ? ['/healthz', '/readyz'] : []),
    ...(endpoints.includes('metrics') ? ['/metrics'] : []),
  ];
  if (!paths.includes(path)) {
    const tries = paths.length > 1 ? `${paths.slice(0, -1).join(', ')} or ${paths[paths.length - 1]}` : paths[0];
    return sendJson(res, 404, { error: `no such endpoint ${path}; try ${tries}` });
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendJson(res, 405, { error: `${req.method} is not allowed on ${path}` });
  }
  if (path === '/healthz') {
    const broken = opts.liveness?.() ?? [];
    if (broken.length === 0) return send(res, 200, 'text/plain; charset=utf-8', 'ok\n');
    return send(res, 503, 'text/plain; charset=utf-8', `not alive: ${broken.join('; ')}\n`);
  }
  if (path === '/readyz') {
    const report = readinessReport(opts.readiness);
    return sendJson(res, report.status === 'ready' ? 200 : 503, report);
  }
  const text = await opts.registry.metrics();
  return send(res, 200, opts.registry.contentType, text);
}

/** Starts listening; rejects when the address cannot be bound (e.g. EADDRINUSE). */
export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res, opts).catch((e: unknown) => {
      opts.log.error({ err: e, path: req.url }, 'ops endpoint failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error; see the operator log' });
      else res.destroy();
    });
  });
  // Probes come every few seconds from the kubelet; never hold sockets open for long.
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
