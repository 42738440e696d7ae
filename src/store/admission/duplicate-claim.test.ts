// The duplicate-claim protocol (duplicate-claim.ts) on its own, over FakeKube: what a
// claim's holder means one case at a time, then racing intakes with random
// interleavings, each outcome checked against Masakari's one-at-a-time rule.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { INDEX } from '../../model/indexes.ts';
import type { HaHost, Notification } from '../../model/types.ts';
import type { ConfigMap } from '../configmap.ts';
import { fingerprintKey, isDuplicateOf, payloadHash } from './fingerprints.ts';
import type { ClaimOutcome, ClaimRequest } from './duplicate-claim.ts';
import { claimNotification, findCachedDuplicate } from './duplicate-claim.ts';
import { CLAIM_MIN_AGE_MS } from './claim-record.ts';
import { deleteYieldedNotification, SEALED_CLAIM_GRACE_MS, sealedIntakeStanding } from './standing.ts';
import { sweepNotificationClaims } from './claim-lifetime.ts';
import { notificationClaimName } from '../names.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { LABELS } from '../../model/constants.ts';
import { ROLES } from '../configmap.ts';
import { earlyNotification } from '../testing/early-notification.ts';

const NS = 'unit';
const W = 180;
const HOST = 'host-uuid-1';
const PAYLOAD = { event: 'STOPPED', process_name: 'nova-compute' };
const host: HaHost = {
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'HaHost',
  metadata: { name: 'compute-1-abc', uid: 'host-uid' },
  spec: { name: 'compute-1', segmentRef: { name: 's' }, type: 'COMPUTE', controlAttributes: 'SSH' },
};

/** Notifications "created" so far (the REST path creates the accepted one's Notification). */
function world(kube: KubeClient = new FakeKube()) {
  const created = new Set<string>();
  let seq = 0;
  const request = (generatedTime: string, extra: Partial<ClaimRequest> = {}): ClaimRequest => {
    const name = `n${++seq}`;
    return {
      kube,
      namespace: NS,
      host,
      hostUuid: HOST,
      candidate: { type: 'PROCESS', payloadHash: payloadHash(PAYLOAD), generatedTime },
      windowSeconds: W,
      name,
      uuid: `uuid-${name}`,
      notifications: {
        lifecycle: { fresh: async <T>(_ref: unknown, n: string) => (created.has(n) ? ({} as T) : undefined) },
      },
      pendingMs: 300_000,
      now: () => new Date(),
      ...extra,
    };
  };
  /** Claims, then creates the Notification when accepted (as the REST path does): true when this request got in. */
  const intake = async (generatedTime: string, extra: Partial<ClaimRequest> = {}): Promise<boolean> => {
    const outcome: ClaimOutcome = await claimNotification(request(generatedTime, extra));
    if (outcome.kind !== 'accepted' || created.has(outcome.name)) return false;
    created.add(outcome.name);
    return true;
  };
  return { kube, created, request, intake };
}

const CLAIM = notificationClaimName('PROCESS', HOST, payloadHash(PAYLOAD));

async function plantClaim(kube: FakeKube, t: string, notification: string, acceptedAt = Date.now()) {
  return kube.create<ConfigMap>(RESOURCES.configMaps, NS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CLAIM },
    data: {
      generatedTime: t,
      notification,
      uuid: `uuid-${notification}`,
      acceptedAt: String(acceptedAt),
      window: String(W),
    },
  });
}

const holderOf = (kube: KubeClient) => (kube as FakeKube).peek<ConfigMap>(RESOURCES.configMaps, NS, CLAIM)?.data;

const T0 = '2026-01-02T03:02:30';
const IN = '2026-01-02T03:05:00'; // 150 s after T0: inside the 180 s window
const OUT = '2026-01-02T03:05:59'; // 209 s after T0: outside

test('a holder inside the window makes the new one a duplicate; one outside it is replaced', async () => {
  const { kube, created, intake } = world();
  await plantClaim(kube as FakeKube, T0, 'old');
  created.add('old');
  assert.is(await intake(IN), false);
  assert.is(holderOf(kube)?.notification, 'old', 'a duplicate writes nothing');
  assert.is(await intake(OUT), true, 'outside the window it does not count');
  assert.is(holderOf(kube)?.generatedTime, OUT);
});

test('a holder with a later generated_time always makes the new one a duplicate', async () => {
  const { kube, created, intake } = world();
  await plantClaim(kube as FakeKube, OUT, 'later');
  created.add('later');
  assert.is(await intake(T0), false);
  assert.is(await intake('2025-01-01T00:00:00'), false, 'however much later');
});

test('a holder whose Notification is not created yet is created under its recorded name, not a second one', async () => {
  const { kube, request } = world();
  await plantClaim(kube as FakeKube, T0, 'in-flight');
  const outcome = await claimNotification(request(IN));
  assert.equal(outcome, { kind: 'accepted', name: 'in-flight', uuid: 'uuid-in-flight', generatedTime: T0 });
});

test('a holder gone for longer than the pending time no longer counts: the claim is taken over', async () => {
  const { kube, intake } = world();
  await plantClaim(kube as FakeKube, T0, 'deleted', Date.now() - 400_000);
  assert.is(await intake(IN), true);
  assert.is(holderOf(kube)?.generatedTime, IN);
});

test('a claim that names our own Notification is ours (a reconciler retry after a crash)', async () => {
  const { kube, request } = world();
  const req = request(IN);
  await plantClaim(kube as FakeKube, IN, req.name);
  const outcome = await claimNotification(req);
  assert.equal(outcome, { kind: 'accepted', name: req.name, uuid: `uuid-${req.name}`, generatedTime: IN });
});

test('an unparseable generated_time has a claim of its own exact text', async () => {
  const { kube, intake } = world();
  assert.is(await intake('not a time'), true);
  assert.is(await intake('not a time'), false);
  assert.is(await intake('another bad time'), true);
  assert.is(await intake(T0), true, 'a parseable time never meets them in a claim');
  assert.is((kube as FakeKube).all(RESOURCES.configMaps, NS).length, 3);
});

/** FakeKube with a random 0–3 ms pause before every call, so concurrent intakes interleave differently each run. */
function jittery(): KubeClient {
  const kube = new FakeKube();
  return new Proxy(kube, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        const ms = Math.floor(Math.random() * 4);
        await new Promise((r) => (ms ? setTimeout(r, ms) : setImmediate(r)));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as unknown as KubeClient;
}

const candidate = (t: string) => ({ type: 'PROCESS', payloadHash: payloadHash(PAYLOAD), generatedTime: t });

/** Would a one-at-a-time Masakari, taking the times in some order, accept exactly `accepted`? */
function explainable(times: string[], accepted: boolean[]): boolean {
  const orders = (xs: number[]): number[][] =>
    xs.length <= 1 ? [xs] : xs.flatMap((x, i) => orders([...xs.slice(0, i), ...xs.slice(i + 1)]).map((o) => [x, ...o]));
  return orders(times.map((_, i) => i)).some((order) => {
    const stored: string[] = [];
    const got = times.map(() => false);
    for (const i of order) {
      const t = times[i] as string;
      if (stored.some((s) => isDuplicateOf(candidate(t), candidate(s), W))) continue;
      stored.push(t);
      got[i] = true;
    }
    return got.every((g, i) => g === accepted[i]);
  });
}

const sealedNotification = earlyNotification;

test("a sealed notification runs once its claim stands behind it; one that lost the claim's race does not", async () => {
  const { kube, request } = world();
  const standing = (n: Notification) => sealedIntakeStanding(kube, NS, n, W, new Date());
  const early = sealedNotification('n1', '2026-01-02T03:00:00', 0);
  assert.is(await standing(early), 'undecided', 'its claim is still in flight');
  assert.is(await standing(sealedNotification('n1', '2026-01-02T03:00:00', SEALED_CLAIM_GRACE_MS)), 'accepted');

  await claimNotification(request('2026-01-02T03:00:00')); // names n1
  assert.is(await standing(early), 'accepted', 'the claim names it');
  assert.is(await standing(sealedNotification('nX', '2026-01-02T03:01:00', 0)), 'yielded', 'inside the window');
  assert.is(await standing(sealedNotification('nX', '2026-01-02T02:59:00', 0)), 'yielded', 'a little older');
  assert.is(
    await standing(sealedNotification('nX', '2026-01-02T02:50:00', 0)),
    'accepted',
    'more than the window older: accepted before the holder',
  );
  const later = sealedNotification('nX', '2026-01-02T03:10:00', 0);
  assert.is(await standing(later), 'undecided', 'more than the window newer: its own claim replace is in flight');
  assert.is(
    await standing({ ...later, metadata: { ...later.metadata, creationTimestamp: '2026-01-02T03:10:00Z' } }),
    'accepted',
    '... and past the grace (its creator died before it)',
  );
});

test('a yielded notification is deleted only while it is the same object; gone or replaced counts as done', async () => {
  const kube = new FakeKube();
  const created = await kube.create<Notification>(
    RESOURCES.notifications,
    NS,
    sealedNotification('nY', '2026-01-02T03:00:00', 0),
  );
  // Another object under the same name (a different uid): not ours to delete.
  await deleteYieldedNotification(kube, NS, { ...created, metadata: { ...created.metadata, uid: 'another-uid' } });
  assert.ok(await kube.get(RESOURCES.notifications, NS, 'nY'), 'a replaced object is left alone');
  await deleteYieldedNotification(kube, NS, created);
  await kube.get(RESOURCES.notifications, NS, 'nY').then(
    () => assert.unreachable('deleted'),
    () => undefined,
  );
  await deleteYieldedNotification(kube, NS, created); // already gone: done, no error
});

test('racing identical notifications: exactly one gets in (200 races)', async () => {
  for (let i = 0; i < 200; i++) {
    const { intake } = world(jittery());
    const results = await Promise.all(Array.from({ length: 2 + (i % 6) }, () => intake(IN)));
    assert.is(results.filter(Boolean).length, 1, `race ${i}: ${JSON.stringify(results)}`);
  }
});

test('racing notifications at different times: every outcome is one Masakari gives in some order (300 races)', async () => {
  const mixes = [
    [T0, IN],
    [T0, OUT],
    [T0, IN, OUT],
    [T0, OUT, IN, T0],
    ['2026-01-02T03:00:00', '2026-01-02T03:02:00', '2026-01-02T03:04:00', '2026-01-02T03:06:00'],
  ];
  for (let i = 0; i < 300; i++) {
    const times = mixes[i % mixes.length] as string[];
    const { created, request } = world(jittery());
    // Which requests' notifications exist at the end (a request may create another's, under its name).
    const reqs = times.map((t) => request(t));
    await Promise.all(
      reqs.map(async (req) => {
        const outcome = await claimNotification(req);
        if (outcome.kind === 'accepted') created.add(outcome.name);
      }),
    );
    const accepted = reqs.map((r) => created.has(r.name));
    assert.ok(explainable(times, accepted), `race ${i}: ${JSON.stringify(times)} → ${JSON.stringify(accepted)}`);
  }
});

test('a claim does not grow: one small object per fingerprint, however many are accepted into it', async () => {
  const { kube, intake } = world();
  for (let i = 0; i < 20; i++) {
    assert.ok(await intake(`2026-01-02T${String(3 + i).padStart(2, '0')}:00:00`));
  }
  const claims = (kube as FakeKube).all<ConfigMap>(RESOURCES.configMaps, NS);
  assert.is(claims.length, 1);
  assert.ok(JSON.stringify(claims[0]).length < 1024, JSON.stringify(claims[0]));
});

test('the cached duplicate check reads only the notifications with the same fingerprint, not the whole host', () => {
  const stored = (name: string, generatedTime: string, payload: Record<string, string> = PAYLOAD) =>
    ({
      metadata: { name },
      spec: { type: 'PROCESS', hostname: 'compute-1', generatedTime, payload },
      status: { sourceHostUuid: HOST },
    }) as unknown as Notification;
  const lookups: string[] = [];
  const key = fingerprintKey(HOST, 'PROCESS', payloadHash(PAYLOAD));
  const cache = {
    byIndex: (index: string, value: string) => {
      lookups.push(`${index}=${value}`);
      return index === INDEX.fingerprint && value === key ? [stored('same', T0)] : [];
    },
  };
  assert.is(findCachedDuplicate(cache, HOST, candidate(IN), W)?.metadata.name, 'same');
  assert.is(findCachedDuplicate(cache, HOST, candidate(OUT), W), undefined, 'outside the window');
  assert.is(findCachedDuplicate(cache, HOST, candidate(IN), W, 'same'), undefined, 'not itself');
  assert.equal(lookups, [`${INDEX.fingerprint}=${key}`, `${INDEX.fingerprint}=${key}`, `${INDEX.fingerprint}=${key}`]);
});

test("another host's notification filed under the same key (a digest collision) is not a duplicate", () => {
  const other = {
    metadata: { name: 'other-host', labels: { [LABELS.hostUuid]: 'h-other' } },
    spec: { type: 'PROCESS', hostname: 'compute-2', generatedTime: T0, payload: PAYLOAD },
    status: { sourceHostUuid: 'h-other' },
  } as unknown as Notification;
  const cache = { byIndex: () => [other] };
  assert.is(findCachedDuplicate(cache, HOST, candidate(IN), W), undefined);
  const notYetAdmitted = { ...other, metadata: { name: 'ours', labels: { [LABELS.hostUuid]: HOST } }, status: {} };
  assert.is(
    findCachedDuplicate({ byIndex: () => [notYetAdmitted as Notification] }, HOST, candidate(IN), W)?.metadata.name,
    'ours',
    'before admission the host label says whose it is',
  );
});

test('fingerprint keys: equal for equal fingerprints, different for another host, type or payload, and short', () => {
  const key = fingerprintKey(HOST, 'PROCESS', payloadHash(PAYLOAD));
  assert.is(key, fingerprintKey(HOST, 'PROCESS', payloadHash({ ...PAYLOAD })));
  assert.is.not(key, fingerprintKey('h-other', 'PROCESS', payloadHash(PAYLOAD)));
  assert.is.not(key, fingerprintKey(HOST, 'VM', payloadHash(PAYLOAD)));
  assert.is.not(key, fingerprintKey(HOST, 'PROCESS', payloadHash({ ...PAYLOAD, event: 'STARTED!' })));
  assert.match(key, /^[A-Za-z0-9_-]{12}$/);
});

test('the sweeper removes claims not accepted into for max(window, 10 min), and the per-bucket claims of before by their age', async () => {
  const { kube, intake } = world();
  await intake(T0);
  const legacy = await (kube as FakeKube).create<ConfigMap>(RESOURCES.configMaps, NS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'dup-3f2a9c1b5d41402abc12e0aa-11241790', labels: { [LABELS.role]: ROLES.notificationClaim } },
    data: { state: 'accepted', generatedTime: T0, notification: 'x', uuid: 'u', window: String(W) },
  });
  assert.ok(legacy.metadata.creationTimestamp);
  const log = pino({ level: 'silent' });
  assert.is(await sweepNotificationClaims(kube, NS, new Date(), log), 0);
  assert.is(await sweepNotificationClaims(kube, NS, new Date(Date.now() + CLAIM_MIN_AGE_MS + 5_000), log), 2);
  assert.equal((kube as FakeKube).all(RESOURCES.configMaps, NS), []);
});

test.run();
