// Runs a scripted request sequence against one Masakari endpoint and records
// normalised exchanges, so two implementations can be compared line by line.

export interface Step {
  name: string;
  method: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** May contain ${var} placeholders filled from earlier captures. */
  path: string;
  version?: string;
  headers?: Record<string, string>;
  /** JSON body (object), or a raw string sent as-is. */
  body?: unknown;
  raw?: string;
  /** var name → dotted path into the JSON response, e.g. 'segment.uuid'. */
  capture?: Record<string, string>;
}

export interface Exchange {
  name: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers whose presence and normalised value a client could notice. */
const COMPARED_HEADERS = ['content-type', 'openstack-api-version', 'vary', 'x-openstack-request-id'];

export async function runSequence(baseUrl: string, steps: Step[]): Promise<Exchange[]> {
  const vars: Record<string, string> = {};
  const out: Exchange[] = [];
  for (const s of steps) {
    const p = s.path.replace(/\$\{(\w+)\}/g, (_, v: string) => vars[v] ?? `MISSING_${v}`);
    const headers: Record<string, string> = { accept: 'application/json', ...(s.headers ?? {}) };
    if (s.version) headers['openstack-api-version'] = `instance-ha ${s.version}`;
    let body: string | undefined;
    if (s.raw !== undefined) body = s.raw;
    else if (s.body !== undefined) body = JSON.stringify(s.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
    const r = await fetch(baseUrl + p, { method: s.method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await r.text();
    const h: Record<string, string> = {};
    for (const k of COMPARED_HEADERS) {
      const v = r.headers.get(k);
      if (v !== null) h[k] = v;
    }
    if (s.capture && r.headers.get('content-type')?.includes('json')) {
      const json = JSON.parse(text) as unknown;
      for (const [v, jp] of Object.entries(s.capture)) {
        const val = jp.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], json);
        if (val !== undefined && val !== null) vars[v] = String(val);
      }
    }
    out.push({ name: s.name, status: r.status, headers: h, body: text });
  }
  return out;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP = /\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?/g;

/**
 * Replaces what legitimately differs between two deployments: uuids (numbered
 * in order of first appearance), request ids, host:port, and timestamp digits
 * (the shape — separators, fraction, zone — is kept, because clients parse it).
 * Integer ids are kept: both sides start from an empty store.
 */
export function normalise(exchanges: Exchange[], baseUrl: string): Exchange[] {
  const uuids = new Map<string, string>();
  const mapUuid = (u: string) => {
    if (!uuids.has(u)) uuids.set(u, `<uuid-${uuids.size + 1}>`);
    return uuids.get(u) as string;
  };
  const host = new URL(baseUrl).host;
  const fix = (s: string) =>
    s
      .split(host)
      .join('<host>')
      .replace(/req-[0-9a-f-]{36}/g, 'req-<id>')
      .replace(UUID, mapUuid)
      .replace(TIMESTAMP, (t) => t.replace(/\d/g, 'd'));
  return exchanges.map((e) => ({
    name: e.name,
    status: e.status,
    headers: Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k, fix(v)])),
    body: fix(e.body),
  }));
}
