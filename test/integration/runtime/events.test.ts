// EventRecorder against a real kube-apiserver: the Event passes the API's
// validation (events.k8s.io/v1, MicroTime), repeats become a series on the
// same object, and core/v1 readers (kubectl describe) see it too.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { KubeList } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { EventRecorder } from '../../../src/runtime/events.ts';
import { runtimeEnv, segment } from './env.ts';
import type { RuntimeEnv } from './env.ts';

interface Ev {
  metadata: { name: string };
  reason: string;
  note?: string;
  type: string;
  action: string;
  reportingController: string;
  reportingInstance: string;
  eventTime: string;
  regarding: { kind: string; name: string; uid?: string };
  series?: { count: number; lastObservedTime: string };
}

const t = suite<{ env: RuntimeEnv }>('events');
t.before(async (ctx) => {
  ctx.env = await runtimeEnv('rt-events');
});
t.after(async (ctx) => {
  await ctx.env.close();
});

t('events are written, and repeats within the window bump series.count on one Event', async ({ env }) => {
  const { kube, namespace, log } = env;
  const seg = (await kube.create<object>(RESOURCES.segments, namespace, segment('ev-seg'))) as {
    metadata: { uid: string };
  };
  const regarding = {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'FailoverSegment',
    name: 'ev-seg',
    namespace,
    uid: seg.metadata.uid,
  };
  const rec = new EventRecorder({ kube, reportingInstance: 'rt-test-pod', log });
  rec.record({ regarding, type: 'Normal', reason: 'Admitted', action: 'Admit', note: 'segment admitted' });
  await rec.flush();
  for (let i = 0; i < 4; i++) {
    rec.record({ regarding, type: 'Warning', reason: 'NameConflict', action: 'Admit', note: 'name taken' });
    await rec.flush();
  }
  const list = await kube.list<Ev>(RESOURCES.events, namespace);
  assert.is(list.items.length, 2, JSON.stringify(list.items.map((e) => e.reason)));
  const admitted = list.items.find((e) => e.reason === 'Admitted')!;
  assert.is(admitted.type, 'Normal');
  assert.is(admitted.reportingController, 'masakari-operator');
  assert.is(admitted.reportingInstance, 'rt-test-pod');
  assert.is(admitted.regarding.uid, seg.metadata.uid);
  assert.match(admitted.eventTime, /\.\d{6}Z$/);
  assert.is(admitted.series, undefined);
  const conflict = list.items.find((e) => e.reason === 'NameConflict')!;
  assert.is(conflict.series?.count, 4);
  assert.is(conflict.type, 'Warning');

  const core = await kube.list<{ reason: string; involvedObject: { name: string }; count?: number }>(
    { group: '', version: 'v1', plural: 'events', namespaced: true },
    namespace,
  );
  const legacy = core.items.find((e) => e.reason === 'NameConflict');
  assert.is(legacy?.involvedObject.name, 'ev-seg', 'visible to kubectl describe through core/v1');
});

t('a burst of distinct events is capped by the rate limit', async ({ env }) => {
  const { kube, namespace, log } = env;
  const rec = new EventRecorder({ kube, reportingInstance: 'rt-burst', log, qps: 0.001, burst: 3 });
  const regarding = { apiVersion: 'v1', kind: 'ConfigMap', name: 'burst', namespace };
  for (let i = 0; i < 20; i++)
    rec.record({ regarding, type: 'Normal', reason: 'Burst', action: 'Test', note: `n${i}` });
  await rec.flush();
  const list: KubeList<Ev> = await kube.list<Ev>(RESOURCES.events, namespace);
  assert.is(list.items.filter((e) => e.reason === 'Burst').length, 3);
});

t.run();
