// Reads every failover segment and every host of a running Masakari through
// its v1 REST API: GET /v1/segments and GET /v1/segments/{uuid}/hosts, paged
// with limit and marker (the integer id of the last item) until a page comes
// back empty, at microversion 1.2 or 1.3 so a segment's `enabled` is known.
// Every request has a deadline and bounded retries (src/openstack/http.ts).
// Records that do not look like Masakari's are returned as invalid, one by
// one; a failed request aborts the whole read (a partial snapshot would make
// the import report present objects as missing).
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { HttpTransport } from '../../openstack/http.ts';
import type { HttpResponse } from '../../openstack/http.ts';
import type { OpenStackSession } from '../../openstack/session.ts';
import type { RecoveryMethod } from '../../model/types.ts';
import type { SourceHost, SourceSegment } from '../../store/index.ts';
import type { Microversion } from './args.ts';

/** More pages than this for one collection means the server ignores the marker; stop rather than loop. */
const MAX_PAGES = 100_000;
const RECOVERY_METHODS: readonly string[] = ['auto', 'reserved_host', 'auto_priority', 'rh_priority'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class SourceError extends Error {}

/** A source record that cannot be imported, with whatever identifies it. */
export interface InvalidRecord {
  invalid: string;
  uuid?: string;
  name?: string;
  id?: number;
}

export interface SourceSegmentEntry {
  segment: SourceSegment | InvalidRecord;
  hosts: Array<SourceHost | InvalidRecord>;
}

export interface SourceSnapshot {
  /** The v1 endpoint read, without credentials. */
  endpoint: string;
  segments: SourceSegmentEntry[];
}

export type SourceAuth =
  { kind: 'none' } | { kind: 'token'; token: string } | { kind: 'keystone'; session: OpenStackSession };

export interface SourceOptions {
  url: string;
  microversion: Microversion;
  pageSize: number;
  timeoutMs: number;
  maxRetries: number;
  insecure: boolean;
  /** CA bundle for https (OS_CACERT); the Keystone session has its own from the credentials. */
  cacert?: string | null;
  auth: SourceAuth;
}

export const isInvalid = (r: object): r is InvalidRecord => 'invalid' in r;

/**
 * The v1 endpoint for what an operator types: http://host:15868,
 * http://host:15868/, http://host:15868/v1 and .../v1/ all give
 * http://host:15868/v1; a path prefix (https://cloud/instance-ha) is kept,
 * and a project id copied from the catalog (http://host:15868/v1/<project id>) is dropped.
 */
export function masakariEndpoint(url: string): string {
  if (!URL.canParse(url)) throw new SourceError(`--from must be an http(s) URL, got ${JSON.stringify(url)}`);
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new SourceError(`--from must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (u.search || u.hash) throw new SourceError(`--from must not have a query or fragment: ${JSON.stringify(url)}`);
  const path = u.pathname.replace(/\/+$/, '');
  if (/%\(|%25\(/.test(path)) {
    throw new SourceError(`--from still has a catalog template in it (%(tenant_id)s): ${JSON.stringify(url)}`);
  }
  // The catalog's form .../v1/<project id> is read without the project id: Masakari's handlers
  // ignore it, but refuse it (400) unless it is the token's project, which an admin's need not be.
  const v1 = /^(.*\/v1)(\/[0-9a-f-]+)?$/i.exec(path);
  u.pathname = v1 ? (v1[1] as string) : `${path}/v1`;
  return u.toString().replace(/\/+$/, '');
}

/** The endpoint without user:password, for messages and the imported-from annotation. */
export function redacted(endpoint: string): string {
  const u = new URL(endpoint);
  u.username = '';
  u.password = '';
  return u.toString().replace(/\/+$/, '');
}

/** Masakari's fault text: {"badRequest": {"code": 400, "message": "..."}} and the like. */
function faultMessage(res: HttpResponse): string {
  const body = res.body;
  if (body && typeof body === 'object') {
    for (const v of Object.values(body as Record<string, unknown>)) {
      if (v && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string') {
        return (v as { message: string }).message;
      }
    }
  }
  return res.text.trim().slice(0, 300) || '(empty body)';
}

function describeFailure(res: HttpResponse, what: string, microversion: string): string {
  const base = `${what}: HTTP ${res.status}: ${faultMessage(res)}`;
  if (res.status === 401) {
    return `${base} (this Masakari requires authentication: pass --os-token, or set OS_CLOUD / OS_AUTH_URL and the other OS_* credentials)`;
  }
  if (res.status === 403) return `${base} (listing every segment and host needs an admin token)`;
  if (res.status === 406)
    return `${base} (this Masakari does not serve microversion ${microversion}; try --microversion 1.2)`;
  return base;
}

type Json = Record<string, unknown>;

function str(r: Json, key: string, problems: string[], opts: { nullable?: boolean } = {}): string | null {
  const v = r[key];
  if (typeof v === 'string') return v;
  if (opts.nullable && (v === null || v === undefined)) return null;
  problems.push(`${key} is ${v === undefined ? 'missing' : `not a string (${JSON.stringify(v)})`}`);
  return '';
}

function bool(r: Json, key: string, problems: string[], hint = ''): boolean {
  const v = r[key];
  if (typeof v === 'boolean') return v;
  problems.push(`${key} is ${v === undefined ? 'missing' : `not a boolean (${JSON.stringify(v)})`}${hint}`);
  return false;
}

function identity(r: Json): Pick<InvalidRecord, 'uuid' | 'name' | 'id'> {
  return {
    ...(typeof r.uuid === 'string' ? { uuid: r.uuid } : {}),
    ...(typeof r.name === 'string' ? { name: r.name } : {}),
    ...(Number.isSafeInteger(r.id) ? { id: r.id as number } : {}),
  };
}

function idAndUuid(r: Json, problems: string[]): { id: number; uuid: string } {
  const id = r.id;
  if (!Number.isSafeInteger(id) || (id as number) < 1)
    problems.push(`id is not a positive integer (${JSON.stringify(id)})`);
  const uuid = typeof r.uuid === 'string' ? r.uuid : '';
  if (!UUID_RE.test(uuid)) problems.push(`uuid is not a uuid (${JSON.stringify(r.uuid)})`);
  return { id: id as number, uuid: uuid.toLowerCase() };
}

export function parseSegment(raw: unknown): SourceSegment | InvalidRecord {
  if (!raw || typeof raw !== 'object') return { invalid: `segment is not an object: ${JSON.stringify(raw)}` };
  const r = raw as Json;
  const problems: string[] = [];
  const { id, uuid } = idAndUuid(r, problems);
  const recovery = str(r, 'recovery_method', problems) ?? '';
  if (!RECOVERY_METHODS.includes(recovery))
    problems.push(`recovery_method ${JSON.stringify(recovery)} is not one of ${RECOVERY_METHODS.join(', ')}`);
  const segment: SourceSegment = {
    id,
    uuid,
    name: str(r, 'name', problems) ?? '',
    service_type: str(r, 'service_type', problems) ?? '',
    recovery_method: recovery as RecoveryMethod,
    description: str(r, 'description', problems, { nullable: true }),
    enabled: bool(r, 'enabled', problems, ' (the server did not answer at microversion 1.2 or later)'),
    created_at: str(r, 'created_at', problems, { nullable: true }),
    updated_at: str(r, 'updated_at', problems, { nullable: true }),
  };
  return problems.length ? { invalid: problems.join('; '), ...identity(r) } : segment;
}

export function parseHost(raw: unknown, segmentUuid: string): SourceHost | InvalidRecord {
  if (!raw || typeof raw !== 'object') return { invalid: `host is not an object: ${JSON.stringify(raw)}` };
  const r = raw as Json;
  const problems: string[] = [];
  const { id, uuid } = idAndUuid(r, problems);
  const listedUnder = str(r, 'failover_segment_id', problems);
  if (listedUnder !== null && listedUnder.toLowerCase() !== segmentUuid) {
    problems.push(
      `failover_segment_id ${JSON.stringify(listedUnder)} is not the segment it was listed under (${segmentUuid})`,
    );
  }
  const host: SourceHost = {
    id,
    uuid,
    name: str(r, 'name', problems) ?? '',
    segment_uuid: segmentUuid,
    type: str(r, 'type', problems) ?? '',
    control_attributes: str(r, 'control_attributes', problems) ?? '',
    reserved: bool(r, 'reserved', problems),
    on_maintenance: bool(r, 'on_maintenance', problems),
    created_at: str(r, 'created_at', problems, { nullable: true }),
    updated_at: str(r, 'updated_at', problems, { nullable: true }),
  };
  return problems.length ? { invalid: problems.join('; '), ...identity(r) } : host;
}

export class MasakariReader {
  readonly endpoint: string;
  private readonly transport?: HttpTransport;
  private readonly agent?: Agent;

  constructor(private readonly opts: SourceOptions) {
    this.endpoint = masakariEndpoint(opts.url);
    if (opts.auth.kind !== 'keystone') {
      this.agent = new Agent({
        connections: 4,
        connect: {
          ...(opts.cacert ? { ca: readFileSync(opts.cacert, 'utf8') } : {}),
          rejectUnauthorized: !opts.insecure,
          timeout: Math.min(opts.timeoutMs, 10_000),
        },
      });
      this.transport = new HttpTransport({
        dispatcher: this.agent,
        timeoutMs: opts.timeoutMs,
        maxRetries: opts.maxRetries,
      });
    }
  }

  /** Every segment with its hosts, segments in ascending id order, hosts likewise. */
  async readAll(): Promise<SourceSnapshot> {
    const segments = (await this.listAll('/segments', 'segments', 'segments')).map(parseSegment);
    const entries: SourceSegmentEntry[] = [];
    for (const segment of sortById(segments)) {
      const hosts = isInvalid(segment)
        ? []
        : (await this.listAll(`/segments/${segment.uuid}/hosts`, 'hosts', `hosts of segment ${segment.uuid}`)).map(
            (h) => parseHost(h, segment.uuid),
          );
      entries.push({ segment, hosts: sortById(hosts) });
    }
    return { endpoint: redacted(this.endpoint), segments: entries };
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }

  private async listAll(path: string, key: string, what: string): Promise<unknown[]> {
    const out: unknown[] = [];
    const seen = new Set<string>();
    let marker: number | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = `limit=${this.opts.pageSize}${marker === undefined ? '' : `&marker=${marker}`}`;
      const body = await this.get(`${path}?${query}`, what);
      const items = (body as Json | undefined)?.[key];
      if (!Array.isArray(items)) {
        throw new SourceError(
          `${what}: the answer has no "${key}" list; is ${redacted(this.endpoint)} a Masakari v1 API?`,
        );
      }
      if (items.length === 0) return out;
      let advanced = false;
      for (const item of items) {
        const r = (item ?? {}) as Json;
        const key = String(r.uuid ?? r.id);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(item);
        advanced = true;
      }
      const lastId = ((items[items.length - 1] ?? {}) as Json).id;
      if (!advanced)
        throw new SourceError(
          `${what}: page after marker ${marker} repeats earlier items; the server ignores the marker`,
        );
      if (!Number.isSafeInteger(lastId))
        throw new SourceError(`${what}: cannot page on, the last item has no integer id (${JSON.stringify(lastId)})`);
      marker = lastId as number;
    }
    throw new SourceError(`${what}: more than ${MAX_PAGES} pages; the server does not honour limit/marker`);
  }

  private async get(path: string, what: string): Promise<unknown> {
    const headers = { 'openstack-api-version': `instance-ha ${this.opts.microversion}` };
    const pathTemplate = path.replace(/[0-9a-f-]{32,36}/gi, '{uuid}').replace(/\?.*$/, '');
    let res: HttpResponse;
    try {
      if (this.opts.auth.kind === 'keystone') {
        res = await this.opts.auth.session.request({
          service: 'instance-ha',
          method: 'GET',
          baseUrl: this.endpoint,
          path,
          pathTemplate,
          headers,
        });
      } else {
        const token: Record<string, string> =
          this.opts.auth.kind === 'token' ? { 'x-auth-token': this.opts.auth.token } : {};
        res = await this.transport!.send({
          service: 'instance-ha',
          method: 'GET',
          url: this.endpoint + path,
          pathTemplate,
          headers: { ...headers, ...token },
        });
      }
    } catch (e) {
      throw new SourceError(`${what}: ${redacted(this.endpoint)} unreachable: ${(e as Error).message}`, { cause: e });
    }
    if (res.status !== 200) throw new SourceError(describeFailure(res, what, this.opts.microversion));
    if (res.body === undefined) throw new SourceError(`${what}: the answer is not JSON: ${res.text.slice(0, 200)}`);
    return res.body;
  }
}

function sortById<T extends { id?: number } | SourceSegment | SourceHost | InvalidRecord>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.id ?? Number.MAX_SAFE_INTEGER) - (b.id ?? Number.MAX_SAFE_INTEGER));
}
