// The HTTPS server the API server calls: POST /validate with an
// admission.k8s.io/v1 AdmissionReview, answered with the verdict of
// AdmissionRules. Malformed requests get a 4xx with a plain-text reason; a
// failure inside the rules is logged and answered as a denial (the
// configuration's failurePolicy is Fail, so refusing is the safe side).
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AdmissionRequest, Verdict } from './review.ts';
import { admissionResponse, deny, parseAdmissionReview } from './review.ts';
import { internalError } from './messages.ts';
import { createWebhookMetrics } from './metrics.ts';
import { readKeyPairFiles, watchKeyPairFiles, type KeyPair } from '../net/key-pair.ts';
import { webhookKeyPairSource } from './tls.ts';

export const WEBHOOK_PATH = '/validate';
/** An AdmissionReview carries the object and the old object; etcd caps each at 1.5 MiB. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface Reviewer {
  review(req: AdmissionRequest): Promise<Verdict>;
}

export interface WebhookServerOptions {
  listen: { host: string; port: number };
  /** Directory holding tls.crt and tls.key (reloaded on change); absent: a self-signed loopback certificate. */
  certDir?: string;
  certPollMs?: number;
  rules: Reviewer;
  log: Logger;
  metrics?: Registry;
}

export interface WebhookServer {
  address(): AddressInfo;
  /** https://<host>:<port>/validate for a host the certificate covers (127.0.0.1 for the self-signed one). */
  url(host?: string): string;
  /** PEM of the self-signed CA (the caBundle to register); undefined when the certificate comes from files. */
  caPem: string | undefined;
  stop(): Promise<void>;
}

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpFailure(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function parseRequest(req: IncomingMessage): Promise<AdmissionRequest> {
  if (req.url?.split('?')[0] !== WEBHOOK_PATH)
    throw new HttpFailure(404, `not found; the webhook serves ${WEBHOOK_PATH}`);
  if (req.method !== 'POST') throw new HttpFailure(405, `${WEBHOOK_PATH} accepts POST only`);
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    throw new HttpFailure(415, 'Content-Type must be application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse((await readBody(req)).toString('utf8'));
  } catch (e) {
    if (e instanceof HttpFailure) throw e;
    throw new HttpFailure(400, 'the body is not valid JSON');
  }
  const parsed = parseAdmissionReview(body);
  if ('error' in parsed) throw new HttpFailure(400, parsed.error);
  return parsed.request;
}

function send(res: ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const log = opts.log.child({ component: 'webhook' });
  const metrics = createWebhookMetrics(opts.metrics);
  let pair: KeyPair;
  let caPem: string | undefined;
  if (opts.certDir) {
    pair = await readKeyPairFiles(webhookKeyPairSource(opts.certDir));
  } else {
    // Loaded only here: a pod serving a mounted certificate never loads the X.509 generator.
    const { selfSignedKeyPair } = await import('./self-signed.ts');
    const generated = await selfSignedKeyPair();
    pair = generated;
    caPem = generated.caPem;
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let review: AdmissionRequest;
    try {
      review = await parseRequest(req);
    } catch (e) {
      const status = e instanceof HttpFailure ? e.status : 400;
      send(res, status, `${(e as Error).message}\n`, 'text/plain; charset=utf-8');
      return;
    }
    const started = process.hrtime.bigint();
    let verdict: Verdict;
    let result: 'allowed' | 'denied' | 'error';
    try {
      verdict = await opts.rules.review(review);
      result = verdict.allowed ? 'allowed' : 'denied';
    } catch (err) {
      log.error({ err, uid: review.uid, kind: review.kind.kind, name: review.name }, 'admission review failed');
      verdict = deny(500, 'InternalError', internalError());
      result = 'error';
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.observe(review.kind.kind, review.operation, result, seconds);
    log.debug(
      {
        uid: review.uid,
        kind: review.kind.kind,
        name: review.name,
        operation: review.operation,
        user: review.userInfo?.username,
        allowed: verdict.allowed,
        message: verdict.allowed ? undefined : verdict.message,
      },
      'admission review',
    );
    send(res, 200, JSON.stringify(admissionResponse(review.uid, verdict)), 'application/json');
  };

  const server = https.createServer({ ...pair, minVersion: 'TLSv1.2' }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'webhook request failed');
      if (!res.headersSent) send(res, 500, 'internal error\n', 'text/plain; charset=utf-8');
      else res.destroy();
    });
  });
  // The API server waits at most timeoutSeconds (≤ 30); nothing legitimate takes longer.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen.port, opts.listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const watcher = opts.certDir
    ? watchKeyPairFiles(
        webhookKeyPairSource(opts.certDir),
        pair,
        (next) => server.setSecureContext({ ...next, minVersion: 'TLSv1.2' }),
        { log, pollMs: opts.certPollMs },
      )
    : undefined;
  const address = () => server.address() as AddressInfo;
  log.info(
    { host: opts.listen.host, port: address().port, certificate: opts.certDir ?? 'self-signed (127.0.0.1, localhost)' },
    'admission webhook listening',
  );

  return {
    address,
    url: (host = '127.0.0.1') => `https://${host.includes(':') ? `[${host}]` : host}:${address().port}${WEBHOOK_PATH}`,
    caPem,
    async stop() {
      watcher?.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = setTimeout(() => server.closeAllConnections(), 5_000);
      await closed;
      clearTimeout(deadline);
      log.info('admission webhook stopped');
    },
  };
}
