import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection } from '../testing/expect-error.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { LABELS } from '../model/constants.ts';
import type { FailoverSegment } from '../model/types.ts';
import { NameTakenError } from '../domain/repository.ts';
import type { ConfigMap } from './configmap.ts';
import { claimObjectName } from './names.ts';
import { NameClaims } from './claims.ts';
import { pino } from 'pino';
import { NS, segmentInput, storeFixture } from './testing/fixture.ts';

const claim = (name: string, ownerName: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: claimObjectName('segment', name), labels: { [LABELS.role]: 'name-claim' } },
  data: { kind: 'segment', name, ownerName },
});

test('sweep removes claims whose owner is gone or carries another name, keeps live ones', async () => {
  const { kube, repo, claims } = await storeFixture({ claimGraceMs: 0 });
  const live = await repo.createSegment(segmentInput('live'));
  await kube.create(RESOURCES.configMaps, NS, claim('gone', 'nobody-1234'));
  // a rename that crashed before releasing: the owner now carries another name
  await kube.create(RESOURCES.configMaps, NS, claim('before-rename', live.k8sName));
  assert.is(await claims.sweep(), 2);
  assert.ok(kube.peek(RESOURCES.configMaps, NS, claimObjectName('segment', 'live')));
  assert.is(kube.peek(RESOURCES.configMaps, NS, claimObjectName('segment', 'gone')), undefined);
});

test('claims younger than the grace period are never stale (an in-flight create)', async () => {
  const { kube, claims } = await storeFixture({ claimGraceMs: 60_000 });
  await kube.create(RESOURCES.configMaps, NS, claim('in-flight', 'not-created-yet'));
  assert.is(await claims.sweep(), 0);
  await claims.take('segment', 'in-flight', { name: 'not-created-yet' });
  await rejection(claims.take('segment', 'in-flight', { name: 'someone-else' }), NameTakenError);
});

test('a claim is released only by its holder', async () => {
  const { kube, claims } = await storeFixture();
  await claims.take('host', 'compute-1', { name: 'h-1' });
  await claims.release('host', 'compute-1', 'h-2');
  assert.ok(kube.peek(RESOURCES.configMaps, NS, claimObjectName('host', 'compute-1')));
  await claims.release('host', 'compute-1', 'h-1');
  assert.is(kube.peek(RESOURCES.configMaps, NS, claimObjectName('host', 'compute-1')), undefined);
});

test('a re-created object of the same metadata.name (new uid) does not inherit the claim', async () => {
  const { kube, claims } = await storeFixture({ claimGraceMs: 0 });
  await claims.take('segment', 'x', { name: 'seg', uid: 'uid-1' });
  const seg: FailoverSegment = {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'FailoverSegment',
    metadata: { name: 'seg' },
    spec: { name: 'x', recoveryMethod: 'auto', serviceType: 's' },
  };
  await kube.create(RESOURCES.segments, NS, seg); // gets a fresh uid
  const created = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'seg')!;
  await claims.take('segment', 'x', { name: 'seg', uid: created.metadata.uid ?? '' });
  assert.is(
    kube.peek<ConfigMap>(RESOURCES.configMaps, NS, claimObjectName('segment', 'x'))?.data?.ownerUid,
    created.metadata.uid,
  );
});

function restoredSegment(name: string, masakariName: string): FailoverSegment {
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'FailoverSegment',
    metadata: { name },
    spec: { name: masakariName, recoveryMethod: 'auto', serviceType: 's' },
  };
}

test('a restored claim (old uid, fresh creationTimestamp) is re-adopted by the same-named object carrying its name', async () => {
  // default grace: the restored claim is young, so the stale-claim path cannot apply
  const { kube, claims } = await storeFixture();
  await kube.create(RESOURCES.configMaps, NS, {
    ...claim('rack-1', 'seg'),
    data: { kind: 'segment', name: 'rack-1', ownerName: 'seg', ownerUid: 'uid-before-backup' },
  });
  await kube.create(RESOURCES.segments, NS, restoredSegment('seg', 'rack-1'));
  const restored = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'seg')!;
  // the sweep (even with no grace) does not take it for stale before the reconciler gets to it
  const noGrace = new NameClaims({ kube, namespace: NS, log: pino({ level: 'silent' }), graceMs: 0 });
  assert.is(await noGrace.sweep(), 0);
  await claims.take('segment', 'rack-1', { name: 'seg', uid: restored.metadata.uid ?? '' });
  const held = kube.peek<ConfigMap>(RESOURCES.configMaps, NS, claimObjectName('segment', 'rack-1'))!;
  assert.is(held.data?.ownerUid, restored.metadata.uid);
  assert.equal(
    held.metadata.ownerReferences?.map((r) => r.uid),
    [restored.metadata.uid],
  );
});

test('a claim is not re-adopted by a same-named object that carries another Masakari name', async () => {
  const { kube, claims } = await storeFixture();
  await kube.create(RESOURCES.configMaps, NS, {
    ...claim('rack-1', 'seg'),
    data: { kind: 'segment', name: 'rack-1', ownerName: 'seg', ownerUid: 'uid-before-backup' },
  });
  await kube.create(RESOURCES.segments, NS, restoredSegment('seg', 'rack-2'));
  const other = kube.peek<FailoverSegment>(RESOURCES.segments, NS, 'seg')!;
  await rejection(claims.take('segment', 'rack-1', { name: 'seg', uid: other.metadata.uid ?? '' }), NameTakenError);
  assert.is(
    kube.peek<ConfigMap>(RESOURCES.configMaps, NS, claimObjectName('segment', 'rack-1'))?.data?.ownerUid,
    'uid-before-backup',
  );
});

test.run();
