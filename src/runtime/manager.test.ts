import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { WatchEvent } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { LeaseHold } from './leaderelection.ts';
import { Manager } from './manager.ts';
import type { LeaderRunner, Runnable } from './manager.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { until } from '../testing/until.ts';
import type { Informer, KubeObjectLike } from './types.ts';

const log = pino({ level: 'silent' });
const tick = () => new Promise((r) => setTimeout(r, 5));

/** A cache whose first sync the test completes; it records start, sync and stop. */
function fakeCache(name: string, events: string[]) {
  let synced = false;
  let release!: () => void;
  let fail!: (e: Error) => void;
  const first = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  const cache = {
    start: () => {
      events.push(`${name} start`);
      return first;
    },
    stop: () => {
      events.push(`${name} stop`);
      fail(new Error('stopped'));
    },
    hasSynced: () => synced,
    health: () => ({ synced, serving: synced }),
  } as unknown as Informer<KubeObjectLike>;
  return {
    cache,
    sync: () => {
      synced = true;
      events.push(`${name} synced`);
      release();
    },
  };
}

/** A Lease runner that leads at once, records the campaign and the release, and can revoke the term. */
function fakeLeases(events: string[]) {
  const campaigns: string[] = [];
  const terms = new Map<string, AbortController>();
  const runner: LeaderRunner = async ({ name, lead, signal }) => {
    campaigns.push(name);
    while (!signal.aborted) {
      const term = new AbortController();
      terms.set(name, term);
      const onStop = () => term.abort();
      signal.addEventListener('abort', onStop, { once: true });
      const hold: LeaseHold = { held: () => !term.signal.aborted };
      await lead(term.signal, hold);
      signal.removeEventListener('abort', onStop);
      events.push(`${name} released`);
      if (!signal.aborted) await tick();
    }
  };
  return { runner, campaigns, revoke: (name: string) => terms.get(name)?.abort() };
}

/** A runnable that records its start and stop, and runs until its signal aborts. */
function recording(name: string, events: string[], seen?: { hold?: LeaseHold }): Runnable {
  return {
    start: (signal, hold) => {
      events.push(`${name} start`);
      if (seen) seen.hold = hold;
      return new Promise<void>((resolve) =>
        signal.addEventListener(
          'abort',
          () => {
            events.push(`${name} stop`);
            resolve();
          },
          { once: true },
        ),
      );
    },
  };
}

function manager(events: string[]) {
  const leases = fakeLeases(events);
  const kube = scriptedKube();
  const m = new Manager({ kube, namespace: 'ns', identity: 'me', log, runLeader: leases.runner });
  return { m, leases };
}

test('start order: caches synced, then runnables on every replica, then leader-elected runnables', async () => {
  const events: string[] = [];
  const { m } = manager(events);
  const a = fakeCache('cache-a', events);
  const b = fakeCache('cache-b', events);
  m.addCache(a.cache);
  m.addCache(b.cache);
  m.add(recording('server', events), { name: 'server', needLeaderElection: false });
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'masakari-engine' });
  const started = m.start();
  await tick();
  assert.equal(events, ['cache-a start', 'cache-b start'], 'nothing runs before the caches synced');
  assert.not.ok(m.ready());
  a.sync();
  await tick();
  assert.not.ok(events.includes('server start'));
  b.sync();
  await started;
  await until(() => m.isLeading('masakari-engine'));
  assert.equal(events.slice(4), ['server start', 'engine start']);
  assert.ok(m.ready());
  await m.stop();
});

test('stop order: runnables on every replica, leader-elected runnables, stop hooks, caches, then the Lease', async () => {
  const events: string[] = [];
  const { m } = manager(events);
  const c = fakeCache('cache', events);
  m.addCache(c.cache);
  m.add(recording('server', events), { name: 'server', needLeaderElection: false });
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'masakari-engine' });
  m.onStop(async () => void events.push('flush events'));
  c.sync();
  await m.start();
  await until(() => events.includes('engine start'));
  events.length = 0;
  await m.stop();
  assert.equal(events, ['server stop', 'engine stop', 'flush events', 'cache stop', 'masakari-engine released']);
  assert.not.ok(m.isLeading('masakari-engine'));
});

test('one election per Lease name, whatever the number of runnables under it; each runnable gets the term hold', async () => {
  const events: string[] = [];
  const { m, leases } = manager(events);
  const seen: { hold?: LeaseHold } = {};
  m.add(recording('store-a', events, seen), { name: 'store-a', needLeaderElection: true, lease: 'store' });
  m.add(recording('store-b', events), { name: 'store-b', needLeaderElection: true, lease: 'store' });
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'engine' });
  await m.start();
  await until(() => ['store-a start', 'store-b start', 'engine start'].every((e) => events.includes(e)));
  assert.equal([...leases.campaigns].sort(), ['engine', 'store']);
  assert.ok(seen.hold?.held());
  // Losing one Lease stops its runnables only; the next term starts them again.
  leases.revoke('store');
  await until(() => events.filter((e) => e === 'store-a start').length === 2);
  assert.ok(events.includes('store-b stop'));
  assert.not.ok(events.includes('engine stop'));
  await m.stop();
});

test('a runnable added after start runs at once; one added to a Lease being led joins the current term', async () => {
  const events: string[] = [];
  const { m, leases } = manager(events);
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'engine' });
  await m.start();
  await until(() => m.isLeading('engine'));
  m.add(recording('late-server', events), { name: 'late-server', needLeaderElection: false });
  m.add(recording('late-engine', events), { name: 'late-engine', needLeaderElection: true, lease: 'engine' });
  m.add(recording('other', events), { name: 'other', needLeaderElection: true, lease: 'other' });
  await until(() => ['late-server start', 'late-engine start', 'other start'].every((e) => events.includes(e)));
  assert.equal([...leases.campaigns].sort(), ['engine', 'other']);
  await m.stop();
  assert.ok(events.includes('late-engine stop'));
});

test('the end-of-term hooks run once every runnable of the term stopped, still under the Lease, and stop() waits for them', async () => {
  const events: string[] = [];
  const { m, leases } = manager(events);
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'engine' });
  m.add(recording('periodic', events), { name: 'periodic', needLeaderElection: true, lease: 'engine' });
  m.onTermEnd('engine', async () => {
    await tick();
    events.push('hand over');
  });
  m.onTermEnd('nothing-to-lead', () => void events.push('never'));
  m.onStop(async () => void events.push('flush events'));
  await m.start();
  await until(() => events.includes('periodic start'));
  leases.revoke('engine');
  await until(() => events.filter((e) => e === 'periodic start').length === 2);
  assert.equal(events.slice(2, 6), ['engine stop', 'periodic stop', 'hand over', 'engine released']);
  events.length = 0;
  await m.stop();
  assert.equal(events, ['engine stop', 'periodic stop', 'hand over', 'flush events', 'engine released']);
  assert.equal(leases.campaigns, ['engine'], 'a Lease with hooks only is not campaigned for');
});

test('a failing end-of-term hook is logged; the hooks after it still run and the Lease is still released', async () => {
  const events: string[] = [];
  const { m } = manager(events);
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'engine' });
  m.onTermEnd('engine', () => Promise.reject(new Error('boom')));
  m.onTermEnd('engine', () => {
    throw new Error('boom, synchronously');
  });
  m.onTermEnd('engine', () => void events.push('last hook'));
  await m.start();
  await until(() => m.isLeading('engine'));
  await m.stop();
  assert.equal(events, ['engine start', 'engine stop', 'last hook', 'engine released']);
});

test('a failing runnable is logged, not thrown; the others keep running', async () => {
  const events: string[] = [];
  const { m } = manager(events);
  m.add({ start: () => Promise.reject(new Error('boom')) }, { name: 'broken', needLeaderElection: false });
  m.add(recording('server', events), { name: 'server', needLeaderElection: false });
  await m.start();
  await tick();
  assert.equal(events, ['server start']);
  await m.stop();
  assert.equal(events, ['server start', 'server stop']);
});

test('a stop before the caches synced makes start() reject and starts nothing', async () => {
  const events: string[] = [];
  const { m, leases } = manager(events);
  const c = fakeCache('cache', events);
  m.addCache(c.cache);
  m.add(recording('engine', events), { name: 'engine', needLeaderElection: true, lease: 'engine' });
  const started = m.start();
  await m.stop();
  await started.then(
    () => assert.unreachable('start() resolved'),
    () => undefined,
  );
  assert.equal(leases.campaigns, []);
  assert.equal(events, ['cache start', 'cache stop']);
});

test('caches asked for by several components share one list and one watch, and the manager starts and stops them', async () => {
  const watches: string[] = [];
  let open = 0;
  const kube = scriptedKube({
    list: () => ({ metadata: { resourceVersion: '1' }, items: [] }),
    watch: (ref, _ns, _opts, _onEvent: (e: WatchEvent<unknown>) => void, signal) =>
      new Promise<void>((resolve) => {
        watches.push(ref.plural);
        open++;
        signal.addEventListener('abort', () => {
          open--;
          resolve();
        });
      }),
  });
  const m = new Manager({ kube, namespace: 'ns', identity: 'me', log, runLeader: fakeLeases([]).runner });
  const api = m.informer(RESOURCES.hosts, { namespace: 'ns' });
  const engine = m.informerFactory(RESOURCES.hosts, { namespace: 'ns' });
  await m.start();
  await until(() => open === 1);
  assert.ok(api.hasSynced() && engine.hasSynced());
  assert.equal(watches, ['hahosts']);
  await m.stop();
  await until(() => open === 0);
  assert.equal(m.informers.describe(), []);
});

test('a process manager compacts the heap once its caches synced, before any runnable starts', async () => {
  const events: string[] = [];
  const logged = pino({ level: 'info' }, { write: (line: string) => events.push(JSON.parse(line).msg) });
  const leases = fakeLeases(events);
  const m = new Manager({
    kube: scriptedKube(),
    namespace: 'ns',
    identity: 'me',
    log: logged,
    runLeader: leases.runner,
    compactHeapAfterSync: true,
  });
  const a = fakeCache('cache-a', events);
  m.addCache(a.cache);
  m.add(recording('server', events), { name: 'server', needLeaderElection: false });
  const started = m.start();
  a.sync();
  await started;
  assert.equal(events, ['cache-a start', 'cache-a synced', 'heap compacted after the first list', 'server start']);
  await m.stop();
});

test('holdsLease: only during a term of the Lease, and only while its hold has not lapsed', async () => {
  let lapsed = false;
  let endTerm!: () => void;
  const runner: LeaderRunner = async ({ lead, signal }) => {
    const term = new AbortController();
    endTerm = () => term.abort();
    signal.addEventListener('abort', () => term.abort(), { once: true });
    await lead(term.signal, { held: () => !lapsed });
  };
  const m = new Manager({ kube: scriptedKube(), namespace: 'ns', identity: 'me', log, runLeader: runner });
  assert.not.ok(m.holdsLease('masakari-detection'), 'before any term');
  m.add(recording('detection', []), { name: 'detection', needLeaderElection: true, lease: 'masakari-detection' });
  await m.start();
  await until(() => m.isLeading('masakari-detection'));
  assert.ok(m.holdsLease('masakari-detection'));
  assert.not.ok(m.holdsLease('masakari-engine'), 'another Lease');
  // A stall past the renew deadline: still in the term, no longer holding.
  lapsed = true;
  assert.ok(m.isLeading('masakari-detection'));
  assert.not.ok(m.holdsLease('masakari-detection'));
  lapsed = false;
  endTerm();
  await until(() => !m.isLeading('masakari-detection'));
  assert.not.ok(m.holdsLease('masakari-detection'), 'after the term');
  await m.stop();
});

test.run();
