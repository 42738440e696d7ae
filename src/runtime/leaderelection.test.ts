// Leader election timing on the monotonic clock, and the LeaseHold that
// fences a leader's side effects (hypothesis 4 of the fault review). The
// Lease lives in FakeKube, with resourceVersion conflicts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { RESOURCES } from '../k8s/resources.ts';
import { FakeKube } from '../testing/fake-kube.ts';
import { runLeaderElection } from './leaderelection.ts';
import type { LeaderElectionOptions, LeaseHold } from './leaderelection.ts';

const log = pino({ level: 'silent' });

interface StoredLease {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: { holderIdentity?: string | null; renewTime?: string | null; [k: string]: unknown };
}

/** The Lease on a FakeKube; store.put writes it as another holder would (bumping its resourceVersion). */
function leaseStore() {
  const kube = new FakeKube();
  const store = {
    get current() {
      return kube.all<StoredLease>(RESOURCES.leases)[0];
    },
    put(l: StoredLease) {
      return kube.seed(RESOURCES.leases, l);
    },
  };
  return { store, kube };
}

const timing = { leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 100, jitterFactor: 1.2 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `me` for Lease ns/l on `kube` with the test timing (and `more`); its
 * lead work holds until the run is stopped. hold() is its LeaseHold once it
 * leads, ledAfter() how long after the start it first led (ms).
 */
function leader(kube: FakeKube, more: Partial<LeaderElectionOptions> = {}) {
  const stop = new AbortController();
  const started = performance.now();
  let hold: LeaseHold | undefined;
  let ledAfter: number | undefined;
  const done = runLeaderElection({
    kube,
    namespace: 'ns',
    name: 'l',
    identity: 'me',
    signal: stop.signal,
    log,
    ...timing,
    onStartedLeading: async (signal, h) => {
      hold = h;
      ledAfter ??= performance.now() - started;
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    },
    onStoppedLeading: () => undefined,
    ...more,
  });
  return {
    hold: () => hold,
    ledAfter: () => ledAfter,
    /** Waits up to a second for the first lead. */
    async leading(): Promise<void> {
      for (let i = 0; i < 40 && !hold; i++) await sleep(25);
    },
    async stop(): Promise<void> {
      stop.abort();
      await done;
    },
  };
}

test('a wall-clock jump does not let a follower take over early: expiry is timed on the monotonic clock', async () => {
  const { store, kube } = leaseStore();
  // Held by someone else who has stopped renewing: a follower must still wait leaseDuration on ITS monotonic clock.
  store.put({ metadata: { name: 'l', namespace: 'ns' }, spec: { holderIdentity: 'other', leaseDurationSeconds: 1 } });
  let jump = 0;
  const me = leader(kube, { now: () => Date.now() + jump });
  await sleep(150);
  jump = 3_600_000; // the wall clock steps an hour ahead
  await sleep(400);
  assert.is(me.ledAfter(), undefined, 'not before the lease has been idle for its duration');
  for (let i = 0; i < 40 && me.ledAfter() === undefined; i++) await sleep(50);
  const ledAt = me.ledAfter();
  assert.ok(ledAt !== undefined && ledAt >= 1_000, `took over after ${ledAt} ms`);
  await me.stop();
});

test('LeaseHold: held while renewals succeed; false as soon as the process was stalled past the renew deadline', async () => {
  const { kube } = leaseStore();
  let skew = 0;
  const me = leader(kube, { monotonicNow: () => performance.now() + skew });
  await me.leading();
  const hold = me.hold();
  assert.ok(hold?.held(), 'held while leading');
  await sleep(400);
  assert.ok(hold!.held(), 'still held: renewals every retryPeriod');
  // A stall: monotonic time moves on by more than the lease while nothing ran.
  skew = 5_000;
  assert.not.ok(hold!.held(), 'not held right after the stall, before any renewal was tried');
  await me.stop();
});

test('a leader that finds the Lease taken by another steps down at once, not after the renew deadline', async () => {
  const { store, kube } = leaseStore();
  let stoppedAt: number | undefined;
  const me = leader(kube, { renewDeadlineMs: 900, onStoppedLeading: () => (stoppedAt ??= performance.now()) });
  await me.leading();
  const current = store.current!;
  const takenAt = performance.now();
  store.put({ ...current, spec: { ...current.spec, holderIdentity: 'other' } });
  for (let i = 0; i < 40 && stoppedAt === undefined; i++) await sleep(25);
  assert.ok(stoppedAt !== undefined, 'stepped down');
  assert.ok(stoppedAt - takenAt < 500, `stepped down ${Math.round(stoppedAt - takenAt)} ms after the take-over`);
  assert.not.ok(me.hold()!.held());
  await me.stop();
});

test('a leader renews with one write over the Lease it last wrote, without reading it first', async () => {
  const { store, kube } = leaseStore();
  const me = leader(kube);
  try {
    await me.leading();
    const gets = kube.callsOf('get').length;
    const writes = kube.callsOf('replace').length;
    const renewedBefore = store.current!.spec?.renewTime;
    await sleep(550); // about five renewals at retryPeriod 100 ms
    assert.ok(kube.callsOf('replace').length - writes >= 3, 'renewed');
    assert.is(kube.callsOf('get').length, gets, 'no read before a renewal');
    assert.is.not(store.current!.spec?.renewTime, renewedBefore);
    assert.ok(me.hold()!.held());
    assert.is(store.current!.spec?.holderIdentity, 'me');
  } finally {
    await me.stop();
  }
});

test('a timed-out attempt whose read answers after this process acquired the Lease does not make it look taken over', async () => {
  const { store, kube } = leaseStore();
  store.put({ metadata: { name: 'l', namespace: 'ns' }, spec: { holderIdentity: 'other', leaseDurationSeconds: 1 } });
  // The first read is answered 1.5 s late, with the Lease as it was when it was asked (held by `other`): by then
  // its attempt timed out (renewDeadline 600 ms), `other` released the Lease and the next attempt took it.
  const get = kube.get.bind(kube);
  let first = true;
  kube.get = (async (...args: Parameters<typeof kube.get>) => {
    if (!first) return get(...args);
    first = false;
    const asked = structuredClone(await get(...args));
    await sleep(1_500);
    return asked;
  }) as typeof kube.get;
  const me = leader(kube);
  try {
    await sleep(100);
    const current = store.current!;
    store.put({ ...current, spec: { ...current.spec, holderIdentity: null } });
    await me.leading();
    assert.ok(me.hold()?.held(), 'leads');
    await sleep(1_700); // past the late answer
    assert.is(store.current!.spec?.holderIdentity, 'me', 'still renewing');
    assert.ok(me.hold()!.held(), 'the late answer of an abandoned attempt changed nothing');
  } finally {
    await me.stop();
  }
});

test.run();
