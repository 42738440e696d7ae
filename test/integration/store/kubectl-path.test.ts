// CRs created and deleted with kubectl get the same treatment as REST-created
// ones: uuid/id/timestamps, name claims, Masakari validation, cascades, and
// cleanup of orphaned claims.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { isNotFound } from '../../../src/k8s/client.ts';
import { LABELS } from '../../../src/model/constants.ts';
import type { FailoverSegment, HaHost, Notification } from '../../../src/model/types.ts';
import type { ConfigMap } from '../../../src/store/configmap.ts';
import { claimObjectName } from '../../../src/store/names.ts';
import type { StoreEnv } from './helpers.ts';
import { eventually, rejects, segmentInput, storeEnv } from './helpers.ts';
import { readyCondition, REASONS } from '../../../src/domain/admitted.ts';

const kubectl = suite<{ env: StoreEnv }>('store kubectl path', { env: undefined as unknown as StoreEnv });
kubectl.before(async (ctx) => {
  ctx.env = await storeEnv('store-kubectl');
});
kubectl.after(async (ctx) => {
  await ctx.env.close();
});

async function apply(env: StoreEnv, yaml: string): Promise<void> {
  const r = await env.kubectl(['apply', '-n', env.namespace, '-f', '-'], yaml);
  assert.is(r.code, 0, r.stderr);
}

const segmentYaml = (name: string, masakariName: string) => `
apiVersion: masakari.openkeel.io/v1alpha1
kind: FailoverSegment
metadata: {name: ${name}}
spec: {name: ${masakariName}, recoveryMethod: auto, serviceType: COMPUTE}
`;
const hostYaml = (name: string, hostName: string, segment: string) => `
apiVersion: masakari.openkeel.io/v1alpha1
kind: HaHost
metadata: {name: ${name}}
spec: {name: ${hostName}, segmentRef: {name: ${segment}}, type: COMPUTE, controlAttributes: SSH}
`;
const notificationYaml = (name: string, hostName: string) => `
apiVersion: masakari.openkeel.io/v1alpha1
kind: Notification
metadata: {name: ${name}}
spec:
  type: PROCESS
  hostname: ${hostName}
  generatedTime: "2026-01-02T03:04:05Z"
  payload: {process_name: nova-compute, event: STOPPED}
`;

kubectl(
  'kubectl-created segment, host and notification get uuid/id/timestamps and appear in the repository',
  async ({ env }) => {
    const repo = await env.open();
    await apply(
      env,
      segmentYaml('gitops-seg', 'GitOps Segment') + '---' + hostYaml('gitops-host', 'compute-g1', 'gitops-seg'),
    );
    const seg = await eventually(
      'segment admitted',
      () => repo.listSegments().find((s) => s.name === 'GitOps Segment'),
      (s) => !!s,
    );
    assert.is(seg!.k8sName, 'gitops-seg');
    assert.ok(seg!.id > 0);
    assert.match(seg!.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    assert.is(seg!.updated_at, null);
    const raw = await env.kube.get<FailoverSegment>(RESOURCES.segments, env.namespace, 'gitops-seg');
    assert.is(raw.metadata.labels?.[LABELS.uuid], seg!.uuid);
    assert.is(raw.metadata.labels?.[LABELS.id], String(seg!.id));
    assert.is(seg!.uuid, raw.metadata.uid, 'uuid = metadata.uid for kubectl-created objects');

    const host = await eventually(
      'host admitted',
      () => repo.getHostByName('compute-g1'),
      (h) => !!h,
    );
    assert.is(host!.failover_segment_id, seg!.uuid);
    const rawHost = await env.kube.get<HaHost>(RESOURCES.hosts, env.namespace, 'gitops-host');
    assert.is(rawHost.metadata.ownerReferences?.[0]?.uid, raw.metadata.uid);
    assert.is(rawHost.metadata.labels?.[LABELS.segmentUuid], seg!.uuid);

    await apply(env, notificationYaml('gitops-notif', 'compute-g1'));
    const n = await eventually(
      'notification admitted',
      () => repo.listNotifications().find((x) => x.k8sName === 'gitops-notif'),
      (x) => !!x,
    );
    assert.is(n!.status, 'new');
    assert.is(n!.source_host_uuid, host!.uuid);
    assert.is(n!.failover_segment_uuid, seg!.uuid);

    // A spec edit (generation bump) sets updated_at; the reconciler never writes spec.
    await apply(
      env,
      segmentYaml('gitops-seg', 'GitOps Segment').replace('recoveryMethod: auto', 'recoveryMethod: reserved_host'),
    );
    const edited = await eventually(
      'updated_at set',
      () => repo.getSegment(seg!.uuid),
      (s) => !!s?.updated_at,
    );
    assert.is(edited!.recovery_method, 'reserved_host');
  },
);

kubectl('name conflicts, missing segments and unknown hosts are flagged and never listed', async ({ env }) => {
  const repo = await env.open();
  await repo.createSegment(segmentInput('taken'));
  await apply(env, segmentYaml('copycat', 'taken'));
  const flagged = await eventually(
    'NameConflict',
    () => env.kube.get<FailoverSegment>(RESOURCES.segments, env.namespace, 'copycat'),
    (s) => readyCondition(s)?.reason === REASONS.nameConflict,
  );
  assert.is(readyCondition(flagged)?.message, 'Failover segment with name taken already exists.');
  assert.is(repo.listSegments().filter((s) => s.name === 'taken').length, 1);

  await apply(env, hostYaml('orphan-host', 'compute-x', 'no-such-segment'));
  await eventually(
    'SegmentNotFound',
    () => env.kube.get<HaHost>(RESOURCES.hosts, env.namespace, 'orphan-host'),
    (h) => readyCondition(h)?.reason === REASONS.segmentNotFound,
  );
  assert.is(repo.getHostByName('compute-x'), undefined);
  // The segment arriving later admits the waiting host.
  await apply(env, segmentYaml('no-such-segment', 'late segment'));
  await eventually(
    'late host admitted',
    () => repo.getHostByName('compute-x'),
    (h) => !!h,
  );

  await apply(env, notificationYaml('ghost-notif', 'ghost'));
  await eventually(
    'HostNotFound',
    () => env.kube.get<Notification>(RESOURCES.notifications, env.namespace, 'ghost-notif'),
    (n) => readyCondition(n)?.reason === REASONS.hostNotFound,
  );
  assert.not.ok(repo.listNotifications().some((n) => n.k8sName === 'ghost-notif'));
});

kubectl('kubectl delete of a segment cascades to its hosts and frees both names', async ({ env }) => {
  const repo = await env.open();
  await apply(env, segmentYaml('doomed', 'doomed') + '---' + hostYaml('doomed-host', 'compute-d', 'doomed'));
  await eventually(
    'host admitted',
    () => repo.getHostByName('compute-d'),
    (h) => !!h,
  );
  const r = await env.kubectl([
    'delete',
    '-n',
    env.namespace,
    'failoversegments.masakari.openkeel.io',
    'doomed',
    '--wait=true',
    '--timeout=30s',
  ]);
  assert.is(r.code, 0, r.stderr);
  await eventually(
    'host deleted',
    async () => {
      try {
        await env.kube.get(RESOURCES.hosts, env.namespace, 'doomed-host');
        return false;
      } catch (e) {
        return isNotFound(e);
      }
    },
    (gone) => gone,
  );
  const again = await repo.createSegment(segmentInput('doomed'));
  assert.is(again.name, 'doomed');
});

kubectl('orphaned claims (owner gone or renamed away) are swept after the grace period', async ({ env }) => {
  const repo = await env.open({ reconcilers: false, claimGraceMs: 0 });
  const orphan: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: claimObjectName('segment', 'crashed'), labels: { [LABELS.role]: 'name-claim' } },
    data: { kind: 'segment', name: 'crashed', ownerName: 'crashed-1234abcd' },
  };
  await env.kube.create(RESOURCES.configMaps, env.namespace, orphan);
  const live = await repo.createSegment(segmentInput('alive'));
  assert.ok((await repo.sweepOrphans()) >= 1);
  await rejects(
    () => env.kube.get(RESOURCES.configMaps, env.namespace, claimObjectName('segment', 'crashed')),
    (e: unknown) => isNotFound(e),
  );
  await env.kube.get(RESOURCES.configMaps, env.namespace, claimObjectName('segment', 'alive'));
  assert.ok(repo.getSegment(live.uuid));
  // A stale claim in the way of a create is taken over at once.
  await env.kube.create(RESOURCES.configMaps, env.namespace, orphan);
  const taken = await repo.createSegment(segmentInput('crashed'));
  assert.is(taken.name, 'crashed');
});

kubectl.run();
