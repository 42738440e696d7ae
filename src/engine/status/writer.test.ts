import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification } from '../../model/types.ts';
import { DEFERRED_WRITE_MS, JournalWriteError, NotificationStatusWriter, NotOwnerError, ownsRun } from './writer.ts';
import type { EngineBookkeeping } from './writer.ts';
import { notification, NS, quietLog, world } from '../testing/fixtures.ts';

async function setup(signal?: AbortSignal) {
  const w = await world();
  const base = notification('n1', 'VM', {});
  const stored = w.kube.seed<Notification>(RESOURCES.notifications, {
    ...base,
    status: { ...base.status, phase: 'running', runs: 1, engine: { owner: 'me' } },
  });
  const writer = new NotificationStatusWriter({
    kube: w.kube,
    namespace: NS,
    initial: stored,
    guard: ownsRun('me'),
    clock: w.clock,
    log: quietLog,
    signal,
  });
  return { w, writer };
}

test('concurrent mutations are coalesced into one write and each resolves when durable', async () => {
  const { w, writer } = await setup();
  const before = w.kube.writes.length;
  await Promise.all(Array.from({ length: 30 }, (_, i) => writer.mutate((s) => (s.message = `m${i}`))));
  assert.is(w.kube.writes.length - before, 1);
  assert.is(w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.message, 'm29');
});

test('a mutateLater mutation is shown at once and stored by the next write, costing no write of its own', async () => {
  const { w, writer } = await setup();
  const before = w.kube.writes.length;
  writer.mutateLater((s) => (s.message = 'later'));
  assert.is(writer.current().status?.message, 'later');
  assert.is(w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.message, undefined);
  await writer.mutate((s) => (s.updatedAt = '2026-01-02T03:04:05Z'));
  assert.is(w.kube.writes.length - before, 1);
  const stored = w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status as Record<string, unknown>;
  assert.equal([stored.message, stored.updatedAt], ['later', '2026-01-02T03:04:05Z']);
});

test('a mutateLater mutation no write carries is stored on its own after DEFERRED_WRITE_MS', async () => {
  const { w, writer } = await setup();
  const before = w.kube.writes.length;
  writer.mutateLater((s) => (s.message = 'alone'));
  await new Promise((r) => setTimeout(r, DEFERRED_WRITE_MS + 100));
  assert.is(w.kube.writes.length - before, 1);
  assert.is(w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.message, 'alone');
});

/**
 * A write that outlasts DEFERRED_WRITE_MS, with a mutateLater sent while it is
 * in flight; `release` ends the slowness.
 */
async function deferredDuringSlowWrite(w: Awaited<ReturnType<typeof setup>>['w'], writer: NotificationStatusWriter) {
  const release = w.kube.intercept({
    jsonPatch: async (client, ...args) => {
      await new Promise((r) => setTimeout(r, DEFERRED_WRITE_MS + 200));
      return client.jsonPatch(...args);
    },
  });
  const slow = writer.mutate((s) => (s.updatedAt = '2026-01-02T03:04:05Z'));
  await new Promise((r) => setTimeout(r, 50)); // the slow write is in flight
  writer.mutateLater((s) => (s.message = 'waited'));
  return { slow, release };
}

test('a mutateLater mutation whose wait ends during a slow write is stored once that write is done', async () => {
  const { w, writer } = await setup();
  const { slow, release } = await deferredDuringSlowWrite(w, writer);
  await slow;
  release();
  await new Promise((r) => setTimeout(r, 200));
  assert.is(w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.message, 'waited');
});

test('a mutateLater mutation whose wait ends during a slow write is not written once the run is aborted', async () => {
  const abort = new AbortController();
  const { w, writer } = await setup(abort.signal);
  const { slow, release } = await deferredDuringSlowWrite(w, writer);
  abort.abort();
  await slow.catch(() => undefined);
  release();
  const writes = w.kube.writes.length;
  await new Promise((r) => setTimeout(r, 200));
  assert.is(w.kube.writes.length, writes);
  assert.not.equal(w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.message, 'waited');
});

test('a 409 re-reads and re-applies the mutation on the newer object', async () => {
  const { w, writer } = await setup();
  w.kube.mutate(
    RESOURCES.notifications,
    'n1',
    (n: Notification) => (n.status!.failoverSegmentUuid = 'changed-by-someone'),
  );
  await writer.mutate((s) => (s.message = 'mine'));
  const n = w.kube.peek<Notification>(RESOURCES.notifications, 'n1');
  assert.is(n.status?.message, 'mine');
  assert.is(n.status?.failoverSegmentUuid, 'changed-by-someone');
});

test('the guard fences off a writer whose run was taken over or ended', async () => {
  const { w, writer } = await setup();
  w.kube.mutate(
    RESOURCES.notifications,
    'n1',
    (n: Notification) => ((n.status!.engine as EngineBookkeeping).owner = 'other'),
  );
  const err = await writer.mutate((s) => (s.message = 'late')).catch((e) => e);
  assert.instance(err, NotOwnerError);
  assert.match(err.message, 'taken over by other');
  assert.instance(writer.fatal, NotOwnerError);
  const { w: w2, writer: w2r } = await setup();
  w2.kube.mutate(RESOURCES.notifications, 'n1', (n: Notification) => (n.status!.phase = 'failed'));
  assert.match((await w2r.mutate(() => {}).catch((e) => e)).message, "notification is now 'failed'");
});

test('transient errors are retried with backoff; a permanent one rejects with JournalWriteError', async () => {
  const { w, writer } = await setup();
  w.kube.failNext('patchStatus', new KubeError(0, 'Timeout', 'timeout'));
  w.kube.failNext('patchStatus', new KubeError(503, 'ServiceUnavailable', 'etcd'));
  await writer.mutate((s) => (s.message = 'ok'));
  assert.equal(w.clock.sleeps, [200, 400]);
  w.kube.failNext('patchStatus', new KubeError(422, 'Invalid', 'status.vmoves: bad'));
  const err = await writer.mutate((s) => (s.message = 'bad')).catch((e) => e);
  assert.instance(err, JournalWriteError);
  assert.match(err.message, 'status.vmoves: bad');
});

test('a deleted notification stops the writer', async () => {
  const { w, writer } = await setup();
  await w.kube.delete(RESOURCES.notifications, NS, 'n1');
  assert.instance(await writer.mutate(() => {}).catch((e) => e), NotOwnerError);
});

test('over its byte budget the writer moves history into journal pages; a new writer reads them back', async () => {
  const { w } = await setup();
  const budget = { maxObjectBytes: 6_000, targetObjectBytes: 2_000, maxPageBytes: 4_000 };
  const writer = new NotificationStatusWriter({
    kube: w.kube,
    namespace: NS,
    initial: w.kube.peek<Notification>(RESOURCES.notifications, 'n1'),
    guard: ownsRun('me'),
    clock: w.clock,
    log: quietLog,
    budget,
  });
  for (let i = 0; i < 100; i++) {
    await writer.mutate((s) => {
      const d = (s.recoveryWorkflowDetails ??= [
        { name: 'T', progress: 0, progressDetails: [], state: 'RUNNING', run: 0 },
      ]);
      d[0]?.progressDetails.push({ timestamp: 't', progress: '0.5', message: `line ${i} ${'x'.repeat(40)}` });
    });
  }
  const stored = w.kube.peek<Notification>(RESOURCES.notifications, 'n1');
  assert.ok(JSON.stringify(stored).length <= budget.maxObjectBytes, 'the stored object stays within its budget');
  const pages = w.kube.all('configmaps');
  assert.ok(pages.length >= 2);
  assert.is((stored.status?.engine as { journalPages?: number }).journalPages, pages.length);
  assert.is(writer.current().status?.recoveryWorkflowDetails?.[0]?.progressDetails.length, 100);
  // every status write was a patch of what changed, never the whole history
  const sizes = w.kube.patches.map((p) => p.bytes).sort((a, b) => a - b);
  assert.ok((sizes.at(-1) ?? 0) <= budget.targetObjectBytes, `largest patch ${sizes.at(-1)} bytes`);
  assert.ok(
    (sizes[Math.floor(sizes.length / 2)] ?? 0) < 300,
    `median patch ${sizes[Math.floor(sizes.length / 2)]} bytes`,
  );

  const resumed = new NotificationStatusWriter({
    kube: w.kube,
    namespace: NS,
    initial: stored,
    guard: ownsRun('me'),
    clock: w.clock,
    log: quietLog,
    budget,
  });
  await resumed.load();
  const lines = resumed.current().status?.recoveryWorkflowDetails?.[0]?.progressDetails ?? [];
  assert.equal(
    lines.map((l) => l.message.split(' ')[1]),
    Array.from({ length: 100 }, (_, i) => String(i)),
  );
});

test.run();
