import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../../testing/expect-error.ts';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenStackSession } from '../../openstack/index.ts';
import { startSimulator } from '../../../tools/simulator/server.ts';
import { masakariEndpoint, MasakariReader, parseHost, parseSegment, redacted, SourceError } from './source.ts';
import type { SourceAuth } from './source.ts';

const SEG_UUID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const HOST_UUID = (n: number) => `11111111-0000-4000-8000-${String(n).padStart(12, '0')}`;

function segment(n: number) {
  return {
    id: n,
    uuid: SEG_UUID(n),
    name: `seg-${n}`,
    service_type: 'COMPUTE',
    enabled: n % 2 === 0,
    description: n === 1 ? null : `segment ${n}`,
    recovery_method: 'auto',
    created_at: '2026-01-01T00:00:00.000000',
    updated_at: null,
    deleted_at: null,
    deleted: false,
  };
}

function host(n: number, segUuid: string) {
  return {
    id: n,
    uuid: HOST_UUID(n),
    name: `compute-${n}`,
    failover_segment_id: segUuid,
    type: 'COMPUTE',
    control_attributes: 'SSH',
    reserved: n === 2,
    on_maintenance: false,
    created_at: '2026-01-01T00:00:00.000000',
    updated_at: '2026-01-02T03:04:05.000000',
  };
}

interface Fake {
  url: string;
  requests: IncomingMessage[];
  close(): Promise<void>;
}

/**
 * A Masakari that pages like the real one (newest first, marker = id of the
 * last item seen) but caps every page at maxLimit items, as a deployment with
 * a small osapi_max_limit does.
 */
async function fakeMasakari(opts: {
  segments: number;
  maxLimit: number;
  status?: number;
  body?: string;
}): Promise<Fake> {
  const segments = Array.from({ length: opts.segments }, (_, i) => segment(i + 1));
  const hosts = segments.flatMap((s) => [host(s.id * 10 + 1, s.uuid), host(s.id * 10 + 2, s.uuid)]);
  const requests: IncomingMessage[] = [];
  const page = (items: Array<{ id: number }>, q: URLSearchParams) => {
    const sorted = [...items].sort((a, b) => b.id - a.id);
    const marker = q.get('marker');
    const start = marker === null ? 0 : sorted.findIndex((i) => i.id === Number(marker)) + 1;
    return sorted.slice(start, start + Math.min(Number(q.get('limit') ?? 1000), opts.maxLimit));
  };
  const server: Server = createServer((req, res) => {
    requests.push(req);
    const u = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'application/json');
    if (opts.status) {
      res.statusCode = opts.status;
      res.end(opts.body ?? '{}');
      return;
    }
    const hostsOf = /^\/v1\/segments\/([^/]+)\/hosts$/.exec(u.pathname);
    if (u.pathname === '/v1/segments') res.end(JSON.stringify({ segments: page(segments, u.searchParams) }));
    else if (hostsOf) {
      const mine = hosts.filter((h) => h.failover_segment_id === hostsOf[1]);
      res.end(JSON.stringify({ hosts: page(mine, u.searchParams) }));
    } else {
      res.statusCode = 404;
      res.end('{"itemNotFound": {"code": 404, "message": "Not found"}}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

function reader(url: string, auth: SourceAuth = { kind: 'none' }, pageSize = 3) {
  return new MasakariReader({
    url,
    microversion: '1.3',
    pageSize,
    timeoutMs: 5000,
    maxRetries: 0,
    insecure: false,
    auth,
  });
}

test('masakariEndpoint accepts the forms operators type', () => {
  for (const u of ['http://m:15868', 'http://m:15868/', 'http://m:15868/v1', 'http://m:15868/v1/']) {
    assert.is(masakariEndpoint(u), 'http://m:15868/v1', u);
  }
  assert.is(masakariEndpoint('https://cloud/instance-ha'), 'https://cloud/instance-ha/v1');
  assert.is(masakariEndpoint('http://m:15868/v1/3f2a9c1b0d4e4f5a/'), 'http://m:15868/v1');
  assert.is(redacted(masakariEndpoint('http://admin:secret@m:15868')), 'http://m:15868/v1');
  for (const bad of ['masakari:15868', 'ftp://m/', 'http://m/v1?x=1', '', 'http://m:15868/v1/%(tenant_id)s']) {
    assert.throws(
      () => masakariEndpoint(bad),
      (e: unknown) => e instanceof SourceError,
      bad,
    );
  }
});

test('reads every segment and host across pages capped below the asked limit, sorted by id', async () => {
  const fake = await fakeMasakari({ segments: 5, maxLimit: 2 });
  const r = reader(fake.url);
  try {
    const snap = await r.readAll();
    assert.is(snap.endpoint, `${fake.url}/v1`);
    assert.equal(
      snap.segments.map((e) => (e.segment as { id: number }).id),
      [1, 2, 3, 4, 5],
    );
    assert.equal(snap.segments[0]?.segment, {
      id: 1,
      uuid: SEG_UUID(1),
      name: 'seg-1',
      service_type: 'COMPUTE',
      recovery_method: 'auto',
      description: null,
      enabled: false,
      created_at: '2026-01-01T00:00:00.000000',
      updated_at: null,
    });
    assert.equal(snap.segments[2]?.hosts, [
      { ...strip(host(31, SEG_UUID(3))), segment_uuid: SEG_UUID(3) },
      { ...strip(host(32, SEG_UUID(3))), segment_uuid: SEG_UUID(3) },
    ]);
    // microversion on every request, and no token for a noauth2 deployment
    for (const req of fake.requests) {
      assert.is(req.headers['openstack-api-version'], 'instance-ha 1.3');
      assert.is(req.headers['x-auth-token'], undefined);
    }
    // 5 segments in pages of 2 → 3 pages and an empty one
    const segmentPages = fake.requests.filter((q) => q.url?.startsWith('/v1/segments?'));
    assert.equal(
      segmentPages.map((q) => q.url),
      [
        '/v1/segments?limit=3',
        '/v1/segments?limit=3&marker=4',
        '/v1/segments?limit=3&marker=2',
        '/v1/segments?limit=3&marker=1',
      ],
    );
  } finally {
    await r.close();
    await fake.close();
  }
});

function strip(h: ReturnType<typeof host>) {
  const { failover_segment_id: _s, ...rest } = h;
  return rest;
}

test('--os-token is sent as X-Auth-Token', async () => {
  const fake = await fakeMasakari({ segments: 1, maxLimit: 10 });
  const r = reader(fake.url, { kind: 'token', token: 'tok-123' });
  try {
    await r.readAll();
    assert.ok(fake.requests.length > 0);
    for (const req of fake.requests) assert.is(req.headers['x-auth-token'], 'tok-123');
  } finally {
    await r.close();
    await fake.close();
  }
});

test('with OS_* credentials, a Keystone token is sent', async () => {
  const sim = await startSimulator({});
  const fake = await fakeMasakari({ segments: 1, maxLimit: 10 });
  const session = createOpenStackSession(sim.clientCredentials, { timeoutMs: 5000, maxRetries: 0 });
  const r = reader(fake.url, { kind: 'keystone', session });
  try {
    await r.readAll();
    const tokens = fake.requests.map((q) => q.headers['x-auth-token']);
    assert.ok(tokens.length >= 2);
    assert.ok(
      tokens.every((tok) => typeof tok === 'string' && tok.length > 0),
      JSON.stringify(tokens),
    );
  } finally {
    await r.close();
    await session.close();
    await fake.close();
    await sim.stop();
  }
});

test('a refused read says what to do about it', async () => {
  const cases: Array<[number, string, RegExp]> = [
    [
      401,
      '{"error": {"message": "The request you have made requires authentication."}}',
      /HTTP 401: The request you have made requires authentication\..*pass --os-token, or set OS_CLOUD/,
    ],
    [
      403,
      '{"forbidden": {"code": 403, "message": "Policy doesn\'t allow"}}',
      /HTTP 403: Policy doesn't allow.*admin token/,
    ],
    [
      406,
      '{"computeFault": {"code": 406, "message": "Version 1.3 is not supported by the API."}}',
      /try --microversion 1\.2/,
    ],
  ];
  for (const [status, body, message] of cases) {
    const fake = await fakeMasakari({ segments: 1, maxLimit: 10, status, body });
    const r = reader(fake.url);
    try {
      assert.match((await rejection(r.readAll(), SourceError)).message, message);
    } finally {
      await r.close();
      await fake.close();
    }
  }
});

test('an unreachable Masakari is a SourceError naming the endpoint', async () => {
  const fake = await fakeMasakari({ segments: 0, maxLimit: 1 });
  await fake.close();
  const r = reader(fake.url);
  try {
    assert.match((await rejection(r.readAll(), SourceError)).message, `${fake.url}/v1 unreachable`);
  } finally {
    await r.close();
  }
});

test('records that are not Masakari-shaped are invalid, one by one, with what identifies them', () => {
  const bad = parseSegment({ ...segment(3), enabled: undefined, recovery_method: 'manual' });
  assert.equal(bad, {
    invalid:
      'recovery_method "manual" is not one of auto, reserved_host, auto_priority, rh_priority; enabled is missing (the server did not answer at microversion 1.2 or later)',
    uuid: SEG_UUID(3),
    name: 'seg-3',
    id: 3,
  });
  assert.equal(parseSegment({ ...segment(1), uuid: 'x' }), {
    invalid: 'uuid is not a uuid ("x")',
    uuid: 'x',
    name: 'seg-1',
    id: 1,
  });
  const moved = parseHost(host(5, SEG_UUID(1)), SEG_UUID(2));
  assert.match((moved as { invalid: string }).invalid, /failover_segment_id .* is not the segment it was listed under/);
  assert.match(
    (parseHost({ ...host(5, SEG_UUID(1)), reserved: 'yes' }, SEG_UUID(1)) as { invalid: string }).invalid,
    /reserved is not a boolean/,
  );
});

test.run();
