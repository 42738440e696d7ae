// When the store reconcilers start, one paged list of the name claims
// confirms the claims of every unchanged segment and host: no claim call per
// object. Anything the list cannot vouch for is confirmed by a take, as before.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../k8s/resources.ts';
import type { HaHost } from '../model/types.ts';
import { NS, hostInput, segmentInput, storeFixture } from './testing/fixture.ts';
import { reconcileHost } from './host-reconciler.ts';
import { reconcileSegment } from './segment-reconciler.ts';
import { NameClaimSnapshot, SNAPSHOT_USE_MS } from './name-claim-snapshot.ts';
import { claimObjectName } from '../store/names.ts';

async function storeWithHosts(count: number) {
  const f = await storeFixture();
  const seg = await f.repo.createSegment(segmentInput('seg'));
  for (let i = 0; i < count; i++) await f.repo.createHost(seg.uuid, hostInput(`compute-${i}`));
  await f.repo.settle();
  // The reconciler's first pass binds each REST-taken claim to its owner's uid; the snapshot vouches for bound claims only.
  for (const s of f.caches.segments.list()) await reconcileSegment(f.admission, s.metadata.name ?? '');
  for (const h of f.caches.hosts.list()) await reconcileHost(f.admission, h.metadata.name ?? '');
  return f;
}

const configMapCalls = (f: Awaited<ReturnType<typeof storeFixture>>, from: number) =>
  f.kube.log.slice(from).filter((c) => JSON.stringify(c.args[0]).includes('configmaps'));

test('a new leadership term confirms every unchanged claim from one list, with no claim call per object', async () => {
  const f = await storeWithHosts(5);
  const snapshot = new NameClaimSnapshot((keep) => f.claims.listAll(keep), f.log);
  const deps = { ...f.admission, confirmedClaims: new Map<string, number>(), nameClaimSnapshot: snapshot };
  const from = f.kube.log.length;
  for (const s of f.caches.segments.list()) await reconcileSegment(deps, s.metadata.name ?? '');
  for (const h of f.caches.hosts.list()) await reconcileHost(deps, h.metadata.name ?? '');
  const calls = configMapCalls(f, from);
  assert.equal(
    calls.map((c) => c.method),
    ['list'],
    'one list, no create or get of a claim',
  );
  assert.is(deps.confirmedClaims.size, 6, 'the segment and the five hosts count as confirmed');
});

test('a host changed after the list, or whose claim the list does not show as its own, is confirmed by a take', async () => {
  const f = await storeWithHosts(2);
  const snapshot = new NameClaimSnapshot((keep) => f.claims.listAll(keep), f.log);
  const deps = { ...f.admission, confirmedClaims: new Map<string, number>(), nameClaimSnapshot: snapshot };
  const [first, second] = f.caches.hosts.list() as [HaHost, HaHost];
  // The list is taken here, before the changes below.
  assert.ok(await snapshot.holds('host', first));
  // A change after the list: its resourceVersion is newer than the snapshot's.
  await f.kube.mergePatch(RESOURCES.hosts, NS, first.metadata.name ?? '', { metadata: { labels: { touched: 'yes' } } });
  const changed = f.kube.peek<HaHost>(RESOURCES.hosts, NS, first.metadata.name ?? '')!;
  assert.not.ok(await snapshot.holds('host', changed));
  // Another object (another uid) with the same metadata.name and Masakari name does not hold the listed claim.
  const impostor = { ...second, metadata: { ...second.metadata, uid: 'another-uid' } };
  assert.not.ok(await snapshot.holds('host', impostor));
  assert.ok(await snapshot.holds('host', second));

  const from = f.kube.log.length;
  await reconcileHost(deps, changed.metadata.name ?? '');
  const creates = configMapCalls(f, from).filter((c) => c.method === 'create');
  assert.is(creates.length, 1, 'the changed host takes its claim again');
  assert.ok(JSON.stringify(creates[0]?.args).includes(claimObjectName('host', changed.spec.name)));
});

test('a snapshot is used for a while only, and a failed list means one take per object', async () => {
  const f = await storeWithHosts(1);
  let now = 0;
  let lists = 0;
  const snapshot = new NameClaimSnapshot(
    (keep) => {
      lists++;
      return f.claims.listAll(keep);
    },
    f.log,
    () => now,
  );
  const [host] = f.caches.hosts.list() as [HaHost];
  assert.ok(await snapshot.holds('host', host));
  now = SNAPSHOT_USE_MS + 1;
  assert.not.ok(await snapshot.holds('host', host), 'past its use, the snapshot answers "ask the API server"');
  assert.not.ok(await snapshot.holds('host', host));
  assert.is(lists, 1, 'and lists no more');
  snapshot.reset();
  assert.ok(await snapshot.holds('host', host), 'a new term lists again');
  assert.is(lists, 2);

  const failing = new NameClaimSnapshot(() => Promise.reject(new Error('apiserver down')), f.log);
  assert.not.ok(await failing.holds('host', host));
});

test.run();
