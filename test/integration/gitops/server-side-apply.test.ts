// GitOps hygiene with the operator running (store reconcilers + webhook):
// `kubectl apply --server-side` of config/samples twice is a no-op the second
// time, `kubectl diff --server-side` shows nothing, the operator owns no spec
// field of the applied objects (only status and its own metadata), and every
// segment and host carries a Ready condition a health check can read.
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import type { ResourceRef } from '../../../src/k8s/client.ts';
import { FIELD_MANAGERS } from '../../../src/model/constants.ts';
import type { MasakariObject } from '../../../src/model/types.ts';
import type { OperatorEnv } from '../webhook/support.ts';
import { eventually, operatorEnv } from '../webhook/support.ts';
import { isAdmitted, readyCondition } from '../../../src/domain/admitted.ts';

const SAMPLES = fileURLToPath(new URL('../../../config/samples/', import.meta.url));
const OBJECTS: Array<[ResourceRef, string]> = [
  [RESOURCES.segments, 'segment1'],
  [RESOURCES.hosts, 'compute1'],
  [RESOURCES.hosts, 'compute2'],
  [RESOURCES.notifications, 'compute-1-host-down'],
];
const OPERATOR_MANAGERS = new Set<string>(Object.values(FIELD_MANAGERS));

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: Record<string, unknown>;
}

const gitops = suite<{ env: OperatorEnv }>('GitOps: server-side apply of config/samples', {
  env: undefined as unknown as OperatorEnv,
});
gitops.before(async (ctx) => {
  ctx.env = await operatorEnv('gitops');
});
gitops.after(async (ctx) => {
  await ctx.env?.close();
});

const get = (env: OperatorEnv, ref: ResourceRef, name: string) =>
  env.kube.get<MasakariObject>(ref, env.ns.namespace, name);

async function versions(env: OperatorEnv): Promise<string[]> {
  return Promise.all(OBJECTS.map(async ([ref, name]) => (await get(env, ref, name)).metadata.resourceVersion ?? ''));
}

/** Waits until every sample is admitted and nothing has been written for a while (the reconcilers settled). */
async function settled(env: OperatorEnv): Promise<string[]> {
  for (const [ref, name] of OBJECTS) {
    await eventually(
      `${ref.plural}/${name} admitted`,
      () => get(env, ref, name),
      // a notification's Ready follows its recovery (no engine runs here): admitted is enough
      (o) => isAdmitted(o) && !!o.status?.uuid,
    );
  }
  let before = await versions(env);
  for (;;) {
    await new Promise((r) => setTimeout(r, 1_500));
    const now = await versions(env);
    if (now.join() === before.join()) return now;
    before = now;
  }
}

gitops('the second server-side apply changes nothing and kubectl diff is empty', async ({ env }) => {
  const first = await env.kubectl(['apply', '--server-side', '-f', SAMPLES]);
  assert.is(first.code, 0, first.stderr);
  assert.not.match(first.stderr, 'does not exist yet', 'hosts applied with their segment draw no warning');
  const before = await settled(env);

  const second = await env.kubectl(['apply', '--server-side', '-f', SAMPLES]);
  assert.is(second.code, 0, second.stderr);
  assert.match(second.stdout, 'failoversegment.masakari.openkeel.io/segment1 serverside-applied');
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(await versions(env), before, 'no object was written by the second apply or by the reconcilers');

  const diff = await env.kubectl(['diff', '--server-side', '-f', SAMPLES]);
  assert.is(diff.code, 0, `kubectl diff found drift:\n${diff.stdout}${diff.stderr}`);
  assert.is(diff.stdout, '');
});

gitops('the operator owns status and its own metadata, never a spec field of an applied object', async ({ env }) => {
  for (const [ref, name] of OBJECTS) {
    const obj = await get(env, ref, name);
    const entries = (obj.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [];
    const ours = entries.filter((e) => OPERATOR_MANAGERS.has(e.manager ?? ''));
    assert.ok(ours.length > 0, `${name}: the operator wrote something`);
    for (const e of ours) {
      assert.not.ok('f:spec' in (e.fieldsV1 ?? {}), `${name}: ${e.manager} (${e.operation}) owns spec fields`);
    }
    assert.ok(
      ours.some((e) => e.subresource === 'status'),
      `${name}: status is written through the status subresource`,
    );
    const applier = entries.find((e) => e.manager === 'kubectl' && e.operation === 'Apply');
    assert.ok(applier && 'f:spec' in (applier.fieldsV1 ?? {}), `${name}: kubectl owns the spec it applied`);
  }
});

gitops(
  'segments and hosts carry a Ready condition for health checks: True when admitted, False with a reason otherwise',
  async ({ env }) => {
    for (const [ref, name] of OBJECTS.slice(0, 3)) {
      const obj = await get(env, ref, name);
      const ready = readyCondition(obj);
      assert.is(ready?.status, 'True');
      assert.is(ready?.reason, 'Admitted');
      assert.is(ready?.observedGeneration, obj.metadata.generation);
      assert.is(
        obj.status?.observedGeneration,
        obj.metadata.generation,
        'kstatus: the current generation was observed',
      );
    }
    const waited = await env.kubectl([
      'wait',
      '--for=condition=Ready',
      '--timeout=10s',
      'failoversegment/segment1',
      'hahost/compute1',
      'hahost/compute2',
    ]);
    assert.is(waited.code, 0, waited.stderr);

    const orphan = await env.kubectl(
      ['apply', '--server-side', '-f', '-'],
      `
apiVersion: masakari.openkeel.io/v1alpha1
kind: HaHost
metadata: {name: compute4}
spec: {name: compute-4, segmentRef: {name: segment9}, type: COMPUTE, controlAttributes: SSH}
`,
    );
    assert.is(orphan.code, 0, orphan.stderr);
    const flagged = await env.kubectl(['wait', '--for=condition=Ready=False', '--timeout=20s', 'hahost/compute4']);
    assert.is(flagged.code, 0, flagged.stderr);
    const reason = await env.kubectl([
      'get',
      'hahost',
      'compute4',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].reason}',
    ]);
    assert.is(reason.stdout, 'SegmentNotFound');
    // kstatus (Flux): InProgress while the host waits for its segment
    const reconciling = await env.kubectl([
      'get',
      'hahost',
      'compute4',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Reconciling")].status}',
    ]);
    assert.is(reconciling.stdout, 'True');
  },
);

gitops('a spec change from Git waits for the recovery to end, then is taken as is, with no drift', async ({ env }) => {
  const change = `
apiVersion: masakari.openkeel.io/v1alpha1
kind: FailoverSegment
metadata: {name: segment1}
spec: {name: segment1, recoveryMethod: rh_priority, serviceType: COMPUTE, description: Compute hosts of rack 1 (edited), enabled: true}
`;
  // The sample notification is new: segment1 is in use, as Masakari would say.
  const refused = await env.kubectl(['apply', '--server-side', '-f', '-'], change);
  assert.is.not(refused.code, 0);
  assert.match(refused.stderr, "can't be updated as it is in-use to process notifications.");
  // The engine finishes the recovery (it writes status only).
  await env.kube.mergePatch(
    RESOURCES.notifications,
    env.ns.namespace,
    'compute-1-host-down',
    { status: { phase: 'finished' } },
    { status: true, fieldManager: FIELD_MANAGERS.engine },
  );
  const edited = await eventually(
    'the edit to be accepted',
    () => env.kubectl(['apply', '--server-side', '-f', '-'], change),
    (r) => r.code === 0,
  );
  assert.is(edited.code, 0, edited.stderr);
  const seg = await eventually(
    'generation 2 observed',
    () => get(env, RESOURCES.segments, 'segment1'),
    (s) => s.metadata.generation === 2 && s.status?.observedGeneration === 2,
  );
  assert.ok(seg.status?.updatedAt, 'updated_at is stamped for the Masakari API');
  assert.is((seg.spec as { description?: string }).description, 'Compute hosts of rack 1 (edited)');
  const shown = await env.rest('GET', `/v1/segments/${seg.status?.uuid}`);
  assert.is(shown.json.segment.description, 'Compute hosts of rack 1 (edited)');
  const diff = await env.kubectl(['diff', '--server-side', '-f', '-'], change);
  assert.is(diff.code, 0, diff.stdout);
});

gitops.run();
