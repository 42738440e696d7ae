import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { KubeError } from '../k8s/client.ts';
import type { KubeList, WatchEvent, WatchOptions } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { KubeInformer } from './informer.ts';
import type { InformerDeps } from './informer-deps.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { until } from '../testing/until.ts';
import type { InformerOptions } from './types.ts';

interface Obj {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  data?: string;
}
const obj = (name: string, rv: number, data?: string, labels?: Record<string, string>): Obj => ({
  metadata: { name, resourceVersion: String(rv), ...(labels ? { labels } : {}) },
  ...(data ? { data } : {}),
});

const log = pino({ level: 'silent' });

/** A watch the test drives: emit events, end it normally or fail it. */
class Session {
  ended = false;
  constructor(
    readonly opts: WatchOptions,
    private readonly onEvent: (e: WatchEvent<Obj>) => void,
    readonly signal: AbortSignal,
    private readonly finish: (err?: unknown) => void,
  ) {
    signal.addEventListener('abort', () => this.end());
  }
  emit(type: WatchEvent<Obj>['type'], o: Obj): void {
    this.onEvent({ type, object: o });
  }
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.finish();
  }
  fail(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.finish(err);
  }
}

function setup(
  lists: Array<KubeList<Obj> | KubeError>,
  opts: Partial<InformerOptions<Obj>> = {},
  deps: Partial<InformerDeps> = {},
) {
  const sessions: Session[] = [];
  let listCalls = 0;
  const kube = scriptedKube({
    list: () => {
      const next = lists[Math.min(listCalls++, lists.length - 1)]!;
      if (next instanceof KubeError) throw next;
      return next;
    },
    watch: (_ref, _ns, o, onEvent, signal) =>
      new Promise<void>((resolve, reject) => {
        sessions.push(
          new Session(o, onEvent as (e: WatchEvent<Obj>) => void, signal, (err) => (err ? reject(err) : resolve())),
        );
      }),
  });
  const informer = new KubeInformer<Obj>(
    RESOURCES.configMaps,
    { namespace: 'ns', ...opts },
    { kube, log, backoff: { delayMs: 1, capMs: 5 }, healthyAfterMs: 0, ...deps },
  );
  const events: string[] = [];
  informer.on('add', (o) => events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`));
  informer.on('update', (o, old) =>
    events.push(`update ${o.metadata.name}@${old?.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
  );
  informer.on('delete', (o) => events.push(`delete ${o.metadata.name}`));
  return { kube, informer, sessions, events, listCalls: () => listCalls };
}

const list = (rv: number, ...items: Obj[]): KubeList<Obj> => ({ metadata: { resourceVersion: String(rv) }, items });

test('start resolves once the first list is cached, announcing each object as an add', async () => {
  const h = setup([list(10, obj('a', 5), obj('b', 7))]);
  assert.not.ok(h.informer.hasSynced());
  await h.informer.start();
  assert.ok(h.informer.hasSynced());
  assert.equal(h.events, ['add a@5', 'add b@7']);
  assert.is(h.informer.get('a')?.metadata.resourceVersion, '5');
  assert.is(h.informer.list().length, 2);
  assert.is(h.informer.lastResourceVersion(), '10');
  h.informer.stop();
});

test('the watch starts at the list version with bookmarks and a ~300 s server timeout', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  const o = h.sessions[0]!.opts;
  assert.is(o.resourceVersion, '10');
  assert.is(o.allowWatchBookmarks, true);
  assert.ok(o.timeoutSeconds! >= 270 && o.timeoutSeconds! <= 330);
  h.informer.stop();
});

test('after a dropped watch (the API server restarting) the next watch is a short one, then full length again', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.emit('ADDED', obj('a', 11));
  h.sessions[0]!.fail(new KubeError(0, 'Transport', 'WATCH configmaps ns: SocketError: other side closed'));
  await until(() => h.sessions.length === 2);
  const short = h.sessions[1]!.opts;
  assert.is(short.resourceVersion, '11', 'resumes where it was');
  assert.is(short.timeoutSeconds, 10, 'a watch opened on a server still starting is replaced within seconds');
  h.sessions[1]!.end(); // the server ends it after its timeout
  await until(() => h.sessions.length === 3);
  assert.is(h.sessions[2]!.opts.resourceVersion, '11', 'no relist: the new watch replays from the same version');
  assert.ok(h.sessions[2]!.opts.timeoutSeconds! >= 270, 'full length once a short one ran its course');
  assert.is(h.listCalls(), 1);
  h.informer.stop();
});

test('watch events update the cache and reach handlers with the old object', async () => {
  const h = setup([list(10, obj('a', 5))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  const s = h.sessions[0]!;
  s.emit('ADDED', obj('b', 11));
  s.emit('MODIFIED', obj('a', 12, 'x'));
  s.emit('DELETED', obj('b', 13));
  assert.equal(h.events, ['add a@5', 'add b@11', 'update a@5->12', 'delete b']);
  assert.is(h.informer.get('a')?.data, 'x');
  assert.is(h.informer.get('b'), undefined);
  assert.is(h.informer.lastResourceVersion(), '13');
  h.informer.stop();
});

test('the transform shapes every cached object: listed, watched and written locally', async () => {
  // What the store caches use to drop managedFields: the cache must hold the
  // transformed object only, never the raw one the server sent.
  const withoutData = (o: Obj): Obj => ({ metadata: o.metadata });
  const h = setup([list(10, obj('a', 5, 'big'))], { transform: withoutData });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.emit('ADDED', obj('b', 11, 'big'));
  h.sessions[0]!.emit('MODIFIED', obj('a', 12, 'big'));
  h.informer.upsertLocal(obj('c', 13, 'big'));
  assert.equal(
    h.informer.list().map((o) => [o.metadata.name, o.data]),
    [
      ['a', undefined],
      ['b', undefined],
      ['c', undefined],
    ],
  );
  h.informer.stop();
});

test('a watch that ends resumes from the last bookmark without relisting', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.emit('BOOKMARK', obj('', 20));
  h.sessions[0]!.end();
  await until(() => h.sessions.length === 2);
  assert.is(h.sessions[1]!.opts.resourceVersion, '20');
  assert.is(h.listCalls(), 1);
  h.informer.stop();
});

test('410 Gone relists and announces objects that vanished meanwhile as deletes', async () => {
  const h = setup([list(10, obj('a', 5), obj('b', 6)), list(30, obj('b', 25), obj('c', 28))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.fail(new KubeError(410, 'Expired', 'too old resource version'));
  await until(() => h.sessions.length === 2);
  assert.is(h.listCalls(), 2);
  assert.equal(h.events.slice(2), ['update b@6->25', 'add c@28', 'delete a']);
  assert.is(h.sessions[1]!.opts.resourceVersion, '30');
  h.informer.stop();
});

test('any other error restarts the watch from the same version after a backoff', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.emit('ADDED', obj('a', 11));
  h.sessions[0]!.fail(new KubeError(0, 'NetworkError', 'reset'));
  await until(() => h.sessions.length === 2);
  assert.is(h.sessions[1]!.opts.resourceVersion, '11');
  assert.is(h.listCalls(), 1);
  h.informer.stop();
});

test('a failing first list is retried until it succeeds', async () => {
  const h = setup([new KubeError(503, 'ServiceUnavailable', 'x'), new KubeError(0, 'NetworkError', 'y'), list(3)]);
  await h.informer.start();
  assert.is(h.listCalls(), 3);
  h.informer.stop();
});

test('a silent watch is restarted by the watchdog', async () => {
  const h = setup([list(10)], { watchdogMs: 40 });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  await until(() => h.sessions.length === 2, 3000);
  assert.ok(h.sessions[0]!.signal.aborted);
  assert.is(h.sessions[1]!.opts.resourceVersion, '10');
  h.informer.stop();
});

test('the periodic resync re-announces the cache as updates without asking the API server', async () => {
  const h = setup([list(10, obj('a', 5)), list(12, obj('a', 5), obj('b', 11))], { resyncMs: 30 });
  await h.informer.start();
  await until(() => h.events.length >= 3, 3000);
  assert.equal(h.events.slice(0, 3), ['add a@5', 'update a@5->5', 'update a@5->5']);
  assert.is(h.listCalls(), 1, 'resync never relists');
  h.informer.stop();
});

test('a relist is paged: every list request carries a limit and follows continue tokens', async () => {
  const pages: KubeList<Obj>[] = [
    { metadata: { resourceVersion: '10', continue: 'p2' }, items: [obj('a', 5)] },
    { metadata: { resourceVersion: '10' }, items: [obj('b', 6)] },
    { metadata: { resourceVersion: '30', continue: 'q2' }, items: [obj('b', 6)] },
    { metadata: { resourceVersion: '30' }, items: [obj('c', 29)] },
  ];
  const h = setup(pages, {}, { pageSize: 1 });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.fail(new KubeError(410, 'Expired', 'too old resource version'));
  await until(() => h.sessions.length === 2);
  const opts = h.kube.callsOf('list').map((c) => c.args[2] as { limit?: number; continue?: string });
  assert.equal(
    opts.map((o) => [o.limit, o.continue]),
    [
      [1, undefined],
      [1, 'p2'],
      [1, undefined],
      [1, 'q2'],
    ],
  );
  assert.equal(
    h.informer
      .list()
      .map((o) => o.metadata.name)
      .sort(),
    ['b', 'c'],
  );
  h.informer.stop();
});

test('a relist after etcd was restored replaces the cache wholesale: stale objects go, older versions win', async () => {
  const h = setup([
    list(900, obj('stale', 850), obj('kept', 870, 'before')),
    list(50, obj('kept', 40, 'restored'), obj('back', 45)),
  ]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.informer.upsertLocal(obj('mine', 905));
  h.sessions[0]!.fail(new KubeError(410, 'Expired', 'too old resource version'));
  await until(() => h.sessions.length === 2);
  assert.equal(
    h.informer
      .list()
      .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
      .sort(),
    ['back@45', 'kept@40'],
  );
  assert.is(h.informer.get('kept')?.data, 'restored');
  assert.ok(h.events.includes('delete stale') && h.events.includes('delete mine'));
  assert.is(h.sessions[1]!.opts.resourceVersion, '50');
  assert.is(h.informer.lastResourceVersion(), '50');
  h.informer.stop();
});

test('onRewound is called after a relist older than the cache, its changes already announced; not on a newer one', async () => {
  const h = setup([list(900, obj('a', 850)), list(950, obj('a', 850)), list(50, obj('a', 40))]);
  const seen: string[] = [];
  h.informer.onRewound(() => seen.push(`rewound after ${h.events.length} events`));
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.fail(new KubeError(410, 'Expired', 'too old resource version'));
  await until(() => h.sessions.length === 2);
  assert.equal(seen, [], 'a relist at a newer version is history going on');
  h.sessions[1]!.fail(new KubeError(500, 'InternalError', 'etcd restored under it'));
  await until(() => h.sessions.length === 3);
  assert.equal(seen, ['rewound after 2 events']);
  h.informer.stop();
});

test('an error answer on the watch relists; a dropped connection resumes without listing', async () => {
  const h = setup([list(10, obj('a', 5)), list(20, obj('b', 15))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.fail(new KubeError(0, 'NetworkError', 'reset'));
  await until(() => h.sessions.length === 2);
  assert.is(h.listCalls(), 1);
  h.sessions[1]!.fail(new KubeError(500, 'InternalError', 'boom'));
  await until(() => h.sessions.length === 3);
  assert.is(h.listCalls(), 2);
  assert.equal(h.events, ['add a@5', 'add b@15', 'delete a']);
  h.informer.stop();
});

test('no managedFields are cached: not from lists, watch events or local writes', async () => {
  const managed = (name: string, rv: number): Obj =>
    ({ metadata: { name, resourceVersion: String(rv), managedFields: [{ manager: 'kubectl' }] } }) as Obj;
  const h = setup([list(10, managed('a', 5))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.emit('ADDED', managed('b', 11));
  h.informer.upsertLocal(managed('c', 12));
  for (const o of h.informer.list()) assert.not.ok('managedFields' in o.metadata, o.metadata.name);
  assert.is(h.informer.list().length, 3);
  h.informer.stop();
});

test('keep: a list, watch event or local write that no longer matches removes the object as a delete', async () => {
  const open = (o: Obj): boolean => o.data !== 'finished';
  const h = setup([list(10, obj('a', 5), obj('done', 6, 'finished'))], { keep: open, fieldSelector: 'x!=y' });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  assert.equal(
    h.informer.list().map((o) => o.metadata.name),
    ['a'],
  );
  assert.is(h.sessions[0]!.opts.fieldSelector, 'x!=y');
  assert.is((h.kube.callsOf('list')[0]!.args[2] as { fieldSelector?: string }).fieldSelector, 'x!=y');
  h.sessions[0]!.emit('ADDED', obj('b', 11));
  h.sessions[0]!.emit('MODIFIED', obj('b', 12, 'finished'));
  h.informer.upsertLocal(obj('a', 13, 'finished'));
  h.sessions[0]!.emit('MODIFIED', obj('a', 7, 'stale'));
  assert.equal(h.informer.list(), []);
  assert.equal(h.events, ['add a@5', 'add b@11', 'delete b', 'delete a']);
  // a local write that takes an object out is announced with the copy written, as a watch's would be
  const removed: Obj[] = [];
  h.informer.on('delete', (o) => removed.push(o));
  h.informer.upsertLocal(obj('c', 14));
  h.informer.upsertLocal(obj('c', 15, 'finished'));
  assert.is(removed[0]?.metadata.resourceVersion, '15');
  assert.is(removed[0]?.data, 'finished');
  h.informer.stop();
});

test('upsertLocal wins over an older watch event for the same object', async () => {
  const h = setup([list(10, obj('a', 5))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.informer.upsertLocal(obj('a', 15, 'mine'));
  h.sessions[0]!.emit('MODIFIED', obj('a', 12, 'stale'));
  assert.is(h.informer.get('a')?.data, 'mine');
  h.sessions[0]!.emit('MODIFIED', obj('a', 15, 'mine'));
  h.sessions[0]!.emit('MODIFIED', obj('a', 16, 'newer'));
  assert.is(h.informer.get('a')?.data, 'newer');
  assert.equal(h.events, ['add a@5', 'update a@5->15', 'update a@15->16']);
  h.informer.stop();
});

test('deleteLocal hides the object at once and ignores older in-flight events for it', async () => {
  const h = setup([list(10, obj('a', 5))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.informer.deleteLocal('a');
  assert.is(h.informer.get('a'), undefined);
  assert.equal(h.informer.list(), []);
  h.sessions[0]!.emit('MODIFIED', obj('a', 5));
  assert.is(h.informer.get('a'), undefined);
  h.sessions[0]!.emit('DELETED', obj('a', 11));
  assert.equal(h.events, ['add a@5', 'delete a']);
  h.sessions[0]!.emit('ADDED', obj('a', 12, 'recreated'));
  assert.is(h.informer.get('a')?.data, 'recreated');
  h.informer.stop();
});

test('a 410 after an API server restart relists at once: the backoff the outage built up is not waited out', async () => {
  // Seen in the chaos suite: restarts escalated the backoff to 12 s; the first watch after them got a 410,
  // which then waited another 23 s, and the engine failed notifications whose host it had not seen yet.
  const h = setup(
    [list(10), list(12, obj('a', 11))],
    {},
    { backoff: { delayMs: 1_000, capMs: 60_000, random: () => 0 } },
  );
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.fail(new KubeError(0, 'Transport', 'WATCH configmaps ns: connect ECONNREFUSED'));
  await until(() => h.sessions.length === 2, 3_000); // after the 1 s backoff
  const expiredAt = Date.now();
  h.sessions[1]!.fail(new KubeError(410, 'Expired', 'too old resource version'));
  await until(() => h.listCalls() === 2 && h.sessions.length === 3, 1_000);
  assert.ok(Date.now() - expiredAt < 500, `relisted ${Date.now() - expiredAt} ms after the 410`);
  assert.ok(h.informer.get('a'));
  // A second 410 right after is paced (no tight list loop against a server that keeps answering 410).
  const again = Date.now();
  h.sessions[2]!.fail(new KubeError(410, 'Expired', 'too old resource version'));
  await until(() => h.listCalls() === 3, 5_000);
  assert.ok(Date.now() - again >= 900, `the repeated 410 waited ${Date.now() - again} ms`);
  h.informer.stop();
});

test('a relist taken before a local write does not undo it', async () => {
  const h = setup([list(10, obj('a', 5)), list(12, obj('a', 5))]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.informer.upsertLocal(obj('a', 14, 'mine'));
  h.informer.upsertLocal(obj('n', 13, 'new'));
  h.sessions[0]!.fail(new KubeError(410, 'Expired', 'gone'));
  await until(() => h.sessions.length === 2);
  assert.is(h.informer.get('a')?.data, 'mine');
  assert.is(h.informer.get('n')?.data, 'new');
  h.informer.stop();
});

test('the watch resumes from the server position, never from a local write', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.informer.upsertLocal(obj('a', 50));
  assert.is(h.informer.lastResourceVersion(), '50');
  h.sessions[0]!.end();
  await until(() => h.sessions.length === 2);
  assert.is(h.sessions[1]!.opts.resourceVersion, '10');
  h.informer.stop();
});

test('waitForResourceVersion resolves when the cache reaches the version, false on timeout', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  assert.is(await h.informer.waitForResourceVersion('9', 10), true);
  const waiting = h.informer.waitForResourceVersion('12', 1000);
  h.sessions[0]!.emit('ADDED', obj('a', 11));
  h.sessions[0]!.emit('BOOKMARK', obj('', 12));
  assert.is(await waiting, true);
  assert.is(await h.informer.waitForResourceVersion('100', 20), false);
  h.informer.stop();
});

test('secondary indexes follow updates and deletes', async () => {
  const h = setup([list(10, obj('a', 5, undefined, { seg: 's1' }), obj('b', 6, undefined, { seg: 's1' }))], {
    indexes: { seg: (o) => (o.metadata.labels?.seg ? [o.metadata.labels.seg] : []) },
  });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  assert.equal(
    h.informer
      .byIndex('seg', 's1')
      .map((o) => o.metadata.name)
      .sort(),
    ['a', 'b'],
  );
  h.sessions[0]!.emit('MODIFIED', obj('a', 11, undefined, { seg: 's2' }));
  h.sessions[0]!.emit('DELETED', obj('b', 12));
  assert.equal(h.informer.byIndex('seg', 's1'), []);
  assert.equal(
    h.informer.byIndex('seg', 's2').map((o) => o.metadata.name),
    ['a'],
  );
  assert.throws(() => h.informer.byIndex('nope', 'x'), /unknown index/);
  h.informer.stop();
});

test('a throwing handler does not stop other handlers or the informer', async () => {
  const h = setup([list(10)]);
  h.informer.on('add', () => {
    throw new Error('bad handler');
  });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.emit('ADDED', obj('a', 11));
  h.sessions[0]!.emit('ADDED', obj('b', 12));
  assert.equal(h.events, ['add a@11', 'add b@12']);
  h.informer.stop();
});

test('the first sync is retried for as long as it takes; the cache is not serving until then', async () => {
  const denied = new KubeError(403, 'Forbidden', 'cannot list configmaps');
  const h = setup([denied, denied, denied, denied, denied, list(3, obj('a', 2))], {}, { slowSyncWarnMs: 1 });
  const started = h.informer.start();
  await until(() => h.listCalls() >= 3);
  assert.is(h.informer.health().serving, false);
  assert.match(h.informer.health().lastError ?? '', /403 Forbidden/);
  await started;
  assert.is(h.listCalls(), 6);
  assert.is(h.informer.health().serving, true);
  assert.is(h.informer.health().failingSince, undefined);
  h.informer.stop();
});

test('a watch that keeps failing makes the cache not serving after staleAfterMs; a healthy watch restores it', async () => {
  const forbidden = new KubeError(403, 'Forbidden', 'watch is forbidden');
  const h = setup([list(10, obj('a', 5)), forbidden], {}, { staleAfterMs: 40, healthyAfterMs: 10_000 });
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  h.sessions[0]!.fail(forbidden);
  assert.is(h.informer.health().serving, true, 'one failure is not yet stale');
  // how many relists fit before staleAfterMs depends on the machine's load: wait for both, not one then the other
  await until(() => !h.informer.health().serving && h.listCalls() >= 3, 5000);
  assert.is(h.informer.health().serving, false);
  assert.is(h.informer.health().crashed, false, 'liveness holds: retrying can still help');
  h.informer.stop();

  const back = setup([list(10, obj('a', 5))], {}, { staleAfterMs: 1, healthyAfterMs: 10_000 });
  await back.informer.start();
  await until(() => back.sessions.length === 1);
  back.sessions[0]!.fail(new KubeError(0, 'NetworkError', 'reset'));
  await until(() => back.sessions.length === 2);
  await new Promise((r) => setTimeout(r, 5));
  assert.is(back.informer.health().serving, false);
  back.sessions[1]!.emit('BOOKMARK', obj('', 12));
  assert.is(back.informer.health().serving, true);
  back.informer.stop();
});

test('stop ends the watch and pending waits', async () => {
  const h = setup([list(10)]);
  await h.informer.start();
  await until(() => h.sessions.length === 1);
  const waiting = h.informer.waitForResourceVersion('99', 5000);
  h.informer.stop();
  assert.ok(h.sessions[0]!.signal.aborted);
  assert.is(await waiting, false);
});

test('start after stop rejects at once', async () => {
  const h = setup([list(1)]);
  h.informer.stop();
  try {
    await h.informer.start();
    assert.unreachable('should have rejected');
  } catch (err) {
    assert.match((err as Error).message, /after stop/);
  }
});

test.run();
