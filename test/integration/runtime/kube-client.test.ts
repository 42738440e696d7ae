// KubeClient against a real kube-apiserver: every verb, patch flavour,
// subresource and error shape the rest of the operator relies on.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError, isAlreadyExists, isConflict, isNotFound } from '../../../src/k8s/client.ts';
import type { KubeList, WatchEvent } from '../../../src/k8s/client.ts';
import { listAllPages } from '../../../src/k8s/list-pages.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { addFinalizer, removeFinalizer } from '../../../src/runtime/finalizers.ts';
import { runtimeEnv, segment, until } from './env.ts';
import type { RuntimeEnv } from './env.ts';

interface Cm {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  data?: Record<string, string>;
}
interface Seg {
  metadata: { name: string; resourceVersion?: string; generation?: number };
  spec: { name: string; recoveryMethod: string; serviceType: string; description?: string };
  status?: { uuid?: string; conditions?: unknown[] };
}

const t = suite<{ env: RuntimeEnv }>('kube-client');
const CM = RESOURCES.configMaps;
const SEG = RESOURCES.segments;

t.before(async (ctx) => {
  ctx.env = await runtimeEnv('rt-client');
});
t.after(async (ctx) => {
  await ctx.env.close();
});

t('create, get, replace with a resourceVersion CAS, and delete a ConfigMap', async ({ env }) => {
  const { kube, namespace } = env;
  const created = await kube.create<Cm>(CM, namespace, { metadata: { name: 'crud' }, data: { a: '1' } });
  assert.ok(created.metadata.uid);
  const got = await kube.get<Cm>(CM, namespace, 'crud');
  assert.equal(got.data, { a: '1' });
  const replaced = await kube.replace<Cm>(CM, namespace, 'crud', { ...got, data: { a: '2' } });
  assert.is(replaced.data?.a, '2');
  try {
    await kube.replace<Cm>(CM, namespace, 'crud', { ...got, data: { a: '3' } });
    assert.unreachable('stale resourceVersion must conflict');
  } catch (err) {
    assert.ok(isConflict(err), String(err));
    assert.is((err as KubeError).reason, 'Conflict');
  }
  await kube.delete(CM, namespace, 'crud');
  try {
    await kube.get(CM, namespace, 'crud');
    assert.unreachable();
  } catch (err) {
    assert.ok(isNotFound(err));
    assert.match((err as KubeError).message, /configmaps "crud" not found/);
  }
});

t('a duplicate create is AlreadyExists; an invalid object is 422 Invalid with the server message', async ({ env }) => {
  const { kube, namespace } = env;
  await kube.create<Cm>(CM, namespace, { metadata: { name: 'dup' } });
  const dup = await kube.create<Cm>(CM, namespace, { metadata: { name: 'dup' } }).catch((e: unknown) => e);
  assert.ok(isAlreadyExists(dup));
  const bad = await kube.create<Cm>(CM, namespace, { metadata: { name: 'Not_Valid' } }).catch((e: unknown) => e);
  assert.instance(bad, KubeError);
  assert.is((bad as KubeError).code, 422);
  assert.is((bad as KubeError).reason, 'Invalid');
  assert.match((bad as KubeError).message, /Not_Valid/);
});

t('dryRun writes nothing', async ({ env }) => {
  const { kube, namespace } = env;
  await kube.create<Cm>(CM, namespace, { metadata: { name: 'dry' } }, { dryRun: true });
  assert.ok(isNotFound(await kube.get(CM, namespace, 'dry').catch((e: unknown) => e)));
});

t('merge patch, JSON patch with a failing test op, and server-side apply', async ({ env }) => {
  const { kube, namespace } = env;
  const c = await kube.create<Cm>(CM, namespace, { metadata: { name: 'patch' }, data: { a: '1' } });
  const merged = await kube.mergePatch<Cm>(CM, namespace, 'patch', { data: { b: '2', a: null } });
  assert.equal(merged.data, { b: '2' });
  const patched = await kube.jsonPatch<Cm>(CM, namespace, 'patch', [
    { op: 'test', path: '/metadata/resourceVersion', value: merged.metadata.resourceVersion },
    { op: 'add', path: '/data/c', value: '3' },
  ]);
  assert.equal(patched.data, { b: '2', c: '3' });
  const stale = await kube
    .jsonPatch<Cm>(CM, namespace, 'patch', [
      { op: 'test', path: '/metadata/resourceVersion', value: c.metadata.resourceVersion },
      { op: 'remove', path: '/data/c' },
    ])
    .catch((e: unknown) => e);
  assert.is((stale as KubeError).code, 422);

  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patch' }, data: { d: '4' } };
  const applied = await kube.apply<Cm>(CM, namespace, 'patch', body, { fieldManager: 'rt-test-a' });
  assert.equal(applied.data, { b: '2', c: '3', d: '4' });
  const clash = await kube
    .apply<Cm>(CM, namespace, 'patch', { ...body, data: { d: '5' } }, { fieldManager: 'rt-test-b' })
    .catch((e: unknown) => e);
  assert.ok(isConflict(clash), 'another manager owns data.d');
  const forced = await kube.apply<Cm>(
    CM,
    namespace,
    'patch',
    { ...body, data: { d: '5' } },
    { fieldManager: 'rt-test-b', force: true },
  );
  assert.is(forced.data?.d, '5');
});

t('delete preconditions on uid and resourceVersion', async ({ env }) => {
  const { kube, namespace } = env;
  const c = await kube.create<Cm>(CM, namespace, { metadata: { name: 'pre' } });
  const wrongUid = await kube
    .delete(CM, namespace, 'pre', { preconditionUid: '00000000-0000-0000-0000-000000000000' })
    .catch((e: unknown) => e);
  assert.ok(isConflict(wrongUid));
  const wrongRv = await kube
    .delete(CM, namespace, 'pre', { preconditionResourceVersion: '1' })
    .catch((e: unknown) => e);
  assert.ok(isConflict(wrongRv));
  await kube.delete(CM, namespace, 'pre', {
    preconditionUid: c.metadata.uid,
    preconditionResourceVersion: c.metadata.resourceVersion,
  });
  assert.ok(isNotFound(await kube.get(CM, namespace, 'pre').catch((e: unknown) => e)));
});

t('list pages through a collection with a label selector', async ({ env }) => {
  const { kube, namespace } = env;
  for (let i = 0; i < 7; i++) {
    await kube.create<Cm>(CM, namespace, { metadata: { name: `page-${i}`, labels: { set: 'paged' } } });
  }
  const first = await kube.list<Cm>(CM, namespace, { labelSelector: 'set=paged', limit: 3 });
  assert.is(first.items.length, 3);
  assert.ok(first.metadata.continue);
  const all: KubeList<Cm> = await listAllPages<Cm>(kube, CM, namespace, { labelSelector: 'set=paged' }, 3);
  assert.is(all.items.length, 7);
  assert.ok(all.metadata.resourceVersion);
  assert.equal(
    all.items.map((c) => c.metadata.name).sort(),
    [0, 1, 2, 3, 4, 5, 6].map((i) => `page-${i}`),
  );
});

t(
  'custom resources: create, status subresource (PUT, merge, apply), spec untouched by status writes',
  async ({ env }) => {
    const { kube, namespace } = env;
    const s = await kube.create<Seg>(SEG, namespace, segment('seg-a'));
    assert.is(s.metadata.generation, 1);
    const withStatus = await kube.replaceStatus<Seg>(SEG, namespace, 'seg-a', {
      ...s,
      spec: { ...s.spec, description: 'ignored by /status' },
      status: { uuid: '11111111-2222-3333-4444-555555555555' },
    });
    assert.is(withStatus.status?.uuid, '11111111-2222-3333-4444-555555555555');
    assert.is(withStatus.spec.description, undefined);
    assert.is(withStatus.metadata.generation, 1, 'status writes do not bump generation');
    const merged = await kube.mergePatch<Seg>(
      SEG,
      namespace,
      'seg-a',
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Admitted',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        },
      },
      { status: true },
    );
    assert.is(merged.status?.conditions?.length, 1);
    const applied = await kube.apply<Seg>(
      SEG,
      namespace,
      'seg-a',
      {
        apiVersion: 'masakari.openkeel.io/v1alpha1',
        kind: 'FailoverSegment',
        metadata: { name: 'seg-a' },
        status: { uuid: '11111111-2222-3333-4444-666666666666' },
      },
      { fieldManager: 'rt-status', status: true, force: true },
    );
    assert.is(applied.status?.uuid, '11111111-2222-3333-4444-666666666666');
    const specPatched = await kube.mergePatch<Seg>(SEG, namespace, 'seg-a', { spec: { description: 'now' } });
    assert.is(specPatched.metadata.generation, 2);
    const invalid = await kube
      .mergePatch<Seg>(SEG, namespace, 'seg-a', { spec: { recoveryMethod: 'nope' } })
      .catch((e: unknown) => e);
    assert.is((invalid as KubeError).code, 422);
    assert.match((invalid as KubeError).message, /recoveryMethod/);
  },
);

t('finalizers are added and removed with a resourceVersion test; stale objects conflict', async ({ env }) => {
  const { kube, namespace } = env;
  const c = await kube.create<Cm>(CM, namespace, { metadata: { name: 'fin' } });
  const withF = await addFinalizer(kube, CM, c, 'example.org/one');
  assert.equal(withF.metadata.finalizers, ['example.org/one']);
  const withTwo = await addFinalizer(kube, CM, withF, 'example.org/two');
  assert.equal(withTwo.metadata.finalizers, ['example.org/one', 'example.org/two']);
  assert.is(await addFinalizer(kube, CM, withTwo, 'example.org/two'), withTwo, 'already present: no write');
  const stale = await addFinalizer(kube, CM, withF, 'example.org/three').catch((e: unknown) => e);
  assert.ok(isConflict(stale), String(stale));

  await kube.delete(CM, namespace, 'fin');
  const deleting = await kube.get<Cm>(CM, namespace, 'fin');
  assert.ok(deleting.metadata.deletionTimestamp);
  assert.is(await addFinalizer(kube, CM, deleting, 'example.org/late'), deleting, 'never added while deleting');
  const afterOne = await removeFinalizer(kube, CM, deleting, 'example.org/one');
  assert.equal(afterOne?.metadata.finalizers, ['example.org/two']);
  await removeFinalizer(kube, CM, afterOne!, 'example.org/two');
  assert.ok(
    isNotFound(await kube.get(CM, namespace, 'fin').catch((e: unknown) => e)),
    'gone once the last finalizer went',
  );
  assert.is(await removeFinalizer(kube, CM, afterOne!, 'example.org/two'), undefined, 'gone object: undefined');
});

t('watch streams events from a resourceVersion and stops on abort', async ({ env }) => {
  const { kube, namespace } = env;
  const start = await kube.list<Cm>(CM, namespace, { limit: 1 });
  const events: Array<WatchEvent<Cm>> = [];
  const ac = new AbortController();
  const watching = kube.watch<Cm>(
    CM,
    namespace,
    { resourceVersion: start.metadata.resourceVersion, allowWatchBookmarks: true, labelSelector: 'w=1' },
    (e) => events.push(e),
    ac.signal,
  );
  await kube.create<Cm>(CM, namespace, { metadata: { name: 'w1', labels: { w: '1' } } });
  await kube.create<Cm>(CM, namespace, { metadata: { name: 'other' } });
  await kube.mergePatch<Cm>(CM, namespace, 'w1', { data: { x: 'y' } });
  await kube.delete(CM, namespace, 'w1');
  await until(() => events.filter((e) => e.type !== 'BOOKMARK').length >= 3, 10_000, 'three watch events');
  ac.abort();
  await watching;
  assert.equal(
    events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}`),
    ['ADDED w1', 'MODIFIED w1', 'DELETED w1'],
  );
});

t('watch ends by itself after timeoutSeconds', async ({ env }) => {
  const started = Date.now();
  await env.kube.watch(CM, env.namespace, { timeoutSeconds: 1 }, () => undefined, new AbortController().signal);
  assert.ok(Date.now() - started < 5000);
});

t('watch from an expired resourceVersion delivers the ERROR event, then rejects with 410', async ({ env }) => {
  const { kube, namespace } = env;
  const events: string[] = [];
  const err = await kube
    .watch<{ code?: number }>(
      SEG,
      namespace,
      { resourceVersion: '1' },
      (e) => events.push(e.type),
      new AbortController().signal,
    )
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.instance(err, KubeError);
  assert.is((err as KubeError).code, 410);
  assert.is((err as KubeError).reason, 'Expired');
  assert.equal(events, ['ERROR']);
});

t('a namespaced get without a namespace is a 400 before any request', async ({ env }) => {
  const err = await env.kube.get(CM, undefined, 'x').catch((e: unknown) => e);
  assert.is((err as KubeError).code, 400);
});

t.run();
