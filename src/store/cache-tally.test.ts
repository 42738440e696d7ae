// CacheTally and CacheSubset follow a cache's events, and skip a resync's
// re-announcements (old === obj) without looking at the object.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InformerEvent, KubeObjectLike } from '../runtime/types.ts';
import { CacheSubset, CacheTally } from './cache-tally.ts';

type Obj = KubeObjectLike & { kind: string };
type Handler = (obj: Obj, old?: Obj) => void;

/** The event side of an informer: its list, and handlers called as the informer calls them. */
function eventSource(initial: Obj[]) {
  const handlers: Record<InformerEvent, Handler[]> = { add: [], update: [], delete: [] };
  return {
    list: () => initial,
    on: (event: InformerEvent, h: Handler) => void handlers[event].push(h),
    emit: (event: InformerEvent, obj: Obj, old?: Obj) => handlers[event].forEach((h) => h(obj, old)),
  };
}

const obj = (name: string, kind: string): Obj => ({ metadata: { name }, kind });

test('counts follow adds, updates and deletes; a resync is not looked at', () => {
  const a = obj('a', 'x');
  const source = eventSource([a]);
  let looked = 0;
  const tally = new CacheTally<Obj>(source, (o) => (looked++, o.kind === 'skip' ? undefined : o.kind));
  const b = obj('b', 'x');
  source.emit('add', b);
  assert.equal([...tally.entries()], [['x', 2]]);
  const b2 = obj('b', 'y');
  source.emit('update', b2, b);
  assert.equal([...tally.entries()].sort(), [
    ['x', 1],
    ['y', 1],
  ]);
  source.emit('update', obj('a', 'skip'), a);
  assert.equal([...tally.entries()], [['y', 1]]);
  source.emit('delete', b2, b2);
  assert.equal([...tally.entries()], []);
  assert.is(tally.get('y'), 0);

  const before = looked;
  const c = obj('c', 'z');
  source.emit('add', c);
  source.emit('update', c, c); // resync
  assert.is(looked, before + 1, 'the resync did not call keyOf');
  assert.is(tally.get('z'), 1);
});

test('a subset keeps the members by name as they change, and skips a resync', () => {
  const source = eventSource([obj('a', 'in'), obj('b', 'out')]);
  let looked = 0;
  const subset = new CacheSubset<Obj>(source, (o) => (looked++, o.kind === 'in'));
  const names = () => [...subset.values()].map((o) => o.metadata.name).sort();
  assert.equal(names(), ['a']);
  source.emit('update', obj('b', 'in'), obj('b', 'out'));
  source.emit('update', obj('a', 'out'), obj('a', 'in'));
  assert.equal(names(), ['b']);
  const b = [...subset.values()][0]!;
  const before = looked;
  source.emit('update', b, b);
  assert.is(looked, before, 'the resync did not call member');
  source.emit('delete', b, b);
  assert.equal(names(), []);
});

test.run();
