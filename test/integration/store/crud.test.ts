// CRUD round trips through the CR-backed repository against a real API
// server: records, read-your-writes, renames with name claims, host flags,
// and the segment delete cascade.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NameTakenError, NotFoundInStoreError } from '../../../src/domain/repository.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { claimObjectName } from '../../../src/store/names.ts';
import { STORE_LEASE_NAME } from '../../../src/reconcilers/component.ts';
import type { HaHost } from '../../../src/model/types.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import type { StoreEnv } from './helpers.ts';
import { eventually, hostInput, rejects, segmentInput, storeEnv } from './helpers.ts';

const crud = suite<{ env: StoreEnv }>('store CRUD', { env: undefined as unknown as StoreEnv });
crud.before(async (ctx) => {
  ctx.env = await storeEnv('store-crud');
});
crud.after(async (ctx) => {
  await ctx.env.close();
});

async function claimExists(env: StoreEnv, kind: 'segment' | 'host', name: string): Promise<boolean> {
  try {
    await env.kube.get(RESOURCES.configMaps, env.namespace, claimObjectName(kind, name));
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

crud('segment create/get/list/update/delete round trip, each read reflecting the write before it', async ({ env }) => {
  const repo = await env.open({ reconcilers: false });
  const created = await repo.createSegment({ ...segmentInput('seg-crud'), description: 'first' });
  assert.ok(created.id > 0);
  assert.match(created.uuid, /^[0-9a-f-]{36}$/);
  assert.match(created.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  assert.is(created.updated_at, null);
  assert.is(created.description, 'first');
  assert.match(created.k8sName, /^seg-crud-[0-9a-f]{8}$/);
  assert.equal(repo.getSegment(created.uuid), created);
  assert.ok(repo.listSegments().some((s) => s.uuid === created.uuid));

  const updated = await repo.updateSegment(created.uuid, { description: 'second', enabled: false });
  assert.is(updated.description, 'second');
  assert.is(updated.enabled, false);
  assert.match(updated.updated_at ?? '', /^\d{4}-/);
  assert.is(repo.getSegment(created.uuid)?.description, 'second');

  await repo.deleteSegment(created.uuid);
  assert.is(repo.getSegment(created.uuid), undefined);
  assert.not.ok(repo.listSegments().some((s) => s.uuid === created.uuid));
  assert.not.ok(await claimExists(env, 'segment', 'seg-crud'));
  // The name is free again at once.
  const again = await repo.createSegment(segmentInput('seg-crud'));
  assert.is.not(again.uuid, created.uuid);
  assert.ok(again.id > created.id);
});

crud('rename claims the new name, frees the old one, and refuses a taken one', async ({ env }) => {
  const repo = await env.open({ reconcilers: false });
  const a = await repo.createSegment(segmentInput('rename-a'));
  await repo.createSegment(segmentInput('rename-b'));
  await rejects(() => repo.createSegment(segmentInput('rename-a')), NameTakenError);
  await rejects(() => repo.updateSegment(a.uuid, { name: 'rename-b' }), NameTakenError);
  assert.is(repo.getSegment(a.uuid)?.name, 'rename-a');
  assert.ok(await claimExists(env, 'segment', 'rename-a'));

  const renamed = await repo.updateSegment(a.uuid, { name: 'rename-c' });
  assert.is(renamed.name, 'rename-c');
  assert.is(renamed.k8sName, a.k8sName, 'metadata.name is stable across renames');
  assert.ok(await claimExists(env, 'segment', 'rename-c'));
  assert.not.ok(await claimExists(env, 'segment', 'rename-a'));
  const reuse = await repo.createSegment(segmentInput('rename-a'));
  assert.is(reuse.name, 'rename-a');
});

crud('host names are unique across segments; host rename moves its claim', async ({ env }) => {
  const repo = await env.open({ reconcilers: false });
  const s1 = await repo.createSegment(segmentInput('hosts-1'));
  const s2 = await repo.createSegment(segmentInput('hosts-2'));
  const h = await repo.createHost(s1.uuid, hostInput('compute-a'));
  assert.is(h.failover_segment_id, s1.uuid);
  assert.equal(repo.getHostByName('compute-a'), h);
  assert.equal(repo.listHosts(s1.uuid), [h]);
  await rejects(() => repo.createHost(s2.uuid, hostInput('compute-a')), NameTakenError);
  const renamed = await repo.updateHost(h.uuid, { name: 'compute-b' });
  assert.is(repo.getHostByName('compute-a'), undefined);
  assert.is(repo.getHostByName('compute-b')?.uuid, renamed.uuid);
  await repo.createHost(s2.uuid, hostInput('compute-a'));
  await repo.deleteHost(renamed.uuid);
  assert.is(repo.getHost(renamed.uuid), undefined);
  assert.not.ok(await claimExists(env, 'host', 'compute-b'));
  await rejects(() => repo.deleteHost(renamed.uuid), NotFoundInStoreError);
});

crud(
  'engine-latched flags are effective until a newer spec; PUT on_maintenance=false clears a latch',
  async ({ env }) => {
    const repo = await env.open({ reconcilers: false });
    const seg = await repo.createSegment(segmentInput('flags'));
    const h = await repo.createHost(seg.uuid, hostInput('compute-flags'));
    // What the engine does: latch on_maintenance in status for the current generation.
    const obj = await env.kube.get<HaHost>(RESOURCES.hosts, env.namespace, h.k8sName);
    await env.kube.mergePatch(
      RESOURCES.hosts,
      env.namespace,
      h.k8sName,
      { status: { onMaintenance: true, flagsGeneration: obj.metadata.generation } },
      { status: true, fieldManager: 'masakari-engine' },
    );
    await eventually(
      'latched flag visible',
      () => repo.getHost(h.uuid)?.on_maintenance,
      (v) => v === true,
    );
    // An unrelated PUT keeps the latch (spec takes the effective value).
    const renamed = await repo.updateHost(h.uuid, { control_attributes: 'IPMI' });
    assert.is(renamed.on_maintenance, true);
    // PUT on_maintenance=false clears it.
    const cleared = await repo.updateHost(h.uuid, { on_maintenance: false });
    assert.is(cleared.on_maintenance, false);
    assert.is(repo.getHost(h.uuid)?.on_maintenance, false);
  },
);

crud('deleting a segment removes its hosts, their claims, and the segment claim', async ({ env }) => {
  const repo = await env.open({ reconcilers: false });
  const seg = await repo.createSegment(segmentInput('cascade'));
  const hosts = await Promise.all(['c-1', 'c-2', 'c-3'].map((n) => repo.createHost(seg.uuid, hostInput(n))));
  await repo.deleteSegment(seg.uuid);
  assert.equal(repo.listHosts(seg.uuid), []);
  for (const h of hosts) {
    assert.is(repo.getHost(h.uuid), undefined);
    assert.not.ok(await claimExists(env, 'host', h.name));
    await rejects(
      () => env.kube.get(RESOURCES.hosts, env.namespace, h.k8sName),
      (e: unknown) => isNotFound(e),
    );
  }
  await rejects(
    () => env.kube.get(RESOURCES.segments, env.namespace, seg.k8sName),
    (e: unknown) => isNotFound(e),
  );
  assert.not.ok(await claimExists(env, 'segment', 'cascade'));
});

crud('notifications: created new, listed, fetched, and vmoves read from status', async ({ env }) => {
  const repo = await env.open({ reconcilers: false });
  const seg = await repo.createSegment(segmentInput('notif'));
  const h = await repo.createHost(seg.uuid, hostInput('compute-n'));
  const n = await repo.createNotification(
    {
      type: 'COMPUTE_HOST',
      hostname: 'compute-n',
      generated_time: '2026-01-02T03:04:05',
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      source_host_uuid: h.uuid,
      failover_segment_uuid: seg.uuid,
    },
    180,
  );
  assert.is(n.status, 'new');
  assert.is(n.source_host_uuid, h.uuid);
  assert.is(n.failover_segment_uuid, seg.uuid);
  assert.equal(repo.getNotification(n.notification_uuid), n);
  assert.ok(repo.listNotifications().some((x) => x.notification_uuid === n.notification_uuid));
  assert.equal(await repo.listVMoves(n.notification_uuid), []);
  // The engine writes status only once the admission's own status write has
  // landed (it runs admitted notifications only); a status patch before it
  // would make the cache see the notification unadmitted for a moment.
  await repo.settle();
  await env.kube.mergePatch(
    RESOURCES.notifications,
    env.namespace,
    n.k8sName,
    {
      status: {
        vmoves: [
          {
            id: 1,
            uuid: '11111111-2222-4333-8444-555555555555',
            instanceUuid: 'i-1',
            instanceName: 'vm1',
            sourceHost: 'compute-n',
            destHost: null,
            startTime: '2026-01-02 03:05:00.123456',
            endTime: null,
            type: 'evacuation',
            status: 'ongoing',
            message: null,
            createdAt: '2026-01-02T03:05:00Z',
            updatedAt: null,
          },
        ],
      },
    },
    { status: true, fieldManager: 'masakari-engine' },
  );
  const moves = await eventually(
    'vmove visible',
    () => repo.listVMoves(n.notification_uuid),
    (v) => v.length === 1,
  );
  assert.is(moves[0]?.start_time, '2026-01-02 03:05:00.123456');
  assert.is(moves[0]?.created_at, '2026-01-02T03:05:00');
  assert.is(
    (await repo.getVMove(n.notification_uuid, '11111111-2222-4333-8444-555555555555'))?.notification_uuid,
    n.notification_uuid,
  );
});

crud(
  "stop() resolves only after the reconcilers' Lease is released, so the next replica takes over at once",
  async ({ env }) => {
    // Its own client, closed right after stop(), as the process does on shutdown.
    const own = env.newClient();
    const repo = await env.open({ kube: own });
    const holder = () =>
      env.kube
        .get<{ spec?: { holderIdentity?: string | null } }>(RESOURCES.leases, env.namespace, STORE_LEASE_NAME)
        .then((l) => l.spec?.holderIdentity ?? '')
        .catch(() => '');
    const leader = await eventually('the store reconcilers to lead', holder, (h) => h !== '');
    assert.match(leader, /replica/);
    await repo.stop();
    await own.close();
    assert.is(await holder(), '');
  },
);

crud.run();
