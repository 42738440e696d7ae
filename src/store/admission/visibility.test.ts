// When a replica shows a sealed notification it did not create (visibility.ts):
// once its duplicate claim stands behind it, never while it lost the claim's race.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { RESOURCES } from '../../k8s/resources.ts';
import type { Notification } from '../../model/types.ts';
import type { ConfigMap } from '../configmap.ts';
import { payloadHash } from './fingerprints.ts';
import { SEALED_CLAIM_GRACE_MS } from './standing.ts';
import { notificationClaimName } from '../names.ts';
import { SealedVisibility, sharedSealedVisibility } from './visibility.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { EARLY_HOST_UUID, EARLY_PAYLOAD, earlyNotification } from '../testing/early-notification.ts';

const NS = 'unit';
const W = 180;
const CLAIM = notificationClaimName('PROCESS', EARLY_HOST_UUID, payloadHash(EARLY_PAYLOAD));
const T = '2026-01-02T03:00:00';

/** A notification as the seal shows it before the engine's first write (seal.ts sealedView). */
const sealed = (name: string, generatedTime = T, ageMs = 0): Notification =>
  earlyNotification(name, generatedTime, ageMs, { sealedView: true });

/** A notification cache reduced to what SealedVisibility uses, fed by hand. */
function fakeCache() {
  const objects = new Map<string, Notification>();
  const handlers: Record<string, Array<(n: Notification, old?: Notification) => void>> = {};
  return {
    get: (name: string) => objects.get(name),
    on(event: string, h: (n: Notification, old?: Notification) => void) {
      (handlers[event] ??= []).push(h);
    },
    add(n: Notification) {
      objects.set(n.metadata.name ?? '', n);
      for (const h of handlers.add ?? []) h(n);
    },
    remove(n: Notification) {
      objects.delete(n.metadata.name ?? '');
      for (const h of handlers.delete ?? []) h(n, n);
    },
  };
}

function plantClaim(kube: FakeKube, holder: string, generatedTime = T) {
  return kube.create<ConfigMap>(RESOURCES.configMaps, NS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CLAIM },
    data: { generatedTime, notification: holder, uuid: `uuid-${holder}`, acceptedAt: String(Date.now()) },
  });
}

function setup() {
  const kube = new FakeKube();
  const cache = fakeCache();
  const visibility = new SealedVisibility({
    kube,
    namespace: NS,
    cache,
    windowSeconds: W,
    now: () => new Date(),
    log: pino({ level: 'silent' }),
  });
  return { kube, cache, visibility };
}

const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};

test("another replica's sealed notification is hidden until its claim names it, then shown", async () => {
  const { kube, cache, visibility } = setup();
  const n = sealed('n1');
  cache.add(n);
  assert.ok(visibility.hides(n), 'its claim is still in flight');
  await new Promise((r) => setTimeout(r, 120));
  assert.ok(visibility.hides(n), 'still no claim: still hidden');
  await plantClaim(kube, 'n1');
  await until(() => !visibility.hides(n), 'shown once the claim names it');
  visibility.stop();
});

test('the loser of a duplicate race stays hidden, even past the grace, until it is deleted', async () => {
  const { kube, cache, visibility } = setup();
  await plantClaim(kube, 'winner');
  const loser = sealed('loser', '2026-01-02T03:01:00');
  cache.add(loser);
  await until(() => (kube.calls.get ?? 0) >= 1, 'its claim was read');
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(visibility.hides(loser));
  assert.ok(visibility.hides({ ...loser, metadata: { ...loser.metadata, creationTimestamp: '2026-01-02T03:01:00Z' } }));
  cache.remove(loser);
  assert.not.ok(visibility.hides(sealed('loser', '2026-01-02T03:01:00', SEALED_CLAIM_GRACE_MS)), 'forgotten');
  visibility.stop();
});

test("this replica's own intake shows its notification when its claim accepted it, without reading the claim", async () => {
  const { kube, cache, visibility } = setup();
  visibility.intakeStarted('mine');
  const n = sealed('mine');
  cache.add(n); // the create's watch event, before the claim answered
  assert.ok(visibility.hides(n), 'not shown before the POST is answered');
  visibility.intakeEnded('mine', true);
  assert.not.ok(visibility.hides(n));
  await new Promise((r) => setTimeout(r, 80));
  assert.is(kube.calls.get ?? 0, 0, 'no claim read');
  visibility.stop();
});

test('an undecided sealed notification past the grace is shown; one the engine wrote is never hidden', () => {
  const { visibility } = setup();
  assert.not.ok(visibility.hides(sealed('old', T, SEALED_CLAIM_GRACE_MS + 1000)));
  const written = sealed('written');
  delete written.status?.admittedBySeal;
  assert.not.ok(visibility.hides(written));
  visibility.stop();
});

test('a read by uuid settles a provisional notification at once', async () => {
  const { kube, cache, visibility } = setup();
  await plantClaim(kube, 'n1');
  const n = sealed('n1');
  visibility.intakeStarted('n1'); // keeps the background probe away, as another replica's view would not
  cache.add(n);
  visibility.intakeEnded('n1', false);
  await visibility.settle(n);
  assert.not.ok(visibility.hides(n));
  visibility.stop();
});

test('stores over one cache share one SealedVisibility, stopped with its last user', () => {
  const { kube, cache } = setup();
  const deps = { kube, namespace: NS, cache, windowSeconds: W, now: () => new Date(), log: pino({ level: 'silent' }) };
  const a = sharedSealedVisibility(deps);
  const b = sharedSealedVisibility(deps);
  assert.is(a.visibility, b.visibility);
  a.release();
  a.release();
  const c = sharedSealedVisibility(deps);
  assert.is(c.visibility, a.visibility, 'still held by b');
  b.release();
  c.release();
  assert.is.not(sharedSealedVisibility(deps).visibility, a.visibility, 'a new one after the last release');
});

test.run();
