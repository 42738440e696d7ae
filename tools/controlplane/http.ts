// Minimal HTTP(S) client for bootstrapping the control plane: health polls,
// CRD installation, discovery. It runs before any kubeconfig exists, so it
// takes the CA and the bearer token directly. Every request has a timeout.
import { request as httpRequestRaw } from 'node:http';
import { request as httpsRequestRaw } from 'node:https';
import { systemClock } from '../../src/time/clock.ts';
import { fixedSchedule, pollUntil, PollTimeout } from '../../src/time/poll.ts';

export interface HttpOptions {
  method?: string;
  /** PEM of the CA that signed the server certificate (https only). */
  ca?: string;
  token?: string;
  body?: unknown;
  timeoutMs?: number;
}

export interface HttpResult {
  status: number;
  body: string;
}

export function httpRequest(url: string, opts: HttpOptions = {}): Promise<HttpResult> {
  const target = new URL(url);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  const send = target.protocol === 'https:' ? httpsRequestRaw : httpRequestRaw;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      // agent: false so no keep-alive socket outlives the request.
      { method: opts.method ?? 'GET', headers, ca: opts.ca, agent: false, timeout: opts.timeoutMs ?? 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${opts.method ?? 'GET'} ${url}: no answer within ${opts.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Calls probe every intervalMs until it returns a value other than undefined,
 * or throws PollTimeout (naming the last error) once timeoutMs has passed. A
 * probe that throws counts as "not yet"; abort() may end the wait early with
 * its own error (e.g. the process died).
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs?: number; abort?: () => Error | undefined },
): Promise<T> {
  let lastError = '';
  const tolerantProbe = async (): Promise<T | undefined> => {
    const aborted = opts.abort?.();
    if (aborted) throw aborted;
    try {
      return await probe();
    } catch (e) {
      lastError = e instanceof Error ? e.message : String(e);
      return undefined;
    }
  };
  const schedule = fixedSchedule(opts.intervalMs ?? 100, opts.timeoutMs);
  try {
    return await pollUntil(what, tolerantProbe, schedule, systemClock, new AbortController().signal);
  } catch (e) {
    if (e instanceof PollTimeout && lastError)
      throw new PollTimeout(`${what} (last error: ${lastError})`, opts.timeoutMs);
    throw e;
  }
}
