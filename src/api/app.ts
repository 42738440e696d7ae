// The Masakari v1 REST facade as an express application, mounted as paste's
// URLMap mounts the reference's applications (etc/masakari/api-paste.ini):
//   /v1/openapi.json  this facade's own OpenAPI document (GET)
//   /v1               the paste pipeline of src/api/pipeline.ts, ending in
//                     the controllers of src/api/controllers/
//   /healthcheck      oslo.middleware's Healthcheck (any path below it)
//   anything else     the versions document (200 at '/', 300 elsewhere), no request id
// Controllers run Masakari's order inside each operation: body schema, then
// policy, then the rules in src/domain/ha-service.ts.

import express from 'express';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { HaService } from '../domain/ha-service.ts';
import type { Repository } from '../domain/repository.ts';
import type { AuthSettings } from './auth.ts';
import { createControllers, rootVersionsReply } from './controllers/index.ts';
import { healthcheckReply } from './healthcheck.ts';
import { createApiMetrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createPipeline, MAX_REQUEST_BODY_SIZE } from './pipeline.ts';
import type { PolicyEnforcer } from './policy.ts';
import { jsonReply } from './replies.ts';
import { headerValue } from './wsgi-request.ts';

export { MAX_REQUEST_BODY_SIZE } from './pipeline.ts';

export interface ApiAppOptions {
  service: HaService;
  repo: Repository;
  config: {
    DEFAULT: { osapi_max_limit: number; osapi_masakari_link_prefix?: string | null };
    oslo_middleware?: { enable_proxy_headers_parsing: boolean };
  };
  auth: AuthSettings;
  policy: PolicyEnforcer;
  log: Logger;
  metrics: Registry;
  /** Readiness for /healthcheck (the repository's cache is synced). */
  ready?: () => boolean;
  maxRequestBodySize?: number;
}

export function createApiApp(opts: ApiAppOptions): Express {
  const { service, repo, policy, log, ready } = opts;
  const openapi = buildOpenApiDocument();
  const limit = opts.maxRequestBodySize ?? MAX_REQUEST_BODY_SIZE;
  const pipeline = createPipeline({
    auth: opts.auth,
    policy,
    repo,
    controllers: createControllers({ service, repo, policy }),
    log,
    metrics: createApiMetrics(opts.metrics),
    limit,
    links: {
      proxyHeaders: opts.config.oslo_middleware?.enable_proxy_headers_parsing ?? false,
      linkPrefix: opts.config.DEFAULT.osapi_masakari_link_prefix ?? null,
    },
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  // Paste's URLMap and Routes compare paths exactly.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);

  app.use(pipeline.wsgiServer);
  app.get('/v1/openapi.json', (req, res, next) => {
    // express routes HEAD to GET handlers; Masakari's router has no HEAD route, so HEAD goes on to /v1.
    if (req.method !== 'GET') return next('route');
    pipeline.answer(res, jsonReply(200, openapi), '/v1/openapi.json');
  });
  app.use('/v1', ...pipeline.v1);
  app.use('/healthcheck', (_req, res) => {
    const req = pipeline.requestOf(res);
    const reply = healthcheckReply(req.method, headerValue(req, 'accept'), ready ? ready() : true);
    pipeline.answer(res, reply, '/healthcheck');
  });
  app.use(async (_req, res) => {
    const req = pipeline.requestOf(res);
    pipeline.answer(res, await rootVersionsReply(req, limit), req.path === '/' ? '/' : 'choices');
  });
  app.use(pipeline.faultWrap);
  return app;
}
