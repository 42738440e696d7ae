// The engine's notification cache against a real kube-apiserver: the
// Notification CRD's selectable field .status.phase lets a field selector
// keep finished, failed and ignored notifications out of the list and the
// watch; a notification without a phase (new) matches; one that finishes is
// sent to the filtered watch as DELETED, one that becomes unfinished again as
// ADDED.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { KubeClient, WatchEvent } from '../../../src/k8s/client.ts';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { Notification } from '../../../src/model/types.ts';
import { isUnfinishedNotification, UNFINISHED_FIELD_SELECTOR } from '../../../src/model/notification-phase.ts';
import { KubeInformer } from '../../../src/runtime/informer.ts';
import { notification } from '../crds/manifests.ts';
import { runtimeEnv, until } from './env.ts';
import type { RuntimeEnv } from './env.ts';

const N = RESOURCES.notifications;
const t = suite<{ env: RuntimeEnv }>('unfinished notifications (selectableFields)');

t.before(async (ctx) => {
  ctx.env = await runtimeEnv('unfinished');
});
t.after(async ({ env }) => env.close());

async function withPhase(kube: KubeClient, ns: string, name: string, phase?: string): Promise<void> {
  await kube.create(N, ns, notification(name));
  if (phase) await kube.mergePatch(N, ns, name, { status: { phase } }, { status: true });
}

const names = (items: Array<{ metadata: { name?: string } }>) => items.map((o) => o.metadata.name ?? '').sort();

t('a field selector on status.phase lists and watches unfinished notifications only', async ({ env }) => {
  const { kube, namespace } = env;
  await withPhase(kube, namespace, 'fresh');
  await withPhase(kube, namespace, 'new', 'new');
  await withPhase(kube, namespace, 'running', 'running');
  await withPhase(kube, namespace, 'error', 'error');
  await withPhase(kube, namespace, 'finished', 'finished');
  await withPhase(kube, namespace, 'failed', 'failed');
  await withPhase(kube, namespace, 'ignored', 'ignored');

  const listed = await kube.list<Notification>(N, namespace, { fieldSelector: UNFINISHED_FIELD_SELECTOR });
  assert.equal(names(listed.items), ['error', 'fresh', 'new', 'running']);

  // The informer as the engine builds it, recording what its watch receives.
  const received: string[] = [];
  const recording = Object.create(kube) as KubeClient;
  recording.watch = (ref, ns, opts, onEvent, signal) =>
    kube.watch(
      ref,
      ns,
      opts,
      (e: WatchEvent<Notification>) => {
        if (e.type !== 'BOOKMARK') received.push(`${e.type} ${e.object.metadata.name}`);
        onEvent(e as never);
      },
      signal,
    );
  const informer = new KubeInformer<Notification>(
    N,
    { namespace, fieldSelector: UNFINISHED_FIELD_SELECTOR, keep: isUnfinishedNotification },
    { kube: recording, log: env.log },
  );
  await informer.start();
  try {
    assert.equal(names(informer.list()), ['error', 'fresh', 'new', 'running']);

    await kube.mergePatch(N, namespace, 'running', { status: { phase: 'finished' } }, { status: true });
    await until(() => !informer.get('running'), 10_000, 'the finished notification leaves the cache');
    assert.ok(received.includes('DELETED running'), `the watch sent DELETED: ${received.join(', ')}`);

    await kube.mergePatch(N, namespace, 'failed', { status: { phase: 'error' } }, { status: true });
    await until(() => !!informer.get('failed'), 10_000, 'a notification that is unfinished again comes back');
    await withPhase(kube, namespace, 'later');
    await until(() => !!informer.get('later'), 10_000, 'a new notification without a phase arrives');
    assert.ok(received.includes('ADDED failed') && received.includes('ADDED later'), received.join(', '));
    assert.equal(names(informer.list()), ['error', 'failed', 'fresh', 'later', 'new']);
  } finally {
    informer.stop();
  }
});

t.run();
