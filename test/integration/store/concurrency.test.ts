// The SQL guarantees under concurrency, against a real API server: unique
// names (repository and raw kubectl-style creates racing), exactly-once
// notification intake (one and two facade replicas), unique ids across
// replicas that are never reused.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DuplicateNotificationError, NameTakenError } from '../../../src/domain/repository.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { API_VERSION } from '../../../src/model/constants.ts';
import type { FailoverSegment } from '../../../src/model/types.ts';
import type { StoreEnv } from './helpers.ts';
import { eventually, hostInput, rejects, segmentInput, settle, storeEnv } from './helpers.ts';
import { readyCondition, REASONS } from '../../../src/domain/admitted.ts';

const race = suite<{ env: StoreEnv }>('store concurrency', { env: undefined as unknown as StoreEnv });
race.before(async (ctx) => {
  ctx.env = await storeEnv('store-race');
});
race.after(async (ctx) => {
  await ctx.env.close();
});

function rawSegment(name: string, masakariName: string): FailoverSegment {
  return {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name },
    spec: { name: masakariName, recoveryMethod: 'auto', serviceType: 'COMPUTE' },
  };
}

race('50 concurrent creates of one segment name (REST and kubectl-style) → exactly one owner', async ({ env }) => {
  const a = await env.open(); // runs the reconcilers (leader)
  const b = await env.open();
  const rest = Array.from({ length: 25 }, (_, i) => (i % 2 ? a : b).createSegment(segmentInput('contested')));
  const raw = Array.from({ length: 25 }, (_, i) =>
    env.kube.create(RESOURCES.segments, env.namespace, rawSegment(`contested-raw-${i}`, 'contested')),
  );
  const restResults = await settle(rest);
  await settle(raw);
  for (const e of restResults.errors) assert.instance(e, NameTakenError);
  // Every raw object ends up admitted or flagged NameConflict.
  const objects = await eventually(
    'reconciler verdict on every raw segment',
    async () =>
      (await env.kube.list<FailoverSegment>(RESOURCES.segments, env.namespace)).items.filter(
        (s) => s.spec.name === 'contested',
      ),
    (items) =>
      items.length >= 1 &&
      items.filter((s) => s.metadata.name?.startsWith('contested-raw-')).every((s) => readyCondition(s)),
  );
  const winners = objects.filter((s) => readyCondition(s)?.status === 'True');
  const losers = objects.filter((s) => readyCondition(s)?.status === 'False');
  assert.is(winners.length, 1, `winners: ${winners.map((w) => w.metadata.name).join(',')}`);
  for (const l of losers) assert.is(readyCondition(l)?.reason, REASONS.nameConflict);
  assert.is(restResults.ok.length + winners.filter((w) => w.metadata.name?.startsWith('contested-raw-')).length, 1);
  for (const repo of [a, b]) {
    await eventually(
      'one listed segment',
      () => repo.listSegments().filter((s) => s.name === 'contested').length,
      (n) => n === 1,
    );
  }
});

race('100 concurrent identical notifications → exactly one, with one and with two replicas', async ({ env }) => {
  const a = await env.open({ reconcilers: false });
  const b = await env.open({ reconcilers: false });
  const seg = await a.createSegment(segmentInput('dup'));
  const host = await a.createHost(seg.uuid, hostInput('compute-dup'));
  await eventually(
    'host on replica b',
    () => b.getHost(host.uuid),
    (h) => h !== undefined,
  );
  const input = (t: string) => ({
    type: 'PROCESS' as const,
    hostname: 'compute-dup',
    generated_time: t,
    payload: { process_name: 'nova-compute', event: 'STOPPED' },
    source_host_uuid: host.uuid,
    failover_segment_uuid: seg.uuid,
  });
  for (const [label, replicas] of [
    ['one replica', [a]],
    ['two replicas', [a, b]],
  ] as const) {
    const t = label === 'one replica' ? '2026-01-02T03:00:00' : '2026-01-02T04:00:00';
    const results = await settle(
      Array.from({ length: 100 }, (_, i) => replicas[i % replicas.length]!.createNotification(input(t), 180)),
    );
    assert.is(results.ok.length, 1, `${label}: successes`);
    for (const e of results.errors) assert.instance(e, DuplicateNotificationError, String(e));
    const stored = await eventually(
      `${label}: stored notifications`,
      () => a.listNotifications().filter((n) => n.generated_time === t),
      (l) => l.length >= 1,
    );
    assert.is(stored.length, 1, `${label}: stored`);
  }
  // Outside the window, or a different payload, is not a duplicate.
  await a.createNotification(input('2026-01-02T04:03:01'), 180);
  await a.createNotification(
    { ...input('2026-01-02T04:00:00'), payload: { process_name: 'other', event: 'STOPPED' } },
    180,
  );
  await rejects(() => b.createNotification(input('2026-01-02T04:00:30'), 180), DuplicateNotificationError);
});

race('ids are unique per kind across two replicas and never reused', async ({ env }) => {
  const a = await env.open({ reconcilers: false });
  const b = await env.open({ reconcilers: false });
  const created = await Promise.all(
    Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).createSegment(segmentInput(`ids-${i}`))),
  );
  const ids = created.map((s) => s.id);
  assert.is(new Set(ids).size, ids.length, 'unique');
  // Each replica deletes what it created: read-your-writes holds per replica,
  // and the other one's cache may not have seen the create yet.
  for (const [i, s] of created.slice(0, 10).entries()) await (i % 2 ? a : b).deleteSegment(s.uuid);
  const later = await Promise.all(
    Array.from({ length: 10 }, (_, i) => a.createSegment(segmentInput(`ids-again-${i}`))),
  );
  for (const s of later) assert.not.ok(ids.includes(s.id), `id ${s.id} reused`);
});

race.run();
