// A recording reverse proxy in front of nova-api. The Keystone catalog's
// compute endpoint points here, so every client (the operator, the reference
// Masakari, the `openstack` CLI) reaches real Nova through it, and every
// exchange is kept (bounded) for the simulator-fidelity transcript and for
// counting the actions a client sent.
import { createServer, request, type Server } from 'node:http';

export interface NovaExchange {
  seq: number;
  at: string;
  method: string;
  /** Path and query, as sent by the client (the proxy's own host stripped). */
  url: string;
  userAgent: string;
  microversion: string | undefined;
  requestBody: unknown;
  status: number;
  responseBody: unknown;
  durationMs: number;
}

export interface NovaRecorder {
  url: string;
  /** Exchanges with seq > since, oldest first. */
  since(since: number): NovaExchange[];
  lastSeq(): number;
  /**
   * While down, every request's connection is closed without an answer: Nova cannot be reached through the
   * catalog's endpoint, as in an outage of nova-api or of the network to it (nothing is recorded).
   */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

const MAX_EXCHANGES = 20_000;
const MAX_BODY_CHARS = 64 * 1024;

function parse(text: string): unknown {
  if (!text) return undefined;
  if (text.length > MAX_BODY_CHARS) return `<${text.length} chars>`;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export async function startNovaRecorder(port: number, upstreamPort: number): Promise<NovaRecorder> {
  const log: NovaExchange[] = [];
  let seq = 0;
  let down = false;
  const server: Server = createServer((req, res) => {
    if (down) return void req.socket.destroy();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const started = Date.now();
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers, host: `127.0.0.1:${upstreamPort}` };
      const up = request(
        // agent: false, a fresh connection per request: a kept-alive one may be closed by
        // gunicorn (keepalive 2 s) just as we reuse it, failing a request Nova never saw
        {
          host: '127.0.0.1',
          port: upstreamPort,
          method: req.method,
          path: req.url,
          headers,
          timeout: 120_000,
          agent: false,
        },
        (upRes) => {
          const out: Buffer[] = [];
          upRes.on('data', (c: Buffer) => out.push(c));
          upRes.on('end', () => {
            const text = Buffer.concat(out);
            // Location and links name nova-api's own port; clients must come back through us
            const rewritten = text.toString('utf8').split(`127.0.0.1:${upstreamPort}`).join(`127.0.0.1:${port}`);
            const h = { ...upRes.headers };
            delete h['content-length'];
            delete h['transfer-encoding'];
            if (typeof h.location === 'string') h.location = h.location.replace(`:${upstreamPort}`, `:${port}`);
            res.writeHead(upRes.statusCode ?? 502, { ...h, 'content-length': Buffer.byteLength(rewritten) });
            res.end(rewritten);
            log.push({
              seq: ++seq,
              at: new Date(started).toISOString(),
              method: req.method ?? 'GET',
              url: req.url ?? '/',
              userAgent: String(req.headers['user-agent'] ?? ''),
              microversion: (req.headers['openstack-api-version'] ?? req.headers['x-openstack-nova-api-version']) as
                string | undefined,
              requestBody: parse(body.toString('utf8')),
              status: upRes.statusCode ?? 0,
              responseBody: parse(rewritten),
              durationMs: Date.now() - started,
            });
            if (log.length > MAX_EXCHANGES) log.splice(0, log.length - MAX_EXCHANGES);
          });
        },
      );
      up.on('timeout', () => up.destroy(new Error('nova-api did not answer within 120 s')));
      up.on('error', (e) => {
        if (res.headersSent) return res.destroy();
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`nova-api unreachable: ${e.message}`);
      });
      up.end(body);
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    since: (since) => log.filter((e) => e.seq > since),
    lastSeq: () => seq,
    setDown: (d) => {
      down = d;
      if (d) server.closeIdleConnections();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
