// Test harness: the facade over the in-memory repository with a fake Nova
// host check, listening on 127.0.0.1, and a tiny HTTP client that returns
// status, headers and the exact body text.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createApiApp } from '../app.ts';
import type { AuthSettings } from '../auth.ts';
import { PolicyEnforcer } from '../policy.ts';
import type { PolicyOptions } from '../policy.ts';
import { HaService } from '../../domain/ha-service.ts';
import type { ComputeHostChecker } from '../../domain/compute-host-checker.ts';
import { MemoryRepository } from '../../domain/testing/memory-repository.ts';
import type { ApiRepository } from '../component.ts';

/** Nova as a set of known compute hosts; `fail` makes every call throw the given error. */
export class FakeComputeHosts implements ComputeHostChecker {
  readonly known = new Set<string>();
  fail: Error | undefined;
  calls: string[] = [];
  constructor(names: string[] = []) {
    for (const n of names) this.known.add(n);
  }
  async exists(name: string): Promise<boolean> {
    this.calls.push(name);
    if (this.fail) throw this.fail;
    return this.known.has(name);
  }
}

/** The in-memory repository as the api component's store: started, stopped and ready at once. */
export function memoryStore(): ApiRepository {
  const repo = new MemoryRepository() as MemoryRepository & ApiRepository;
  repo.start = async () => undefined;
  repo.stop = () => undefined;
  repo.ready = () => true;
  return repo;
}

export interface HarnessOptions {
  auth?: AuthSettings;
  policy?: PolicyOptions;
  computeHosts?: string[];
  maxLimit?: number;
  duplicateWindow?: number;
  /** [oslo_middleware] enable_proxy_headers_parsing. */
  proxyHeaders?: boolean;
  /** [DEFAULT] osapi_masakari_link_prefix. */
  linkPrefix?: string;
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface Harness {
  repo: MemoryRepository;
  compute: FakeComputeHosts;
  metrics: Registry;
  url: string;
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<HttpResult>;
  close(): Promise<void>;
}

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const repo = new MemoryRepository();
  const compute = new FakeComputeHosts(o.computeHosts ?? ['compute-1', 'compute-2', 'compute-3']);
  const config = {
    osapi_max_limit: o.maxLimit ?? 1000,
    duplicate_notification_detection_interval: o.duplicateWindow ?? 180,
  };
  const service = new HaService(repo, compute, config);
  const metrics = new Registry();
  const app = createApiApp({
    service,
    repo,
    config: {
      DEFAULT: { ...config, osapi_masakari_link_prefix: o.linkPrefix ?? null },
      oslo_middleware: { enable_proxy_headers_parsing: o.proxyHeaders ?? false },
    },
    auth: o.auth ?? { strategy: 'noauth2' },
    policy: new PolicyEnforcer(o.policy ?? {}),
    log: pino({ level: 'silent' }),
    metrics,
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    repo,
    compute,
    metrics,
    url,
    request(method, path, ro = {}) {
      return new Promise((resolve, reject) => {
        const payload = ro.raw ?? (ro.body === undefined ? undefined : JSON.stringify(ro.body));
        const headers: Record<string, string> = {
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...ro.headers,
        };
        if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
        const req = http.request(`${url}${path}`, { method, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch (_e) {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
        });
        req.on('error', reject);
        if (payload !== undefined) req.write(payload);
        req.end();
      });
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
