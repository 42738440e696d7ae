// The informer against a real kube-apiserver: initial sync, live watch,
// recovery from 410 Gone (relist, announcing objects that vanished while the
// watch was down), read-your-writes, and waiting for a resourceVersion.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { KubeClient, WatchEvent } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { KubeInformer } from '../../../src/runtime/informer.ts';
import { runtimeEnv, segment, until } from './env.ts';
import type { RuntimeEnv } from './env.ts';

interface Seg {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: { name: string; recoveryMethod: string; serviceType: string; description?: string };
}

const SEG = RESOURCES.segments;

/**
 * Passes everything through to the real client, except that the test can
 * cut the current watch off (as a network partition would: events are lost)
 * and make the next watch resume from a long-compacted resourceVersion, so
 * the real API server answers 410 Gone.
 */
class PartitionableKube {
  private current: AbortController | undefined;
  private partitioned = false;
  private staleNext = false;
  watchVersions: Array<string | undefined> = [];
  readonly client: KubeClient;

  constructor(real: KubeClient) {
    this.client = Object.create(real) as KubeClient;
    this.client.watch = <T>(
      ref: Parameters<KubeClient['watch']>[0],
      ns: string | undefined,
      opts: Parameters<KubeClient['watch']>[2],
      onEvent: (e: WatchEvent<T>) => void,
      signal: AbortSignal,
    ) => {
      const local = new AbortController();
      this.current = local;
      const resourceVersion = this.staleNext ? '1' : opts.resourceVersion;
      this.staleNext = false;
      this.watchVersions.push(resourceVersion);
      return real.watch<T>(
        ref,
        ns,
        { ...opts, resourceVersion },
        (e) => {
          if (!this.partitioned || e.type === 'ERROR') onEvent(e);
        },
        AbortSignal.any([signal, local.signal]),
      );
    };
  }

  partition(): void {
    this.partitioned = true;
  }

  /** Heals the partition; the watch that lost events is ended and the next one gets 410. */
  healWithExpiredVersion(): void {
    this.partitioned = false;
    this.staleNext = true;
    this.current?.abort();
  }
}

const t = suite<{ env: RuntimeEnv }>('informer');
t.before(async (ctx) => {
  ctx.env = await runtimeEnv('rt-informer');
});
t.after(async (ctx) => {
  await ctx.env.close();
});

t('syncs existing objects, then follows adds, updates and deletes', async ({ env }) => {
  const { kube, namespace, log } = env;
  await kube.create(SEG, namespace, segment('pre-1', { metadata: { name: 'pre-1', labels: { group: 'x' } } }));
  const informer = new KubeInformer<Seg>(
    SEG,
    { namespace, labelSelector: 'group=x', indexes: { desc: (s) => (s.spec.description ? [s.spec.description] : []) } },
    { kube, log },
  );
  const seen: string[] = [];
  informer.on('add', (o) => seen.push(`add ${o.metadata.name}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata.name}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata.name}`));
  await informer.start();
  try {
    assert.ok(informer.hasSynced());
    assert.equal(seen, ['add pre-1']);
    await kube.create(SEG, namespace, segment('live-1', { metadata: { name: 'live-1', labels: { group: 'x' } } }));
    await kube.create(SEG, namespace, segment('not-selected'));
    await kube.mergePatch(SEG, namespace, 'live-1', { spec: { description: 'tagged' } });
    await kube.delete(SEG, namespace, 'pre-1');
    await until(() => seen.length >= 4, 10_000, 'watch events');
    assert.equal(seen, ['add pre-1', 'add live-1', 'update live-1', 'delete pre-1']);
    assert.equal(
      informer.list().map((s) => s.metadata.name),
      ['live-1'],
    );
    assert.equal(
      informer.byIndex('desc', 'tagged').map((s) => s.metadata.name),
      ['live-1'],
    );
  } finally {
    informer.stop();
  }
});

t('after 410 Gone it relists and announces what changed while the watch was down', async ({ env }) => {
  const { kube, namespace, log } = env;
  for (const n of ['g-keep', 'g-drop']) {
    await kube.create(SEG, namespace, segment(n, { metadata: { name: n, labels: { group: 'gone' } } }));
  }
  const partitionable = new PartitionableKube(kube);
  const informer = new KubeInformer<Seg>(
    SEG,
    { namespace, labelSelector: 'group=gone' },
    { kube: partitionable.client, log, backoff: { delayMs: 10, capMs: 50 } },
  );
  const seen: string[] = [];
  informer.on('add', (o) => seen.push(`add ${o.metadata.name}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata.name}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata.name}`));
  await informer.start();
  try {
    await until(() => partitionable.watchVersions.length === 1, 5000, 'first watch');
    partitionable.partition();
    await kube.delete(SEG, namespace, 'g-drop');
    await kube.mergePatch(SEG, namespace, 'g-keep', { spec: { description: 'changed' } });
    await kube.create(SEG, namespace, segment('g-new', { metadata: { name: 'g-new', labels: { group: 'gone' } } }));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(seen.sort(), ['add g-drop', 'add g-keep'], 'events were lost in the partition');
    partitionable.healWithExpiredVersion();
    await until(() => seen.length >= 5, 10_000, 'relist after 410');
    assert.equal(seen.slice(2).sort(), ['add g-new', 'delete g-drop', 'update g-keep']);
    assert.equal(
      informer
        .list()
        .map((s) => s.metadata.name)
        .sort(),
      ['g-keep', 'g-new'],
    );
    assert.is(informer.get('g-keep')?.spec.description, 'changed');
    assert.is(partitionable.watchVersions[1], '1', 'the second watch really used the expired version');
    await until(() => partitionable.watchVersions.length >= 3, 5000, 'watch resumed after relist');
    assert.not.equal(partitionable.watchVersions[2], '1');
  } finally {
    informer.stop();
  }
});

t('read-your-writes: a local upsert or delete is visible at once and not undone by the watch', async ({ env }) => {
  const { kube, namespace, log } = env;
  const informer = new KubeInformer<Seg>(SEG, { namespace, labelSelector: 'group=ryw' }, { kube, log });
  await informer.start();
  try {
    const created = await kube.create<Seg>(
      SEG,
      namespace,
      segment('ryw-1', { metadata: { name: 'ryw-1', labels: { group: 'ryw' } } }),
    );
    informer.upsertLocal(created);
    assert.ok(informer.get('ryw-1'), 'visible before the watch event');
    const updated = await kube.mergePatch<Seg>(SEG, namespace, 'ryw-1', { spec: { description: 'v2' } });
    informer.upsertLocal(updated);
    assert.is(informer.get('ryw-1')?.spec.description, 'v2');
    assert.ok(await informer.waitForResourceVersion(updated.metadata.resourceVersion!, 5000));
    await new Promise((r) => setTimeout(r, 200));
    assert.is(informer.get('ryw-1')?.spec.description, 'v2', 'the late ADDED event did not roll it back');

    await kube.delete(SEG, namespace, 'ryw-1');
    informer.deleteLocal('ryw-1');
    assert.is(informer.get('ryw-1'), undefined);
    assert.equal(informer.list(), []);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(informer.list(), [], 'still gone after the watch caught up');
  } finally {
    informer.stop();
  }
});

t('waitForResourceVersion follows writes made by another client', async ({ env }) => {
  const { kube, namespace, log } = env;
  const informer = new KubeInformer<Seg>(SEG, { namespace, labelSelector: 'group=wait' }, { kube, log });
  await informer.start();
  try {
    const created = await kube.create<Seg>(
      SEG,
      namespace,
      segment('wait-1', { metadata: { name: 'wait-1', labels: { group: 'wait' } } }),
    );
    assert.ok(await informer.waitForResourceVersion(created.metadata.resourceVersion!, 5000));
    assert.ok(informer.get('wait-1'));
    assert.not.ok(
      await informer.waitForResourceVersion(String(Number(created.metadata.resourceVersion) + 10_000), 100),
    );
  } finally {
    informer.stop();
  }
});

t.run();
