// The store over caches that lag behind the API server (FakeKube.holdWatches:
// the watch has not delivered this process's own writes yet). Masakari reads
// its own writes from SQL; here the repository must read them from its cache
// at once (read-your-writes), and must not double them when the watch catches up.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hostInput, segmentInput, storeFixture } from './testing/fixture.ts';

test('a created segment and host are readable at once while the watch lags, and not doubled when it catches up', async () => {
  const { kube, repo } = await storeFixture();
  kube.holdWatches();
  const s = await repo.createSegment(segmentInput('seg-a'));
  assert.equal(repo.getSegment(s.uuid), s);
  const h = await repo.createHost(s.uuid, hostInput('compute-1'));
  assert.is(repo.getHost(h.uuid)?.name, 'compute-1');
  kube.resumeWatches();
  assert.is(repo.listSegments().length, 1);
  assert.equal(repo.getSegment(s.uuid), s);
});

test('an update made while the watch lags is what reads return, even after older events arrive', async () => {
  const { kube, repo } = await storeFixture();
  const s = await repo.createSegment(segmentInput('seg-b'));
  kube.holdWatches();
  await repo.updateSegment(s.uuid, { description: 'first' });
  const second = await repo.updateSegment(s.uuid, { description: 'second' });
  assert.is(repo.getSegment(s.uuid)?.description, 'second');
  kube.resumeWatches();
  assert.equal(repo.getSegment(s.uuid), second);
});

test.run();
