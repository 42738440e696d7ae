// The Masakari v1 REST calls the side-by-side run makes, identical for
// masakari-api 22.0.0 and our facade: both take the same Keystone token and
// the same bodies, so any difference in the end state is the engines'.
export interface ApiAnswer {
  status: number;
  body: unknown;
}

export type MasakariCall = (
  method: string,
  path: string,
  body?: unknown,
  /** instance-ha microversion; omitted = 1.0 (no progress details, no RPC call to masakari-engine). */
  microversion?: string,
) => Promise<ApiAnswer>;

/** Calls `${url}/v1…` with a fresh admin token from `token()` (cached by the caller). */
export function masakariCaller(url: string, token: () => Promise<string>): MasakariCall {
  return async (method, path, body, microversion) => {
    const headers: Record<string, string> = { 'x-auth-token': await token(), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (microversion) headers['openstack-api-version'] = `instance-ha ${microversion}`;
    const r = await fetch(`${url}/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // masakari-api may pause up to notification_delay_max (5 s) before answering a POST
      signal: AbortSignal.timeout(120_000),
    });
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // a plain-text error page stays text
    }
    return { status: r.status, body: parsed };
  };
}

function ok(what: string, r: ApiAnswer): ApiAnswer {
  if (r.status < 200 || r.status > 299) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

export interface SegmentHost {
  name: string;
  reserved?: boolean;
}

/** Creates a segment and its hosts; returns the segment uuid. */
export async function createSegment(
  api: MasakariCall,
  name: string,
  method: string,
  hosts: SegmentHost[],
): Promise<string> {
  const seg = ok(
    'create segment',
    await api('POST', '/segments', { segment: { name, recovery_method: method, service_type: 'COMPUTE' } }),
  ).body as { segment: { uuid: string } };
  for (const h of hosts) {
    ok(
      `create host ${h.name}`,
      await api('POST', `/segments/${seg.segment.uuid}/hosts`, {
        host: { name: h.name, type: 'COMPUTE', control_attributes: 'SSH', reserved: Boolean(h.reserved) },
      }),
    );
  }
  return seg.segment.uuid;
}

/** POSTs a COMPUTE_HOST notification; returns its uuid. */
export async function notifyHostDown(api: MasakariCall, host: string): Promise<string> {
  const r = ok(
    'create notification',
    await api('POST', '/notifications', {
      notification: {
        type: 'COMPUTE_HOST',
        hostname: host,
        generated_time: new Date().toISOString().replace(/\.\d+Z$/, ''),
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
    }),
  );
  return (r.body as { notification: { notification_uuid: string } }).notification.notification_uuid;
}

const FINAL = new Set(['finished', 'failed', 'ignored']);

/**
 * Polls GET /v1/notifications/{id} (microversion 1.0: cheap on both sides)
 * every `intervalMs` until a final status; returns the first time it was
 * seen (performance.now()) and the status. After `timeoutMs` it returns the
 * last status seen (e.g. `error`, waiting for a periodic retry), marked.
 */
export async function waitFinal(
  api: MasakariCall,
  id: string,
  timeoutMs: number,
  intervalMs = 250,
): Promise<{ status: string; at: number; timedOut: boolean }> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  for (;;) {
    const r = await api('GET', `/notifications/${id}`);
    const status = (r.body as { notification?: { status?: string } }).notification?.status ?? `HTTP ${r.status}`;
    const at = performance.now();
    last = status;
    if (FINAL.has(status)) return { status, at, timedOut: false };
    if (at > deadline) return { status: last, at, timedOut: true };
    await new Promise((res) => setTimeout(res, intervalMs));
  }
}
