// Simulator fidelity: every Nova request the engine made in the real-Nova
// scenarios (test/openstack, recorded with MASAKARI_RECORD_NOVA_TRANSCRIPT_DIR
// against Nova 34.0.0) is replayed, in order, against the simulator seeded
// with the same servers and services. Each answer must match real Nova's in
// status, in the body's field names (two levels deep; a list by all its
// elements) and, for errors, in the fault text.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator } from './server.ts';

const DIR = fileURLToPath(new URL('./testdata/real-nova-34', import.meta.url));

interface Transcript {
  nova: string;
  scenario: string;
  world: {
    /** The host whose nova-compute was killed (host failure); null for instance and process failures. */
    failedHost: string | null;
    hosts: string[];
    services: { uuid: string; host: string }[];
    /** Absent in recordings made before aggregates were captured. */
    aggregates?: { id: number; name: string; hosts: string[] }[];
    servers: {
      id: string;
      name: string;
      host: string;
      vm_state: string;
      task_state: string | null;
      locked: boolean;
      metadata: Record<string, string>;
    }[];
  };
  exchanges: {
    method: string;
    url: string;
    microversion: string | null;
    requestBody: unknown;
    status: number;
    responseBody: unknown;
  }[];
}

/** Field paths of a body, two levels deep; an array stands for the union of its elements ("servers[].id"). */
export function fieldPaths(body: unknown, prefix = '', depth = 2): string[] {
  if (depth === 0 || body === null || typeof body !== 'object') return [];
  // every element's fields: list order and per-status fields differ between runs
  if (Array.isArray(body)) return [...new Set(body.flatMap((e) => fieldPaths(e, `${prefix}[]`, depth)))].sort();
  const out: string[] = [];
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.push(p);
    out.push(...fieldPaths(v, p, depth - 1));
  }
  return out.sort();
}

/** The fault text of a Nova error body: {"badRequest": {"message": …, "code": 400}} and the like. */
export function faultText(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const inner = Object.values(body as Record<string, unknown>)[0];
  if (inner && typeof inner === 'object' && 'message' in inner) return String((inner as { message: unknown }).message);
  return undefined;
}

function transcripts(): Transcript[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Transcript);
}

test('there are recorded real-Nova transcripts to replay', () => {
  const all = transcripts();
  assert.ok(all.length > 0, `no transcripts in ${DIR}`);
  for (const t of all) assert.ok(t.exchanges.length > 0, `${t.scenario} recorded no exchanges`);
});

for (const t of transcripts()) {
  test(`the simulator answers like Nova ${t.nova}: ${t.scenario} (${t.exchanges.length} requests)`, async () => {
    const sim = await startSimulator({
      hosts: t.world.hosts,
      servers: t.world.servers.map((s) => ({
        id: s.id,
        name: s.name,
        host: s.host,
        metadata: s.metadata,
        vm_state: s.vm_state,
        task_state: s.task_state,
        locked: s.locked,
        project_id: 'admin',
      })),
      latencyMs: { evacuate: 0, stop: 0, start: 0, api: 0 },
    });
    try {
      // the services keep real Nova's uuids: the engine addresses them by uuid (2.53)
      for (const { uuid, host } of t.world.services) {
        const svc = [...sim.state.services.values()].find((s) => s.binary === 'nova-compute' && s.host === host);
        if (!svc) continue;
        sim.state.services.delete(svc.uuid);
        svc.uuid = uuid;
        sim.state.services.set(uuid, svc);
      }
      // the aggregates keep real Nova's ids: the engine addresses them by id
      for (const { id, name, hosts } of t.world.aggregates ?? []) {
        const agg = sim.state.addAggregate({ name, hosts });
        sim.state.aggregates.delete(agg.id);
        agg.id = id;
        sim.state.aggregates.set(id, agg);
      }
      if (t.world.failedHost) sim.state.failHost(t.world.failedHost);
      const auth = await fetch(`${sim.authUrl}/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: {
                user: {
                  name: sim.credentials.OS_USERNAME,
                  domain: { id: 'default' },
                  password: sim.credentials.OS_PASSWORD,
                },
              },
            },
            scope: { project: { name: 'admin', domain: { id: 'default' } } },
          },
        }),
      });
      const token = auth.headers.get('x-subject-token') ?? '';
      const diffs: string[] = [];
      for (const [i, x] of t.exchanges.entries()) {
        const r = await fetch(`${sim.url}/compute${x.url}`, {
          method: x.method,
          headers: {
            'x-auth-token': token,
            accept: 'application/json',
            ...(x.microversion ? { 'openstack-api-version': x.microversion } : {}),
            ...(x.requestBody === null ? {} : { 'content-type': 'application/json' }),
          },
          body: x.requestBody === null ? undefined : JSON.stringify(x.requestBody),
        });
        const text = await r.text();
        let body: unknown = null;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          body = text;
        }
        const what = `#${i} ${x.method} ${x.url}`;
        if (r.status !== x.status)
          diffs.push(`${what}: status ${r.status}, Nova ${x.status} ${JSON.stringify(x.responseBody)}`);
        // "progress" and "fault" appear only in some statuses; a poll can catch real Nova mid-move
        // where the simulator has already finished, so they count only when the statuses agree
        const status = (b: unknown) => (b as { server?: { status?: string } } | null)?.server?.status;
        const sameStatus = status(body) === status(x.responseBody);
        const stateful = (p: string) => !sameStatus && (p === 'server.progress' || p === 'server.fault');
        const want = fieldPaths(x.responseBody).filter((p) => !stateful(p));
        const got = new Set(fieldPaths(body).filter((p) => !stateful(p)));
        const missing = want.filter((p) => !got.has(p));
        const extra = [...got].filter((p) => !want.includes(p));
        if (r.status === x.status && (missing.length || extra.length)) {
          diffs.push(`${what}: fields missing ${JSON.stringify(missing)}, not in Nova ${JSON.stringify(extra)}`);
        }
        if (x.status >= 400 && faultText(body) !== faultText(x.responseBody)) {
          diffs.push(`${what}: fault "${faultText(body)}", Nova "${faultText(x.responseBody)}"`);
        }
      }
      assert.ok(diffs.length === 0, `${diffs.length} differences from real Nova:\n${diffs.join('\n')}`);
    } finally {
      await sim.stop();
    }
  });
}

test.run();
