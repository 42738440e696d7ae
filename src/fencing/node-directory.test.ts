import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { ListOptions, WatchEvent } from '../k8s/client.ts';
import type { NodeLike } from '../model/remediation-types.ts';
import { SharedInformerFactory } from '../runtime/shared-informers.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { fencingProofFor } from './proof.ts';
import { NodeDirectory, slimNode } from './node-directory.ts';

const log = pino({ level: 'silent' });
const NOW = Date.parse('2026-11-29T12:00:00Z');

/** A Node as the directory keeps it: its name, the compute host it maps to, and its Ready condition when given. */
const mappedNode = (
  name: string,
  resourceVersion: string,
  computeHost: string,
  ready?: 'True' | 'False',
): NodeLike => ({
  metadata: { name, resourceVersion, annotations: { 'masakari.openkeel.io/compute-host': computeHost } },
  ...(ready ? { status: { conditions: [{ type: 'Ready', status: ready }] } } : {}),
});

function cluster() {
  let push: ((e: WatchEvent<NodeLike>) => void) | undefined;
  const kube = scriptedKube({
    list: (ref) => {
      if (ref.plural !== 'nodes') throw new Error(`unexpected list of ${ref.plural}`);
      return {
        metadata: { resourceVersion: '10' },
        items: [
          {
            metadata: {
              name: 'worker-1',
              resourceVersion: '3',
              annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001', other: 'x'.repeat(1000) },
            },
            status: { images: [{ names: ['big'] }] },
          },
          { metadata: { name: 'worker-2', resourceVersion: '4' } },
        ],
      };
    },
    watch: (_ref, _ns, _o, onEvent, signal) =>
      new Promise<void>((resolve) => {
        push = onEvent as (e: WatchEvent<NodeLike>) => void;
        signal.addEventListener('abort', () => resolve());
      }),
  });
  const factory = new SharedInformerFactory({ kube, log });
  const nodes = new NodeDirectory({ kube, informers: (ref, opts) => factory.informer(ref, opts), log });
  return { kube, nodes, push: (e: WatchEvent<NodeLike>) => push?.(e), factory };
}

test('the fencing gate makes no Node list: it reads a watched Node cache, listed once', async () => {
  const c = cluster();
  for (let i = 0; i < 20; i++) {
    const v = await fencingProofFor('cmp-001', {
      kube: c.kube,
      now: () => NOW,
      accept: [],
      hostNodes: (h) => c.nodes.hostNodes(h),
    });
    assert.is(v.proven, false);
  }
  assert.equal((await c.nodes.hostNodes('cmp-001')).nodes, ['worker-1']);
  assert.equal((await c.nodes.hostNodes('worker-2')).nodes, ['worker-2']);
  assert.equal((await c.nodes.hostNodes('nowhere')).nodes, []);
  const lists = c.kube.callsOf('list');
  assert.is(lists.length, 1, 'one (paged) list when the cache starts, none per question');
  assert.ok((lists[0]!.args[2] as ListOptions).limit! > 0);
  c.push({
    type: 'MODIFIED',
    object: mappedNode('worker-2', '11', 'cmp-002'),
  });
  assert.equal((await c.nodes.hostNodes('cmp-002')).nodes, ['worker-2']);
  assert.equal(await c.nodes.hostNodes('worker-2'), {
    nodes: [],
    problem:
      'no Node maps to host worker-2: Node worker-2 is annotated masakari.openkeel.io/compute-host=cmp-002, and no Node is annotated masakari.openkeel.io/compute-host=worker-2',
  });
  assert.is(c.kube.callsOf('list').length, 1);
  c.nodes.stop();
});

test('the Node cache keeps only the name, the compute-host annotation and the Ready condition', () => {
  const slim = slimNode({
    metadata: {
      name: 'worker-1',
      resourceVersion: '3',
      labels: { a: 'b' },
      annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001', other: 'x' },
    },
    status: {
      images: [],
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-29T12:00:00Z' },
      ],
    },
  } as NodeLike);
  assert.equal(slim, mappedNode('worker-1', '3', 'cmp-001', 'False'));
});

test("nodeReadiness: the one mapped Node's Ready from the cache, never a list; none when not exactly one Node maps", async () => {
  const c = cluster();
  assert.is(c.nodes.nodeReadiness('cmp-001'), undefined, 'not synced yet: no answer');
  await c.nodes.hostNodes('cmp-001');
  assert.is(c.nodes.nodeReadiness('cmp-001'), 'Unknown', 'no Ready condition yet');
  c.push({
    type: 'MODIFIED',
    object: mappedNode('worker-1', '12', 'cmp-001', 'False'),
  });
  assert.is(c.nodes.nodeReadiness('cmp-001'), 'False');
  c.push({
    type: 'MODIFIED',
    object: mappedNode('worker-1', '13', 'cmp-001', 'True'),
  });
  assert.is(c.nodes.nodeReadiness('cmp-001'), 'True');
  assert.is(c.nodes.nodeReadiness('nowhere'), undefined, 'not a Node');
  assert.is(c.kube.callsOf('list').length, 1);
  c.nodes.stop();
});

test.run();
