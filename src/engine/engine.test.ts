import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../k8s/resources.ts';
import type { Notification } from '../model/types.ts';
import { createEngine } from './engine.ts';
import type { Engine } from './engine.ts';
import type { ControllerFactory } from '../runtime/controller.ts';
import { Manager } from '../runtime/manager.ts';
import type { LeaderRunner } from '../runtime/manager.ts';
import type { HostWorkflow } from './workflows/recovery-driver.ts';
import { taskflowDriver } from './workflows/driver.ts';
import type { KubeInformer } from '../runtime/informer.ts';
import type { World } from './testing/fixtures.ts';
import { FakeNova, makeServer } from '../testing/fake-nova.ts';
import { counterIds, host, notification, NS, quietLog, segment, testConfig, world } from './testing/fixtures.ts';

/** One shared Lease: the first campaigner leads until revoked or stopped, then the next one takes over. */
class FakeLease {
  holder: string | undefined;
  /** Identities that lost the lease and (in these tests) do not get it back. */
  private readonly blocked = new Set<string>();
  private readonly revokers = new Map<string, AbortController>();
  private wake: Array<() => void> = [];

  runner: LeaderRunner = async ({ identity, lead, signal }) => {
    while (!signal.aborted) {
      if (this.holder === undefined && !this.blocked.has(identity)) {
        this.holder = identity;
        const leading = new AbortController();
        this.revokers.set(identity, leading);
        const onStop = () => leading.abort();
        signal.addEventListener('abort', onStop, { once: true });
        await lead(leading.signal);
        signal.removeEventListener('abort', onStop);
        this.holder = undefined;
        const waiting = this.wake;
        this.wake = [];
        for (const w of waiting) w();
        continue;
      }
      await new Promise<void>((r) => {
        this.wake.push(r);
        signal.addEventListener('abort', () => r(), { once: true });
      });
    }
  };

  /** The holder loses the lease (as when it cannot renew in time). */
  revoke(): void {
    if (!this.holder) return;
    this.blocked.add(this.holder);
    this.revokers.get(this.holder)?.abort();
  }
}

/** A controller that runs reconciles one at a time, in order. */
function fakeController(calls: string[]): ControllerFactory {
  return (_name, reconcile) => {
    const queue: string[] = [];
    let stopped: AbortSignal | undefined;
    let running = false;
    const pump = async (): Promise<void> => {
      if (running) return;
      running = true;
      while (queue.length > 0 && !stopped?.aborted) {
        const key = queue.shift() ?? '';
        calls.push(key);
        const result = await reconcile(key, stopped ?? new AbortController().signal);
        if (result?.requeueAfterMs) setTimeout(() => queue.push(key), result.requeueAfterMs);
      }
      running = false;
    };
    return {
      enqueue: (key) => {
        if (!queue.includes(key)) queue.push(key);
        setImmediate(() => void pump());
      },
      enqueueAfter: (key, ms) => setTimeout(() => queue.push(key), ms),
      start: (signal) =>
        new Promise<void>((resolve) => {
          stopped = signal;
          void pump();
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    };
  };
}

/** The engine and its manager's start and stop, which the process (here, the test) runs. */
type TestEngine = Engine & { start(): Promise<void>; stop(): Promise<void> };
function onManager(manager: Manager, engine: Engine): TestEngine {
  return Object.assign(engine, { start: () => manager.start(), stop: () => manager.stop() });
}

function engineFor(
  w: World,
  identity: string,
  lease: Pick<FakeLease, 'runner'>,
  nova: FakeNova,
  hostWorkflow: HostWorkflow,
  calls: string[],
  caches: Map<string, KubeInformer<never>> = new Map(),
): TestEngine {
  const manager = new Manager({ kube: w.kube, namespace: NS, identity, log: quietLog, runLeader: lease.runner });
  return onManager(
    manager,
    createEngine({
      kube: w.kube,
      namespace: NS,
      config: testConfig(),
      nova,
      log: quietLog,
      identity,
      manager,
      informerFactory: (ref, opts) => {
        const informer = w.informers.factory(ref, opts);
        caches.set(ref.plural, informer as never);
        return informer;
      },
      makeController: fakeController(calls),
      events: { onNotification: () => {}, onHost: () => {} },
      driver: { ...taskflowDriver(), host: hostWorkflow },
      vmoveIds: counterIds,
    }),
  );
}

/** The engine runs on the wall clock here: its notifications are generated now, inside notifications_expired_interval. */
const NOW = { generatedTime: new Date().toISOString().replace(/\.\d+Z$/, '') };

async function eventually(what: string, ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('only the leader processes; losing the lease hands the run over and the new leader completes it', async () => {
  const w = await world();
  const nova = new FakeNova();
  nova.addServer(makeServer('s1'));
  w.kube.seed(RESOURCES.segments, segment('seg', 'seg-uuid'));
  w.kube.seed(RESOURCES.hosts, host('compute-1', 'host-uuid-1', 'seg-uuid'));
  const lease = new FakeLease();
  const attempts: Array<{ engine: string; run: number }> = [];
  const workflow =
    (engine: string): HostWorkflow =>
    async (ctx) => {
      attempts.push({ engine, run: ctx.run });
      if (engine === 'engine-a')
        await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    };
  const callsA: string[] = [];
  const callsB: string[] = [];
  const a = engineFor(w, 'engine-a', lease, nova, workflow('engine-a'), callsA);
  await a.start();
  await eventually('a leads', () => a.isLeading());
  const b = engineFor(w, 'engine-b', lease, nova, workflow('engine-b'), callsB);
  await b.start();
  assert.ok(a.ready() && b.ready());

  w.kube.seed(
    RESOURCES.notifications,
    notification('n1', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, NOW),
  );
  await eventually('a runs the workflow', () => attempts.length === 1);
  assert.equal(callsB, []);
  assert.not.ok(b.isLeading());

  lease.revoke();
  await eventually(
    'b finishes the run',
    () => w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.phase === 'finished',
  );
  assert.equal(attempts, [
    { engine: 'engine-a', run: 0 },
    { engine: 'engine-b', run: 0 },
  ]);
  const n = w.kube.peek<Notification>(RESOURCES.notifications, 'n1');
  assert.is(n.status?.runs, 1);
  assert.match(String((n.status?.engine as { owner?: string }).owner), /^engine-b#/);
  await a.stop();
  await b.stop();
});

test("the engine's cache holds no finished notification: it watches unfinished ones only", async () => {
  const w = await world();
  const nova = new FakeNova();
  w.kube.seed(RESOURCES.segments, segment('seg', 'seg-uuid'));
  w.kube.seed(RESOURCES.hosts, host('compute-1', 'host-uuid-1', 'seg-uuid'));
  const done = notification('done', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, NOW);
  done.status = { ...done.status, phase: 'finished' };
  w.kube.seed(RESOURCES.notifications, done);
  const failed = notification('failed', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, NOW);
  failed.status = { ...failed.status, phase: 'failed' };
  w.kube.seed(RESOURCES.notifications, failed);
  const lease = new FakeLease();
  const caches = new Map<string, KubeInformer<never>>();
  let ran = 0;
  const e = engineFor(w, 'engine-a', lease, nova, async () => void ran++, [], caches);
  await e.start();
  await eventually('leading', () => e.isLeading());
  const cache = caches.get(RESOURCES.notifications.plural) as unknown as KubeInformer<Notification>;
  assert.equal(cache.list(), [], 'finished and failed notifications are never cached');

  w.kube.seed(
    RESOURCES.notifications,
    notification('n1', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, NOW),
  );
  await eventually(
    'n1 finishes',
    () => w.kube.peek<Notification>(RESOURCES.notifications, 'n1').status?.phase === 'finished',
  );
  await eventually('the finished notification leaves the cache', () => cache.list().length === 0);
  assert.is(ran, 1);
  await e.stop();
});

test('a leader whose Lease is no longer held sends no Nova side effect: the run is cancelled, nothing unlocked (hypothesis 4)', async () => {
  const w = await world();
  const nova = new FakeNova();
  nova.addServer(makeServer('s1'));
  w.kube.seed(RESOURCES.segments, segment('seg', 'seg-uuid'));
  w.kube.seed(RESOURCES.hosts, host('compute-1', 'host-uuid-1', 'seg-uuid'));
  // A Lease that this engine holds until `held` turns false, as after a stall past its duration:
  // the leading signal has not aborted yet (the renew loop has not run), only the hold knows.
  let held = true;
  const runner: LeaderRunner = async ({ lead, signal }) => {
    await lead(signal, { held: () => held });
  };
  let locked = false;
  let refused: unknown;
  let cancelled = false;
  const workflow: HostWorkflow = async (ctx) => {
    await ctx.nova.lockServer('s1');
    locked = true;
    await eventually('the lease to be lost', () => !held);
    refused = await ctx.nova.evacuate('s1', undefined).catch((e: unknown) => e);
    cancelled = ctx.signal.aborted;
    // What the evacuation procedure does on a cancelled run: try to unlock what it locked.
    await ctx.nova.unlockServer('s1').catch(() => undefined);
    throw ctx.signal.reason;
  };
  const calls: string[] = [];
  const e = engineFor(w, 'engine-a', { runner }, nova, workflow, calls);
  await e.start();
  w.kube.seed(
    RESOURCES.notifications,
    notification('n1', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, NOW),
  );
  await eventually('the server is locked', () => locked);
  held = false;
  await eventually('the run is cancelled', () => refused !== undefined);
  assert.is((refused as Error).name, 'LeaseNotHeld');
  assert.ok(cancelled, 'the run signal aborts before the refusal is seen');
  assert.is(nova.count('evacuate'), 0);
  assert.is(nova.count('unlockServer'), 0, 'no unlock after a lost lease');
  assert.is(nova.servers.get('s1')?.locked, true);
  await e.stop();
});

test('a graceful stop hands the run over while the Lease is still held: the servers it locked are unlocked before the Lease is released', async () => {
  const w = await world();
  const nova = new FakeNova();
  nova.addServer(makeServer('s1'));
  w.kube.seed(RESOURCES.segments, segment('seg', 'seg-uuid'));
  w.kube.seed(RESOURCES.hosts, host('compute-1', 'host-uuid-1', 'seg-uuid'));
  const order: string[] = [];
  let released = false;
  const runner: LeaderRunner = async ({ lead, signal }) => {
    await lead(signal, { held: () => !released });
    released = true;
    order.push('lease released');
  };
  let locked = false;
  const workflow: HostWorkflow = async (ctx) => {
    await ctx.nova.lockServer('s1');
    locked = true;
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    await ctx.nova.unlockServer('s1');
    order.push('unlocked');
    throw ctx.signal.reason;
  };
  const e = engineFor(w, 'engine-a', { runner }, nova, workflow, []);
  await e.start();
  w.kube.seed(
    RESOURCES.notifications,
    notification('n1', 'COMPUTE_HOST', { event: 'STOPPED', host_status: 'NORMAL' }, NOW),
  );
  await eventually('the server is locked', () => locked);
  await e.stop();
  assert.equal(order, ['unlocked', 'lease released']);
  assert.is(nova.servers.get('s1')?.locked, false);
  assert.not.ok(e.isLeading());
});

test.run();
