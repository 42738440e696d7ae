import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { WatchEvent, WatchOptions } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { SharedInformerFactory } from './shared-informers.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { until } from '../testing/until.ts';

interface Obj {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
}
const obj = (name: string, rv: number, tag = ''): Obj => ({
  metadata: { name, resourceVersion: String(rv), labels: { tag } },
});
const log = pino({ level: 'silent' });

function world() {
  const watches: Array<{
    plural: string;
    opts: WatchOptions;
    emit: (e: WatchEvent<Obj>) => void;
    signal: AbortSignal;
  }> = [];
  const kube = scriptedKube({
    list: () => ({ metadata: { resourceVersion: '10' }, items: [obj('a', 5, 'x'), obj('b', 6, 'y')] }),
    watch: (ref, _ns, opts, onEvent, signal) =>
      new Promise<void>((resolve) => {
        watches.push({ plural: ref.plural, opts, emit: onEvent as (e: WatchEvent<Obj>) => void, signal });
        signal.addEventListener('abort', () => resolve());
      }),
  });
  return { kube, watches, factory: new SharedInformerFactory({ kube, log }) };
}

test('callers asking for the same resource, namespace and selectors share one list and one watch', async () => {
  const w = world();
  const a = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  const b = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  const filtered = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns', fieldSelector: 'x!=y' });
  const other = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'other' });
  await Promise.all([a.start(), b.start(), filtered.start(), other.start()]);
  await until(() => w.watches.length === 3);
  await new Promise((r) => setTimeout(r, 20));
  assert.is(w.watches.length, 3, 'one watch per key');
  assert.is(w.kube.callsOf('list').length, 3);
  assert.is(a.get('a'), b.get('a'), 'the very same cached object');
  assert.equal(
    w.factory.describe().map((i) => [i.key, i.users, i.objects]),
    [
      ['configmaps.core/v1|ns||', 2, 2],
      ['configmaps.core/v1|ns||x!=y', 1, 2],
      ['configmaps.core/v1|other||', 1, 2],
    ],
  );
  w.factory.stopAll();
});

test("each caller reads its indexes under its own names, even when another's differ", async () => {
  const w = world();
  const a = w.factory.informer<Obj>(RESOURCES.configMaps, {
    namespace: 'ns',
    indexes: { key: (o) => [o.metadata.labels?.tag ?? ''] },
  });
  const b = w.factory.informer<Obj>(RESOURCES.configMaps, {
    namespace: 'ns',
    indexes: { key: (o) => [o.metadata.name] },
  });
  await a.start();
  assert.equal(
    a.byIndex('key', 'x').map((o) => o.metadata.name),
    ['a'],
  );
  assert.equal(
    b.byIndex('key', 'b').map((o) => o.metadata.name),
    ['b'],
  );
  assert.throws(() => a.byIndex('nope', 'x'), /unknown index/);
  w.factory.stopAll();
});

test("a caller's stop() removes its handlers; the shared watch ends with the last caller", async () => {
  const w = world();
  const a = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  const b = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  const seenA: string[] = [];
  const seenB: string[] = [];
  a.on('update', (o) => seenA.push(o.metadata.name));
  b.on('update', (o) => seenB.push(o.metadata.name));
  await Promise.all([a.start(), b.start()]);
  await until(() => w.watches.length === 1);
  a.stop();
  w.watches[0]!.emit({ type: 'MODIFIED', object: obj('a', 11) });
  assert.equal(seenA, []);
  assert.equal(seenB, ['a']);
  assert.not.ok(w.watches[0]!.signal.aborted, 'b still reads it');
  b.stop();
  assert.ok(w.watches[0]!.signal.aborted);
  assert.equal(w.factory.describe(), []);
});

test('a handler added after the cache synced is told about every cached object as an add (client-go)', async () => {
  const w = world();
  const a = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  await a.start();
  const late = w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  const added: string[] = [];
  late.on('add', (o) => added.push(o.metadata.name));
  await until(() => added.length === 2);
  assert.equal(added.sort(), ['a', 'b']);
  w.factory.stopAll();
});

test('callers of one key must agree on transform and keep', () => {
  const w = world();
  w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns' });
  assert.throws(
    () => w.factory.informer<Obj>(RESOURCES.configMaps, { namespace: 'ns', transform: (o) => o }),
    /different transform or keep/,
  );
});

test.run();
