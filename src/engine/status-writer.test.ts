import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { Notification } from '../model/types.ts';
import { JournalWriteError, NotificationStatusWriter, NotOwnerError, ownsRun } from './status-writer.ts';
import type { EngineBookkeeping } from './status-writer.ts';
import { notification, NS, quietLog, world } from './testing/fixtures.ts';

function setup() {
  const w = world();
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
  });
  return { w, writer };
}

test('concurrent mutations are coalesced into one write and each resolves when durable', async () => {
  const { w, writer } = setup();
  const before = w.kube.writes.length;
  await Promise.all(Array.from({ length: 30 }, (_, i) => writer.mutate((s) => (s.message = `m${i}`))));
  assert.is(w.kube.writes.length - before, 1);
  assert.is(w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.message, 'm29');
});

test('a 409 re-reads and re-applies the mutation on the newer object', async () => {
  const { w, writer } = setup();
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
  const { w, writer } = setup();
  w.kube.mutate(
    RESOURCES.notifications,
    'n1',
    (n: Notification) => ((n.status!.engine as EngineBookkeeping).owner = 'other'),
  );
  const err = await writer.mutate((s) => (s.message = 'late')).catch((e) => e);
  assert.instance(err, NotOwnerError);
  assert.match(err.message, 'taken over by other');
  assert.instance(writer.fatal, NotOwnerError);
  const { w: w2, writer: w2r } = setup();
  w2.kube.mutate(RESOURCES.notifications, 'n1', (n: Notification) => (n.status!.phase = 'failed'));
  assert.match((await w2r.mutate(() => {}).catch((e) => e)).message, "notification is now 'failed'");
});

test('transient errors are retried with backoff; a permanent one rejects with JournalWriteError', async () => {
  const { w, writer } = setup();
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
  const { w, writer } = setup();
  await w.kube.delete(RESOURCES.notifications, NS, 'n1');
  assert.instance(await writer.mutate(() => {}).catch((e) => e), NotOwnerError);
});

test.run();
