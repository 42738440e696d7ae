// A tiny method + path-pattern router for the simulator's three APIs.

import type { IncomingHttpHeaders } from 'node:http';

/** What the server puts in SimRequest.body when the body is not valid JSON. */
export const BAD_JSON = Symbol('bad-json');

export interface SimRequest {
  method: string;
  /** Path below the API's prefix, e.g. '/servers/detail'. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there is none. */
  body: unknown;
  /** Origin the client used, e.g. http://127.0.0.1:4321 (for links). */
  origin: string;
}

export interface SimResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (req: SimRequest, params: Record<string, string>) => SimResponse | Promise<SimResponse>;

interface Route<H> {
  method: string;
  parts: string[];
  handler: H;
}

export type RouteMatch<H = Handler> =
  { handler: H; params: Record<string, string> } | { methodNotAllowed: true } | undefined;

export class Router<H = Handler> {
  private readonly routes: Route<H>[] = [];

  add(method: string, pattern: string, handler: H): this {
    this.routes.push({ method, parts: split(pattern), handler });
    return this;
  }

  match(method: string, path: string): RouteMatch<H> {
    const parts = split(path);
    let pathMatched = false;
    for (const r of this.routes) {
      const params = matchParts(r.parts, parts);
      if (!params) continue;
      pathMatched = true;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET')) return { handler: r.handler, params };
    }
    return pathMatched ? { methodNotAllowed: true } : undefined;
  }
}

function split(path: string): string[] {
  return path.split('/').filter(Boolean);
}

function matchParts(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const v = parts[i] as string;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(v);
      } catch {
        return undefined; // malformed %-escape: no route, so a 404 rather than a crash
      }
    } else if (p !== v) return undefined;
  }
  return params;
}
