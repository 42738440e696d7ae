import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { KubeError } from '../k8s/client.ts';
import { EventRecorder } from './events.ts';
import type { EventInput } from './events.ts';
import { scriptedKube } from '../testing/fake-kube.ts';

const log = pino({ level: 'silent' });
const regarding = {
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'Notification',
  name: 'n1',
  namespace: 'ns',
  uid: 'u1',
};
const ev = (over: Partial<EventInput> = {}): EventInput => ({
  regarding,
  type: 'Normal',
  reason: 'RecoveryStarted',
  action: 'Recover',
  note: 'started',
  ...over,
});

function setup(opts: { now?: () => number; qps?: number; burst?: number } = {}) {
  const kube = scriptedKube({
    create: (_ref, _ns, body) => body,
    mergePatch: (_ref, _ns, _name, patch) => patch,
  });
  const rec = new EventRecorder({ kube, reportingInstance: 'pod-1', log, ...opts });
  return { kube, rec };
}

test('an event is written as events.k8s.io/v1 with reporting fields and microsecond eventTime', async () => {
  const { kube, rec } = setup();
  rec.record(ev({ type: 'Warning' }));
  await rec.flush();
  const [call] = kube.callsOf('create');
  const body = call!.args[2] as Record<string, unknown>;
  assert.is(call!.args[1], 'ns');
  assert.is(body.apiVersion, 'events.k8s.io/v1');
  assert.is(body.reportingController, 'masakari-operator');
  assert.is(body.reportingInstance, 'pod-1');
  assert.is(body.type, 'Warning');
  assert.is(body.reason, 'RecoveryStarted');
  assert.is(body.action, 'Recover');
  assert.is(body.note, 'started');
  assert.equal(body.regarding, regarding);
  assert.match(body.eventTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.match((body.metadata as { name: string }).name, /^n1\.[0-9a-f]+$/);
  assert.is(body.series, undefined);
});

test('a repeat within the window bumps series.count on the same Event', async () => {
  const { kube, rec } = setup();
  rec.record(ev());
  await rec.flush();
  rec.record(ev());
  await rec.flush();
  rec.record(ev());
  await rec.flush();
  assert.is(kube.callsOf('create').length, 1);
  const patches = kube.callsOf('mergePatch');
  assert.is(patches.length, 2);
  const created = kube.callsOf('create')[0]!.args[2] as { metadata: { name: string } };
  assert.is(patches[0]!.args[2], created.metadata.name);
  assert.is((patches[1]!.args[3] as { series: { count: number } }).series.count, 3);
  assert.match((patches[1]!.args[3] as { series: { lastObservedTime: string } }).series.lastObservedTime, /\.\d{6}Z$/);
});

test('repeats while a write is in flight are coalesced into one update', async () => {
  const { kube, rec } = setup();
  for (let i = 0; i < 10; i++) rec.record(ev());
  await rec.flush();
  assert.is(kube.callsOf('create').length, 1);
  const patches = kube.callsOf('mergePatch');
  assert.is(patches.length, 1);
  assert.is((patches[0]!.args[3] as { series: { count: number } }).series.count, 10);
});

test('a different note or reason is a different event', async () => {
  const { kube, rec } = setup();
  rec.record(ev());
  rec.record(ev({ note: 'other' }));
  rec.record(ev({ reason: 'RecoveryFinished' }));
  await rec.flush();
  assert.is(kube.callsOf('create').length, 3);
});

test('repeats about the same object merge even when its resourceVersion moved on', async () => {
  const { kube, rec } = setup();
  rec.record(ev({ regarding: { ...regarding, resourceVersion: '1' } }));
  await rec.flush();
  rec.record(ev({ regarding: { ...regarding, resourceVersion: '2' } }));
  await rec.flush();
  assert.is(kube.callsOf('create').length, 1);
  assert.is(kube.callsOf('mergePatch').length, 1);
});

test('after the window a repeat starts a new Event', async () => {
  let now = 1_000_000;
  const { kube, rec } = setup({ now: () => now });
  rec.record(ev());
  await rec.flush();
  now += 7 * 60_000;
  rec.record(ev());
  await rec.flush();
  assert.is(kube.callsOf('create').length, 2);
  assert.is(kube.callsOf('mergePatch').length, 0);
});

test('the rate limit holds writes beyond the burst back instead of flooding, and sends them later', async () => {
  const { kube, rec } = setup({ qps: 50, burst: 3 });
  for (let i = 0; i < 10; i++) rec.record(ev({ note: `n${i}` }));
  await rec.flush();
  assert.is(kube.callsOf('create').length, 3);
  const deadline = Date.now() + 5_000;
  while (kube.callsOf('create').length < 10 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    await rec.flush();
  }
  assert.is(kube.callsOf('create').length, 10, 'every held-back Event is written once tokens are back');
});

test('the rate limit is per object: a noisy object does not silence another', async () => {
  const now = 1_000_000;
  const { kube, rec } = setup({ now: () => now, qps: 1, burst: 3 });
  for (let i = 0; i < 20; i++) rec.record(ev({ note: `n${i}` }));
  rec.record(ev({ note: 'quiet', regarding: { ...regarding, name: 'other', uid: 'other-uid' } }));
  await rec.flush();
  assert.is(kube.callsOf('create').length, 4);
});

test('a failing API never throws to the caller', async () => {
  const kube = scriptedKube({
    create: () => {
      throw new KubeError(403, 'Forbidden', 'no');
    },
  });
  const rec = new EventRecorder({ kube, reportingInstance: 'p', log });
  rec.record(ev());
  await rec.flush();
  assert.is(kube.callsOf('create').length, 1);
});

test('an expired Event (404 on the series update) is re-created', async () => {
  const { kube, rec } = setup();
  rec.record(ev());
  await rec.flush();
  kube.script({
    mergePatch: () => {
      throw new KubeError(404, 'NotFound', 'gone');
    },
  });
  rec.record(ev());
  await rec.flush();
  assert.is(kube.callsOf('create').length, 2);
});

test('long notes are truncated to the 1 KiB API limit', async () => {
  const { kube, rec } = setup();
  rec.record(ev({ note: 'é'.repeat(2000) }));
  await rec.flush();
  const note = (kube.callsOf('create')[0]!.args[2] as { note: string }).note;
  assert.ok(Buffer.byteLength(note) <= 1024);
  assert.ok(note.endsWith('...'));
});

test.run();
