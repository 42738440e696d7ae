// etcd v3 through its HTTP/JSON gateway (/v3/kv/*, served on the client URL
// by default): read the bytes the API server stored for an object, and write
// many objects in a few transactions. For benchmarks that need more objects
// than the API server can create in their time budget (bench/scale); never
// used by the operator, which only ever talks to the API server.
//
// Keys are the API server's storage paths (its default --etcd-prefix
// /registry): core kinds at /registry/<plural>/<namespace>/<name>, other
// groups (custom resources included) at /registry/<group>/<plural>/<namespace>/<name>.
import type { ResourceRef } from '../../src/k8s/client.ts';

/** etcd's default --max-txn-ops. */
export const MAX_TXN_OPS = 128;
/** Under etcd's default --max-request-bytes (1.5 MiB) once base64 (4/3) and the JSON around it are added. */
export const MAX_TXN_BYTES = 1024 * 1024;

const b64 = (b: Uint8Array | string) => Buffer.from(b).toString('base64');

/** The key the API server stores `name` of `ref` under. */
export function storageKey(ref: ResourceRef, namespace: string, name: string): string {
  const kind = ref.group ? `${ref.group}/${ref.plural}` : ref.plural;
  return ref.namespaced ? `/registry/${kind}/${namespace}/${name}` : `/registry/${kind}/${name}`;
}

async function call(etcdUrl: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${etcdUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`etcd ${path}: ${r.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The stored value of `key`, or undefined if there is none. */
export async function etcdGet(etcdUrl: string, key: string): Promise<Buffer | undefined> {
  const res = await call(etcdUrl, '/v3/kv/range', { key: b64(key) });
  const kv = (res.kvs as Array<{ value?: string }> | undefined)?.[0];
  return kv ? Buffer.from(kv.value ?? '', 'base64') : undefined;
}

/** etcd's current revision (what the API server calls the latest resourceVersion). */
export async function etcdRevision(etcdUrl: string): Promise<string> {
  const res = await call(etcdUrl, '/v3/kv/range', { key: b64('/'), count_only: true });
  return String((res.header as { revision?: string } | undefined)?.revision ?? '0');
}

/** How many keys start with `prefix` (a count-only range). */
export async function etcdCount(etcdUrl: string, prefix: string): Promise<number> {
  const end = Buffer.from(prefix);
  end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
  const res = await call(etcdUrl, '/v3/kv/range', { key: b64(prefix), range_end: b64(end), count_only: true });
  return Number(res.count ?? 0);
}

export interface Put {
  key: string;
  value: Uint8Array | string;
}

/** Groups puts into transactions of at most MAX_TXN_OPS puts and about MAX_TXN_BYTES. */
export function txnBatches(puts: readonly Put[]): Put[][] {
  const batches: Put[][] = [];
  let current: Put[] = [];
  let bytes = 0;
  for (const p of puts) {
    const size = p.key.length + (typeof p.value === 'string' ? Buffer.byteLength(p.value) : p.value.length);
    if (current.length && (current.length >= MAX_TXN_OPS || bytes + size > MAX_TXN_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(p);
    bytes += size;
  }
  if (current.length) batches.push(current);
  return batches;
}

/**
 * Writes `puts` as one transaction that succeeds only if none of the keys
 * exists yet (create, never overwrite: a clash means a seeding bug, not an
 * object to replace).
 */
export async function etcdCreateAll(etcdUrl: string, puts: readonly Put[]): Promise<void> {
  const res = await call(etcdUrl, '/v3/kv/txn', {
    compare: puts.map((p) => ({ key: b64(p.key), target: 'CREATE', result: 'EQUAL', create_revision: '0' })),
    success: puts.map((p) => ({ request_put: { key: b64(p.key), value: b64(p.value) } })),
  });
  if (res.succeeded !== true) throw new Error(`etcd txn of ${puts.length} creates: a key already exists`);
}
