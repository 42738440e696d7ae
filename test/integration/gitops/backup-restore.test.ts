// Backup and restore as docs/operations.md ("Backup and restore") describes
// it for Velero: the three kinds with their status, plus the bookkeeping
// ConfigMaps (label masakari.openkeel.io/role), restored into an empty
// namespace before the operator starts there. The Masakari API must then give
// the same answers as before: the restored name claims are re-adopted by the
// restored objects (src/store/claims.ts), and created_at comes from
// status.createdAt, not from the reset metadata.creationTimestamp.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { LABELS } from '../../../src/model/constants.ts';
import type { OperatorEnv } from '../webhook/support.ts';
import { operatorEnv } from '../webhook/support.ts';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string; annotations?: Record<string, string> };
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

const t = suite<{ source?: OperatorEnv; restored?: OperatorEnv }>('backup and restore', {});
t.after(async (ctx) => {
  await ctx.source?.close();
  await ctx.restored?.close();
});

const KINDS = ['failoversegments', 'hahosts', 'notifications'];

/** The answers a Masakari client gets (list and show of every object). */
async function answers(env: OperatorEnv): Promise<unknown[]> {
  const out: unknown[] = [];
  const segments = await env.rest('GET', '/v1/segments');
  out.push(segments.json);
  for (const s of segments.json.segments as { uuid: string }[]) {
    out.push((await env.rest('GET', `/v1/segments/${s.uuid}`)).json);
    const hosts = await env.rest('GET', `/v1/segments/${s.uuid}/hosts`);
    out.push(hosts.json);
    for (const h of hosts.json.hosts as { uuid: string }[]) {
      out.push((await env.rest('GET', `/v1/segments/${s.uuid}/hosts/${h.uuid}`)).json);
    }
  }
  const notifications = await env.rest('GET', '/v1/notifications');
  out.push(notifications.json);
  for (const n of notifications.json.notifications as { notification_uuid: string }[]) {
    out.push((await env.rest('GET', `/v1/notifications/${n.notification_uuid}`)).json);
  }
  return out;
}

/** What a backup holds: `kubectl get -o json` of the kinds and of the role-labelled ConfigMaps. */
async function backup(env: OperatorEnv): Promise<Obj[]> {
  const objects: Obj[] = [];
  for (const resource of KINDS) {
    const r = await env.kubectl(['get', resource, '-o', 'json']);
    assert.is(r.code, 0, r.stderr);
    objects.push(...(JSON.parse(r.stdout) as { items: Obj[] }).items);
  }
  const cms = await env.kubectl(['get', 'configmaps', '-l', LABELS.role, '-o', 'json']);
  assert.is(cms.code, 0, cms.stderr);
  objects.push(...(JSON.parse(cms.stdout) as { items: Obj[] }).items);
  return objects;
}

/**
 * What Velero does on restore: create each object without server-set
 * metadata, then (restoreStatus) write its status. ownerReferences are
 * dropped as the documented resource modifier does (their uids belong to the
 * old objects); the operator adds them back.
 */
async function restore(ns: TestNamespace, objects: Obj[]): Promise<void> {
  for (const o of objects) {
    const { status, ...rest } = o;
    const { name, labels, annotations, finalizers } = o.metadata;
    const body = { ...rest, metadata: { name, labels, annotations, finalizers } };
    const created = await ns.kubectl(['create', '-f', '-'], JSON.stringify(body));
    assert.is(created.code, 0, `${o.kind}/${name}: ${created.stderr}`);
    if (status && o.kind !== 'ConfigMap') {
      const patched = await ns.kubectl([
        'patch',
        `${o.kind.toLowerCase()}/${name}`,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
      assert.is(patched.code, 0, `${o.kind}/${name}: ${patched.stderr}`);
    }
  }
}

t('a restore into an empty namespace answers GET /v1/segments, hosts and notifications as before', async (ctx) => {
  const src = (ctx.source = await operatorEnv('backup-src'));
  const seg = await src.rest('POST', '/v1/segments', {
    segment: { name: 'rack-1', recovery_method: 'auto', service_type: 'COMPUTE', description: 'before the backup' },
  });
  assert.is(seg.status, 201, JSON.stringify(seg.json));
  const segUuid = seg.json.segment.uuid as string;
  for (const name of ['compute-1', 'compute-2']) {
    const h = await src.rest('POST', `/v1/segments/${segUuid}/hosts`, {
      host: { name, type: 'COMPUTE', control_attributes: 'SSH' },
    });
    assert.is(h.status, 201, JSON.stringify(h.json));
  }
  const upd = await src.rest('PUT', `/v1/segments/${segUuid}`, { segment: { description: 'updated' } });
  assert.is(upd.status, 200, JSON.stringify(upd.json));
  const n = await src.rest('POST', '/v1/notifications', {
    notification: {
      type: 'PROCESS',
      hostname: 'compute-1',
      generated_time: '2026-01-02T03:04:05',
      payload: { event: 'STOPPED', process_name: 'libvirtd' },
    },
  });
  assert.is(n.status, 202, JSON.stringify(n.json));

  const before = await answers(src);
  const saved = await backup(src);
  assert.ok(
    saved.some((o) => o.kind === 'ConfigMap'),
    'the bookkeeping ConfigMaps are in the backup',
  );

  const empty = await useNamespace('backup-dst');
  await restore(empty, saved);
  ctx.restored = await operatorEnv('backup-dst', empty);
  const after = await answers(ctx.restored);
  assert.equal(after, before);
  // no restored object was refused on the way (e.g. NameConflict from its own restored claim)
  for (const resource of KINDS) {
    const r = await ctx.restored.kubectl([
      'get',
      resource,
      '-o',
      'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].reason}',
    ]);
    assert.not.match(r.stdout, /NameConflict|NotFound/, `${resource}: ${r.stdout}`);
  }

  // and the restored store goes on: a new object gets a fresh id, never a reused one
  const next = await ctx.restored.rest('POST', '/v1/segments', {
    segment: { name: 'rack-2', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(next.status, 201, JSON.stringify(next.json));
  assert.ok(next.json.segment.id > seg.json.segment.id, `new id ${next.json.segment.id}`);
});

t.run();
