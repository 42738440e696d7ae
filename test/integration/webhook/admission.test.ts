// The validating webhook against a real API server and real kubectl: the
// rules the Masakari REST API applies (unique names, Nova knows the host,
// nothing in use is changed) refuse kubectl writes up front with Masakari's
// words, while the operator's own writes (status, metadata) keep passing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES } from '../../../src/k8s/resources.ts';
import { FIELD_MANAGERS } from '../../../src/model/constants.ts';
import type { FailoverSegment, HaHost, Notification } from '../../../src/model/types.ts';
import type { Doc, OperatorEnv } from './support.ts';
import { deniedMessage, eventually, operatorEnv, restMessage } from './support.ts';
import { readyCondition } from '../../../src/domain/admitted.ts';

const webhook = suite<{ env: OperatorEnv }>('admission webhook', { env: undefined as unknown as OperatorEnv });
webhook.before(async (ctx) => {
  ctx.env = await operatorEnv('webhook');
});
webhook.after(async (ctx) => {
  await ctx.env?.close();
});

const segmentYaml = (name: string, masakariName: string, recoveryMethod = 'auto') => `
apiVersion: masakari.openkeel.io/v1alpha1
kind: FailoverSegment
metadata: {name: ${name}}
spec: {name: ${masakariName}, recoveryMethod: ${recoveryMethod}, serviceType: COMPUTE}
`;
const hostYaml = (name: string, hostName: string, segment: string) => `
apiVersion: masakari.openkeel.io/v1alpha1
kind: HaHost
metadata: {name: ${name}}
spec: {name: ${hostName}, segmentRef: {name: ${segment}}, type: COMPUTE, controlAttributes: SSH}
`;

async function apply(env: OperatorEnv, yaml: string) {
  return env.kubectl(['apply', '--server-side', '-f', '-'], yaml);
}

async function admittedSegment(env: OperatorEnv, name: string): Promise<FailoverSegment> {
  return eventually(
    `segment ${name} admitted`,
    () => env.kube.get<FailoverSegment>(RESOURCES.segments, env.ns.namespace, name),
    (s) => readyCondition(s)?.status === 'True',
  );
}

async function admittedHost(env: OperatorEnv, name: string): Promise<HaHost> {
  return eventually(
    `host ${name} admitted`,
    () => env.kube.get<HaHost>(RESOURCES.hosts, env.ns.namespace, name),
    (h) => readyCondition(h)?.status === 'True',
  );
}

webhook('a second segment with the same name is denied with Masakari’s message, as REST denies it', async ({ env }) => {
  const first = await apply(env, segmentYaml('rack-a', 'Rack A'));
  assert.is(first.code, 0, first.stderr);
  await admittedSegment(env, 'rack-a');
  const second = await apply(env, segmentYaml('rack-a-copy', 'Rack A'));
  assert.is.not(second.code, 0);
  assert.match(second.stderr, 'admission webhook "validate.masakari.openkeel.io" denied the request');
  assert.is(deniedMessage(second.stderr), 'Failover segment with name Rack A already exists.');
  const viaRest = await env.rest('POST', '/v1/segments', {
    segment: { name: 'Rack A', recovery_method: 'auto', service_type: 'COMPUTE' },
  });
  assert.is(viaRest.status, 409);
  assert.is(restMessage(viaRest.json), deniedMessage(second.stderr));
  const listed = await env.kubectl(['get', 'failoversegments', '-o', 'name']);
  assert.not.match(listed.stdout, 'rack-a-copy');
});

webhook('a host whose name is taken in another segment is denied, as REST denies it', async ({ env }) => {
  assert.is((await apply(env, segmentYaml('rack-b', 'Rack B'))).code, 0);
  assert.is((await apply(env, hostYaml('b-compute-1', 'compute-1', 'rack-b'))).code, 0);
  const host = await admittedHost(env, 'b-compute-1');
  const taken = await apply(env, hostYaml('a-compute-1', 'compute-1', 'rack-a'));
  assert.is.not(taken.code, 0);
  assert.is(deniedMessage(taken.stderr), 'Host with name compute-1 already exists.');
  const rackA = await admittedSegment(env, 'rack-a');
  const viaRest = await env.rest('POST', `/v1/segments/${rackA.status?.uuid}/hosts`, {
    host: { name: 'compute-1', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  assert.is(viaRest.status, 409);
  assert.is(restMessage(viaRest.json), deniedMessage(taken.stderr));
  assert.ok(host.status?.uuid);
});

webhook('a host name Nova does not know is denied with Masakari’s message, as REST denies it', async ({ env }) => {
  const ghost = await apply(env, hostYaml('ghost', 'ghost-compute', 'rack-a'));
  assert.is.not(ghost.code, 0);
  assert.match(ghost.stderr, '(BadRequest)');
  assert.is(deniedMessage(ghost.stderr), 'Compute service with name ghost-compute could not be found.');
  const rackA = await admittedSegment(env, 'rack-a');
  const viaRest = await env.rest('POST', `/v1/segments/${rackA.status?.uuid}/hosts`, {
    host: { name: 'ghost-compute', type: 'COMPUTE', control_attributes: 'SSH' },
  });
  assert.is(viaRest.status, 400);
  assert.is(restMessage(viaRest.json), deniedMessage(ghost.stderr));
  // renaming an existing host to an unknown compute service is denied the same way
  const rename = await env.kubectl([
    'patch',
    'hahost',
    'b-compute-1',
    '--type=merge',
    '-p',
    '{"spec":{"name":"ghost-compute"}}',
  ]);
  assert.is(deniedMessage(rename.stderr), 'Compute service with name ghost-compute could not be found.');
});

webhook(
  'a host applied before its segment is allowed with a warning and admitted once the segment exists',
  async ({ env }) => {
    const early = await apply(env, hostYaml('c-compute-3', 'compute-3', 'rack-c'));
    assert.is(early.code, 0, early.stderr);
    assert.match(early.stderr, 'Warning: FailoverSegment rack-c (spec.segmentRef) does not exist yet');
    assert.is((await apply(env, segmentYaml('rack-c', 'Rack C'))).code, 0);
    await admittedHost(env, 'c-compute-3');
  },
);

webhook(
  'while a notification of its hosts is new, a segment and its hosts cannot be changed or deleted',
  async ({ env }) => {
    const segment = await admittedSegment(env, 'rack-b');
    const host = await admittedHost(env, 'b-compute-1');
    const segUuid = segment.status!.uuid!;
    const hostUuid = host.status!.uuid!;
    const posted = await env.rest('POST', '/v1/notifications', {
      notification: {
        type: 'PROCESS',
        hostname: 'compute-1',
        generated_time: '2026-03-01T00:00:00',
        payload: { process_name: 'nova-compute', event: 'STOPPED' },
      },
    });
    assert.is(posted.status, 202, JSON.stringify(posted.json));
    const notificationName: string = (
      await eventually(
        'the notification in the cache',
        () => env.kube.list<Notification>(RESOURCES.notifications, env.ns.namespace),
        (l) => l.items.some((n) => n.status?.uuid === posted.json.notification.notification_uuid),
      )
    ).items.find((n) => n.status?.uuid === posted.json.notification.notification_uuid)!.metadata.name!;

    const segUpdate = await apply(env, segmentYaml('rack-b', 'Rack B', 'reserved_host'));
    assert.is(
      deniedMessage(segUpdate.stderr),
      `Failover segment ${segUuid} can't be updated as it is in-use to process notifications.`,
    );
    const restUpdate = await env.rest('PUT', `/v1/segments/${segUuid}`, {
      segment: { recovery_method: 'reserved_host' },
    });
    assert.is(restUpdate.status, 409);
    assert.is(restMessage(restUpdate.json), deniedMessage(segUpdate.stderr));

    const segDelete = await env.kubectl(['delete', 'failoversegment', 'rack-b', '--wait=false']);
    assert.is(
      deniedMessage(segDelete.stderr),
      `Failover segment (${segUuid}) can't be deleted as it is in-use to process notifications.`,
    );
    const restDelete = await env.rest('DELETE', `/v1/segments/${segUuid}`);
    assert.is(restMessage(restDelete.json), deniedMessage(segDelete.stderr));

    const hostUpdate = await env.kubectl([
      'patch',
      'hahost',
      'b-compute-1',
      '--type=merge',
      '-p',
      '{"spec":{"reserved":true}}',
    ]);
    assert.is(
      deniedMessage(hostUpdate.stderr),
      `Host ${hostUuid} can't be updated as it is in-use to process notifications.`,
    );
    const restHostUpdate = await env.rest('PUT', `/v1/segments/${segUuid}/hosts/${hostUuid}`, {
      host: { reserved: true },
    });
    assert.is(restMessage(restHostUpdate.json), deniedMessage(hostUpdate.stderr));

    const hostDelete = await env.kubectl(['delete', 'hahost', 'b-compute-1', '--wait=false']);
    assert.is(
      deniedMessage(hostDelete.stderr),
      `Host ${hostUuid} can't be deleted as it is in-use to process notifications.`,
    );
    const restHostDelete = await env.rest('DELETE', `/v1/segments/${segUuid}/hosts/${hostUuid}`);
    assert.is(restMessage(restHostDelete.json), deniedMessage(hostDelete.stderr));

    // A no-op re-apply (a GitOps resync during the recovery) and metadata-only edits pass.
    assert.is((await apply(env, segmentYaml('rack-b', 'Rack B'))).code, 0);
    const labelled = await env.kubectl(['label', 'failoversegment', 'rack-b', 'team=ops']);
    assert.is(labelled.code, 0, labelled.stderr);

    // The operator's own writes pass: status (the engine, the store) and metadata (the reconciler).
    await env.kube.mergePatch(
      RESOURCES.hosts,
      env.ns.namespace,
      'b-compute-1',
      { status: { onMaintenance: true, flagsGeneration: host.metadata.generation } },
      { status: true, fieldManager: FIELD_MANAGERS.engine },
    );
    await env.kube.mergePatch(
      RESOURCES.segments,
      env.ns.namespace,
      'rack-b',
      { metadata: { labels: { 'example.com/marker': 'x' } } },
      { fieldManager: FIELD_MANAGERS.reconciler },
    );
    // A field manager is only the client's word: another user claiming the
    // REST path's field manager is checked like any kubectl write.
    const forged = await env.kubectl([
      '--as=intruder',
      '--as-group=system:masters',
      'patch',
      'failoversegment',
      'rack-b',
      `--field-manager=${FIELD_MANAGERS.api}`,
      '--type=merge',
      '-p',
      '{"spec":{"recoveryMethod":"reserved_host"}}',
    ]);
    assert.is.not(forged.code, 0);
    assert.is(
      deniedMessage(forged.stderr),
      `Failover segment ${segUuid} can't be updated as it is in-use to process notifications.`,
    );

    // The REST path's own spec writes (the operator's user, its field manager) are not second-guessed.
    await env.kube.mergePatch(
      RESOURCES.segments,
      env.ns.namespace,
      'rack-b',
      { spec: { description: 'written by the store' } },
      { fieldManager: FIELD_MANAGERS.api },
    );

    // Once the engine has finished the notification, the segment may change again.
    await env.kube.mergePatch(
      RESOURCES.notifications,
      env.ns.namespace,
      notificationName,
      { status: { phase: 'finished' } },
      { status: true, fieldManager: FIELD_MANAGERS.engine },
    );
    await eventually(
      'the segment to be editable',
      () => apply(env, segmentYaml('rack-b', 'Rack B', 'reserved_host')),
      (r) => r.code === 0,
    );
    const edited = await env.rest('GET', `/v1/segments/${segUuid}`);
    assert.is((edited.json as Doc).segment.recovery_method, 'reserved_host');
  },
);

webhook('immutable fields are refused with the CRDs’ wording', async ({ env }) => {
  const move = await env.kubectl([
    'patch',
    'hahost',
    'c-compute-3',
    '--type=merge',
    '-p',
    '{"spec":{"segmentRef":{"name":"rack-a"}}}',
  ]);
  assert.is.not(move.code, 0);
  assert.match(move.stderr, 'segmentRef is immutable; a host cannot move to another segment');
});

webhook(
  'a notification for an unknown host is accepted with a warning and flagged by the reconciler',
  async ({ env }) => {
    const created = await env.kubectl(
      ['create', '-f', '-'],
      `
apiVersion: masakari.openkeel.io/v1alpha1
kind: Notification
metadata: {name: stray}
spec:
  type: PROCESS
  hostname: nobody
  generatedTime: "2026-03-01T00:00:00Z"
  payload: {process_name: nova-compute, event: STOPPED}
`,
    );
    assert.is(created.code, 0, created.stderr);
    assert.match(created.stderr, 'Warning: Host with name nobody could not be found.');
    const flagged = await eventually(
      'HostNotFound',
      () => env.kube.get<Notification>(RESOURCES.notifications, env.ns.namespace, 'stray'),
      (n) => readyCondition(n)?.reason === 'HostNotFound',
    );
    assert.is(readyCondition(flagged)?.message, 'Host with name nobody could not be found.');
  },
);

webhook.run();
