import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SourceHostMutex } from './source-host-mutex.ts';

test('one holder per host; parked keys come back on release; other hosts are independent', () => {
  const g = new SourceHostMutex();
  assert.ok(g.tryAcquire('h1', 'a'));
  assert.ok(g.tryAcquire('h1', 'a'));
  assert.not.ok(g.tryAcquire('h1', 'b'));
  assert.not.ok(g.tryAcquire('h1', 'c'));
  assert.ok(g.tryAcquire('h2', 'd'));
  assert.equal(g.release('h1', 'b'), []);
  assert.equal(g.release('h1', 'a'), ['b', 'c']);
  assert.is(g.holder('h1'), undefined);
  assert.ok(g.tryAcquire('h1', 'c'));
});

test.run();
