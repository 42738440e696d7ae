import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ObjectStore } from './store.ts';

interface O {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
}
const o = (name: string, rv: number, tag?: string): O => ({
  metadata: { name, resourceVersion: String(rv), ...(tag ? { labels: { tag } } : {}) },
});
const store = () => new ObjectStore<O>({ tag: (x) => (x.metadata.labels?.tag ? [x.metadata.labels.tag] : []) });

test('an event at or below the cached version changes nothing', () => {
  const s = store();
  assert.is(s.upsert(o('a', 5))?.type, 'add');
  assert.is(s.upsert(o('a', 5)), undefined);
  assert.is(s.upsert(o('a', 4)), undefined);
  assert.is(s.upsert(o('a', 6))?.type, 'update');
});

test("a local write at the cached version replaces the watch's copy; an older one does not", () => {
  const s = store();
  s.upsert(o('a', 5)); // the watch delivered the create before its writer had the response
  assert.is(s.upsert(o('a', 5, 'local'), { local: true })?.type, 'update');
  assert.is(s.get('a')?.metadata.labels?.tag, 'local');
  assert.is(s.upsert(o('a', 5)), undefined, 'the same version from the watch does not undo it');
  assert.is(s.upsert(o('a', 4, 'older'), { local: true }), undefined);
});

test('a DELETED event for an older incarnation leaves a newer local object alone', () => {
  const s = store();
  s.upsert(o('a', 10));
  assert.is(s.removeObserved(o('a', 8)), undefined);
  assert.ok(s.get('a'));
  assert.is(s.removeObserved(o('a', 11))?.type, 'delete');
});

test('a local delete tombstones the object against older events but not a re-creation', () => {
  const s = store();
  s.upsert(o('a', 10));
  assert.is(s.removeLocal('a')?.type, 'delete');
  assert.is(s.upsert(o('a', 10)), undefined);
  assert.is(s.upsert(o('a', 12))?.type, 'add');
});

test('a relist drops vanished objects except local writes newer than the snapshot', () => {
  const s = store();
  s.upsert(o('old', 3));
  s.upsert(o('mine', 20));
  const changes = s.replaceAll([o('kept', 7)], '15');
  assert.equal(
    changes.map((c) => `${c.type} ${c.obj.metadata.name}`),
    ['add kept', 'delete old'],
  );
  assert.ok(s.get('mine'));
});

test('a relist replaces listed objects whatever their cached version (wholesale, not newest-wins)', () => {
  const s = store();
  s.upsert(o('a', 9, 'cached'));
  const changes = s.replaceAll([o('a', 8, 'listed')], '15');
  assert.equal(
    changes.map((c) => `${c.type} ${c.obj.metadata.name}@${c.obj.metadata.resourceVersion}`),
    ['update a@8'],
  );
  assert.is(s.get('a')?.metadata.labels?.tag, 'listed');
});

test('after a restore (history rewound) nothing cached survives unless listed, local writes included', () => {
  const s = store();
  s.upsert(o('stale', 900));
  s.upsert(o('kept', 950, 'before'));
  s.upsert(o('mine', 990), { local: true });
  s.removeLocal('gone', '995');
  const changes = s.replaceAll([o('kept', 40, 'restored'), o('gone', 30)], '50', { historyRewound: true });
  assert.equal(changes.map((c) => `${c.type} ${c.obj.metadata.name}@${c.obj.metadata.resourceVersion}`).sort(), [
    'add gone@30',
    'delete mine@990',
    'delete stale@900',
    'update kept@40',
  ]);
  assert.equal(s.names().sort(), ['gone', 'kept']);
  assert.is(s.get('kept')?.metadata.labels?.tag, 'restored');
});

test('addIndexes files the objects already cached', () => {
  const s = store();
  s.upsert(o('a', 1, 'x'));
  s.addIndexes({ other: (x) => [x.metadata.name ?? ''] });
  assert.equal(
    s.byIndex('other', 'a').map((x) => x.metadata.name),
    ['a'],
  );
  assert.throws(() => s.addIndexes({ other: () => [] }), /already defined/);
});

test('indexes follow changes and drop empty values', () => {
  const s = store();
  s.upsert(o('a', 1, 'x'));
  s.upsert(o('b', 2, 'x'));
  s.upsert(o('a', 3, 'y'));
  assert.equal(
    s.byIndex('tag', 'x').map((v) => v.metadata.name),
    ['b'],
  );
  s.removeLocal('b');
  assert.equal(s.byIndex('tag', 'x'), []);
  assert.equal(
    s.byIndex('tag', 'y').map((v) => v.metadata.name),
    ['a'],
  );
});

test('a value shared by several objects and back to one: each lookup names exactly the objects filed there', () => {
  const s = store();
  const names = (tag: string) => s.byIndex('tag', tag).map((v) => v.metadata.name);
  s.upsert(o('a', 1, 'x'));
  s.upsert(o('b', 2, 'x'));
  s.upsert(o('c', 3, 'x'));
  assert.equal(names('x'), ['a', 'b', 'c']);
  s.upsert(o('b', 4, 'y'));
  s.removeObserved(o('c', 5, 'x'));
  assert.equal(names('x'), ['a']);
  s.upsert(o('a', 6, 'x')); // an update under the same value files it once
  assert.equal(names('x'), ['a']);
  s.upsert(o('c', 7, 'x'));
  assert.equal(names('x'), ['a', 'c']);
  s.replaceAll([o('c', 7, 'x'), o('b', 8, 'x')], '8');
  assert.equal(names('x').sort(), ['b', 'c']);
  assert.equal(names('y'), []);
});

test('an index function that throws files the object under no value and reports it', () => {
  const errors: string[] = [];
  const s = new ObjectStore<O>(
    {
      bad: () => {
        throw new Error('x');
      },
    },
    (index, name) => errors.push(`${index}:${name}`),
  );
  s.upsert(o('a', 1));
  assert.ok(s.get('a'));
  assert.equal(errors, ['bad:a']);
});

test.run();
