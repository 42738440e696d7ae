// The duplicate-claim protocol (intake.ts) on its own, over FakeKube: the
// neighbour rules one by one, then racing pairs across a bucket boundary with
// random interleavings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { INDEX } from '../model/indexes.ts';
import type { HaHost, Notification } from '../model/types.ts';
import type { ConfigMap } from './configmap.ts';
import { bucketOf, fingerprintKey, payloadHash } from './fingerprints.ts';
import type { ClaimOutcome, ClaimRequest } from './intake.ts';
import { CLAIM_MIN_AGE_MS, claimNotification, findCachedDuplicate, sweepNotificationClaims } from './intake.ts';
import { notificationClaimName } from './names.ts';
import { FakeKube } from '../testing/fake-kube.ts';

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
      exists: async (n) => created.has(n),
      pendingMs: 300_000,
      now: () => new Date(),
      decisionGraceMs: 2_000,
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

const claimName = (t: string) =>
  notificationClaimName('PROCESS', HOST, payloadHash(PAYLOAD), W, bucketOf(t, W) as bigint);

async function plantClaim(kube: FakeKube, t: string, state: 'deciding' | 'accepted', notification: string) {
  return kube.create<ConfigMap>(RESOURCES.configMaps, NS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: claimName(t) },
    data: { state, generatedTime: t, notification, uuid: `uuid-${notification}`, window: String(W) },
  });
}

// Bucket boundaries: 2026-01-02T03:03:00 starts a bucket of 180 s.
const LOWER = '2026-01-02T03:02:30'; // bucket b-1
const UPPER_IN = '2026-01-02T03:05:00'; // bucket b, 150 s after LOWER: in window
const UPPER_OUT = '2026-01-02T03:05:59'; // bucket b, 209 s after LOWER: out of window

test('a lower neighbour accepted inside the window makes the new one a duplicate', async () => {
  const { kube, created, intake } = world();
  await plantClaim(kube as FakeKube, LOWER, 'accepted', 'low');
  created.add('low');
  assert.is(await intake(UPPER_IN), false);
  assert.is(await intake(UPPER_OUT), true, 'outside the window it does not count');
});

test('an upper neighbour accepted makes the new one a duplicate, however far inside its bucket', async () => {
  const { kube, created, intake } = world();
  await plantClaim(kube as FakeKube, UPPER_OUT, 'accepted', 'up');
  created.add('up');
  // stored generated_time later than the new one: always inside Masakari's window
  assert.is(await intake(LOWER), false);
});

test('an upper neighbour still deciding inside the window yields to the lower one', async () => {
  const { kube, intake } = world();
  await plantClaim(kube as FakeKube, UPPER_IN, 'deciding', 'up');
  assert.is(await intake(LOWER), true);
  assert.is(await (kube as FakeKube).peek(RESOURCES.configMaps, NS, claimName(UPPER_IN)), undefined);
});

test('an upper neighbour deciding outside the window is left alone', async () => {
  const { kube, intake } = world();
  await plantClaim(kube as FakeKube, UPPER_OUT, 'deciding', 'up');
  assert.is(await intake(LOWER), true);
  assert.ok((kube as FakeKube).peek(RESOURCES.configMaps, NS, claimName(UPPER_OUT)));
});

test('a lower neighbour deciding is waited for: accepted then → duplicate', async () => {
  const { kube, created, intake } = world();
  const low = await plantClaim(kube as FakeKube, LOWER, 'deciding', 'low');
  setTimeout(() => {
    void kube.replace(RESOURCES.configMaps, NS, low.metadata.name ?? '', {
      ...low,
      data: { ...low.data, state: 'accepted' },
    });
    created.add('low');
  }, 60);
  assert.is(await intake(UPPER_IN), false);
});

test('a lower neighbour left deciding by a crashed creator is refused after the grace', async () => {
  const { kube, intake } = world();
  await plantClaim(kube as FakeKube, LOWER, 'deciding', 'low');
  const started = Date.now();
  assert.is(await intake(UPPER_IN, { decisionGraceMs: 100 }), true);
  assert.ok(Date.now() - started >= 100);
  assert.is((kube as FakeKube).peek(RESOURCES.configMaps, NS, claimName(LOWER)), undefined);
});

test('a claim a racer accepted for us while we decided to yield stays ours (its early Notification may be admitted already)', async () => {
  const { kube, created, request } = world();
  await plantClaim(kube as FakeKube, LOWER, 'accepted', 'low');
  created.add('low');
  let racer: Promise<unknown> | undefined;
  const req = request(UPPER_IN, {
    // The kubectl-path reconciler finishing the claim for the Notification the REST path created early.
    onClaimed: () => {
      racer ??= (async () => {
        const mine = await kube.get<ConfigMap>(RESOURCES.configMaps, NS, claimName(UPPER_IN));
        await kube.replace(RESOURCES.configMaps, NS, claimName(UPPER_IN), {
          ...mine,
          data: { ...mine.data, state: 'accepted' },
        });
      })();
    },
  });
  req.exists = async (n) => {
    await racer;
    return created.has(n);
  };
  const outcome = await claimNotification(req);
  assert.equal(outcome.kind === 'accepted' && outcome.name, req.name);
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

test('racing neighbours inside the window across a bucket boundary: exactly one gets in (200 races)', async () => {
  for (let i = 0; i < 200; i++) {
    const { intake } = world(jittery());
    const results = await Promise.all(
      i % 2 ? [intake(LOWER), intake(UPPER_IN)] : [intake(UPPER_IN), intake(LOWER), intake(LOWER), intake(UPPER_IN)],
    );
    assert.is(results.filter(Boolean).length, 1, `race ${i}: ${JSON.stringify(results)}`);
  }
});

test('racing neighbours outside the window: the later one always gets in (100 races)', async () => {
  for (let i = 0; i < 100; i++) {
    const { intake } = world(jittery());
    const [low, up] = await Promise.all([intake(LOWER), intake(UPPER_OUT)]);
    // Masakari accepts the later one in any order; the earlier one only if it came first.
    assert.ok(up, `race ${i}`);
    assert.ok(low === true || low === false);
  }
});

test('claims do not grow: one small object per accepted notification', async () => {
  const { kube, intake } = world();
  for (let i = 0; i < 20; i++) {
    await intake(`2026-01-02T${String(3 + i).padStart(2, '0')}:00:00`);
  }
  const claims = (kube as FakeKube).all<ConfigMap>(RESOURCES.configMaps, NS);
  assert.is(claims.length, 20);
  for (const c of claims) assert.ok(JSON.stringify(c).length < 1024, JSON.stringify(c));
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
      return index === INDEX.fingerprint && value === key ? [stored('same', LOWER)] : [];
    },
  };
  const candidate = (t: string) => ({ type: 'PROCESS', payloadHash: payloadHash(PAYLOAD), generatedTime: t });
  assert.is(findCachedDuplicate(cache, HOST, candidate(UPPER_IN), W)?.metadata.name, 'same');
  assert.is(findCachedDuplicate(cache, HOST, candidate(UPPER_OUT), W), undefined, 'outside the window');
  assert.is(findCachedDuplicate(cache, HOST, candidate(UPPER_IN), W, 'same'), undefined, 'not itself');
  assert.equal(lookups, [`${INDEX.fingerprint}=${key}`, `${INDEX.fingerprint}=${key}`, `${INDEX.fingerprint}=${key}`]);
});

test('the sweeper removes claims older than max(window, 10 min) and keeps younger ones', async () => {
  const { kube, intake } = world();
  await intake(LOWER);
  const log = pino({ level: 'silent' });
  assert.is(await sweepNotificationClaims(kube, NS, new Date(), log), 0);
  assert.is(await sweepNotificationClaims(kube, NS, new Date(Date.now() + CLAIM_MIN_AGE_MS + 5_000), log), 1);
  assert.equal((kube as FakeKube).all(RESOURCES.configMaps, NS), []);
});

test.run();
