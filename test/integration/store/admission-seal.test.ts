// Admission by seal (src/store/admission/seal.ts) on a real API server: a
// REST-created notification costs its claim and its create, no status write;
// every replica shows it admitted at once; a copied seal admits nothing; the
// engine's first status write stores the whole admission; another replica
// never shows the loser of a duplicate race.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { KubeClient } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { ANNOTATIONS, LABELS } from '../../../src/model/constants.ts';
import type { Notification } from '../../../src/model/types.ts';
import {
  createAdmissionSeal,
  loadAdmissionSealKey,
  type AdmissionSeal,
  withSealedNotifications,
} from '../../../src/store/admission/seal.ts';
import { NotificationStatusWriter } from '../../../src/engine/status/writer.ts';
import { systemClock } from '../../../src/time/clock.ts';
import { isAdmitted } from '../../../src/domain/admitted.ts';
import { eventually, hostInput, segmentInput, storeEnv, type StoreEnv } from './helpers.ts';

interface Ctx {
  env: StoreEnv;
  seal: AdmissionSeal;
  sealed: (kube: KubeClient) => KubeClient;
}

const test = suite<Ctx>('admission by seal', {} as Ctx);
const log = pino({ level: 'silent' });

test.before(async (ctx) => {
  ctx.env = await storeEnv('seal');
  const key = await loadAdmissionSealKey(ctx.env.kube, ctx.env.namespace, log, new AbortController().signal);
  assert.ok(key, 'the key Secret is created');
  ctx.seal = createAdmissionSeal(key);
  ctx.sealed = (kube) => withSealedNotifications(kube, ctx.seal, ctx.env.namespace);
});
test.after(async ({ env }) => env?.close());

/** Counts the writes a client makes, by verb and resource (status patches apart). */
function counting(kube: KubeClient): { kube: KubeClient; writes: string[] } {
  const writes: string[] = [];
  const note = (verb: string, plural: string, opts?: { status?: boolean }) =>
    writes.push(`${verb} ${plural}${opts?.status ? '/status' : ''}`);
  return {
    writes,
    kube: {
      ...kube,
      get: (...a) => kube.get(...a),
      list: (...a) => kube.list(...a),
      watch: (...a) => kube.watch(...a),
      delete: (...a) => kube.delete(...a),
      create: (ref, ns, body, opts) => (note('create', ref.plural), kube.create(ref, ns, body, opts)),
      replace: (ref, ns, n, body, opts) => (note('replace', ref.plural), kube.replace(ref, ns, n, body, opts)),
      replaceStatus: (ref, ns, n, body, opts) => (
        note('replace', ref.plural, { status: true }),
        kube.replaceStatus(ref, ns, n, body, opts)
      ),
      mergePatch: (ref, ns, n, p, opts) => (note('patch', ref.plural, opts), kube.mergePatch(ref, ns, n, p, opts)),
      jsonPatch: (ref, ns, n, p, opts) => (note('patch', ref.plural, opts), kube.jsonPatch(ref, ns, n, p, opts)),
      apply: (ref, ns, n, b, opts) => (note('apply', ref.plural, opts), kube.apply(ref, ns, n, b, opts)),
    },
  };
}

test('a REST notification is a claim and a create, no status write, and every replica shows it', async (ctx) => {
  const { env, seal, sealed } = ctx;
  const counted = counting(sealed(env.kube));
  const a = await env.open({ kube: counted.kube, seal, reconcilers: false });
  const b = await env.open({ kube: sealed(env.newClient()), reconcilers: false });
  const seg = await a.createSegment(segmentInput('seal-seg'));
  const host = await a.createHost(seg.uuid, hostInput('seal-host'));
  await eventually(
    'host on b',
    () => b.getHost(host.uuid),
    (h) => h !== undefined,
  );

  const post = (instance: string) =>
    a.createNotification(
      {
        type: 'VM',
        hostname: 'seal-host',
        generated_time: '2026-12-03T10:00:00',
        payload: { event: 'LIFECYCLE', instance_uuid: instance, vir_domain_event: 'STOPPED_FAILED' },
        source_host_uuid: host.uuid,
        failover_segment_uuid: seg.uuid,
      },
      180,
    );
  // The first one also creates the id sequence; the second shows what every later one costs.
  await post('6f1c2a34-0000-4000-8000-000000000000');
  await a.settle();
  counted.writes.length = 0;
  const created = await post('6f1c2a34-0000-4000-8000-000000000001');
  await a.settle();
  const writes = counted.writes.filter((w) => w !== 'replace configmaps'); // the next id block, now and then
  assert.equal(writes.sort(), ['create configmaps', 'create notifications'], 'no status write');

  assert.is(a.getNotification(created.notification_uuid)?.status, 'new');
  const onB = await eventually(
    'listed on b',
    () => b.getNotification(created.notification_uuid),
    (n) => n !== undefined,
  );
  assert.is(onB!.id, created.id);
  assert.is(onB!.status, 'new');

  const raw = (await env.kube.list<Notification>(RESOURCES.notifications, env.namespace)).items.find(
    (n) => n.metadata.labels?.[LABELS.uuid] === created.notification_uuid,
  )!;
  assert.is(raw.status, undefined, 'the API server holds no status');
  assert.ok(raw.metadata.annotations?.[ANNOTATIONS.admissionSeal]);
});

test('a copied seal admits nothing: another payload under the same seal stays hidden', async ({ env, sealed }) => {
  const kube = sealed(env.kube);
  const a = await env.open({ kube, reconcilers: false });
  const original = (await kube.list<Notification>(RESOURCES.notifications, env.namespace)).items.find(isAdmitted)!;
  const forged: Notification = {
    apiVersion: original.apiVersion,
    kind: 'Notification',
    metadata: {
      name: `${original.metadata.name}-forged`,
      labels: { ...original.metadata.labels, [LABELS.uuid]: '00000000-0000-4000-8000-00000000f0f0' },
      annotations: { ...original.metadata.annotations },
    },
    spec: {
      ...original.spec,
      payload: { ...original.spec.payload, instance_uuid: '6f1c2a34-0000-4000-8000-00000000f0f0' },
    },
  };
  const stored = await kube.create<Notification>(RESOURCES.notifications, env.namespace, forged);
  assert.not.ok(isAdmitted(stored));
  await new Promise((r) => setTimeout(r, 300));
  assert.is(a.getNotification('00000000-0000-4000-8000-00000000f0f0'), undefined);
  await env.kube.delete(RESOURCES.notifications, env.namespace, stored.metadata.name!);
});

test("the engine's first status write stores the whole admission", async ({ env, sealed }) => {
  const kube = sealed(env.kube);
  const view = (await kube.list<Notification>(RESOURCES.notifications, env.namespace)).items.find(
    (n) => n.status?.admittedBySeal,
  )!;
  assert.ok(view, 'a sealed notification without status');
  const writer = new NotificationStatusWriter({
    kube,
    namespace: env.namespace,
    initial: view,
    guard: () => undefined,
    clock: systemClock,
    log,
  });
  await writer.mutate((s) => {
    s.phase = 'running';
  });
  const raw = await env.kube.get<Notification>(RESOURCES.notifications, env.namespace, view.metadata.name!);
  assert.is(raw.status?.uuid, view.status?.uuid);
  assert.is(raw.status?.id, view.status?.id);
  assert.is(raw.status?.sourceHostUuid, view.status?.sourceHostUuid);
  assert.is(raw.status?.failoverSegmentUuid, view.status?.failoverSegmentUuid);
  assert.is(raw.status?.phase, 'running');
  assert.is(raw.status?.createdAt, view.metadata.creationTimestamp);
  assert.is(raw.status?.admittedBySeal, undefined, 'the view marker is not stored');
});

test('another replica never shows the loser of a duplicate race, and shows the winner once its claim names it', async (ctx) => {
  const { env, seal, sealed } = ctx;
  const a = await env.open({ kube: sealed(env.kube), seal, reconcilers: false });
  const b = await env.open({ kube: sealed(env.newClient()), seal, reconcilers: false });
  const seg = await a.createSegment(segmentInput('race-seg'));
  const host = await a.createHost(seg.uuid, hostInput('race-host'));
  const input = {
    type: 'VM' as const,
    hostname: 'race-host',
    generated_time: '2026-12-03T11:00:00',
    payload: {
      event: 'LIFECYCLE',
      instance_uuid: '6f1c2a34-0000-4000-8000-0000000000aa',
      vir_domain_event: 'STOPPED_FAILED',
    },
    source_host_uuid: host.uuid,
    failover_segment_uuid: seg.uuid,
  };
  const winner = await a.createNotification(input, 180);
  await eventually(
    'winner on b',
    () => b.getNotification(winner.notification_uuid),
    (n) => n !== undefined,
  );

  // What a losing replica's early create leaves for a moment: sealed, valid, and its claim names the winner.
  const winnerObject = (await env.kube.list<Notification>(RESOURCES.notifications, env.namespace)).items.find(
    (n) => n.metadata.labels?.[LABELS.uuid] === winner.notification_uuid,
  )!;
  const loserUuid = '00000000-0000-4000-8000-0000000000bb';
  const loser: Notification = {
    apiVersion: winnerObject.apiVersion,
    kind: 'Notification',
    metadata: {
      name: `${winnerObject.metadata.name}-loser`,
      labels: { ...winnerObject.metadata.labels, [LABELS.uuid]: loserUuid, [LABELS.id]: '999999' },
      annotations: {},
    },
    spec: { ...winnerObject.spec, generatedTime: '2026-12-03T11:00:30' },
  };
  loser.metadata.annotations = { [ANNOTATIONS.admissionSeal]: seal.seal(loser, new Date()) };
  const stored = await env.kube.create<Notification>(RESOURCES.notifications, env.namespace, loser);
  await eventually(
    "the loser in b's cache",
    () => b.parts.caches.notifications.get(stored.metadata.name!),
    (n) => n !== undefined,
  );
  for (let i = 0; i < 20; i++) {
    assert.equal(
      b
        .listNotifications()
        .map((n) => n.notification_uuid)
        .filter((u) => u === loserUuid || u === winner.notification_uuid),
      [winner.notification_uuid],
    );
    assert.is(b.getNotification(loserUuid), undefined);
    await new Promise((r) => setTimeout(r, 25));
  }
  await env.kube.delete(RESOURCES.notifications, env.namespace, stored.metadata.name!);
});

test.run();
