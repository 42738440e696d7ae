import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ResourceRef } from '../k8s/client.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { Informer, InformerOptions } from '../runtime/types.ts';
import { withoutManagedFields } from '../runtime/informer.ts';
import { COMPUTE_HOST_FIELD_SELECTOR, createStoreCaches } from './caches.ts';
import { slimNotification } from './slim-notification.ts';
import { slimHost } from './slim-host.ts';
import type { InformerFactory, NotificationScope } from './caches.ts';
import { INDEX } from '../model/indexes.ts';
import { fingerprintKey, payloadHash } from './admission/fingerprints.ts';

type Cached = FailoverSegment | HaHost | Notification;

/** Records the options each cache is created with; the informers themselves are never used. */
function captureOptions(scope: NotificationScope = 'all'): Map<string, InformerOptions<Cached>> {
  const seen = new Map<string, InformerOptions<Cached>>();
  const factory = (<T extends Cached>(ref: ResourceRef, opts: InformerOptions<T>) => {
    seen.set(ref.plural, opts as unknown as InformerOptions<Cached>);
    return {} as Informer<T>;
  }) as InformerFactory;
  createStoreCaches(factory, 'ns', scope);
  return seen;
}

const host = (): HaHost =>
  ({
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: {
      name: 'h1',
      namespace: 'ns',
      resourceVersion: '7',
      labels: { 'masakari.openkeel.io/uuid': '6b2c8f0e-0d1c-4c39-9d4f-3f1f6a1b2c3d' },
      managedFields: [{ manager: 'masakari-api', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
    },
    spec: { name: 'compute-1', type: 'COMPUTE', controlAttributes: 'SSH', segmentRef: { name: 'seg' } },
  }) as unknown as HaHost;

test('managedFields are dropped by the informer itself, sharing the rest of the object (no copy)', () => {
  const raw = host();
  const cached = withoutManagedFields(raw);
  assert.is(cached.metadata.managedFields, undefined);
  assert.is(raw.metadata.managedFields?.length, 1, "the server's object is left as it was");
  assert.is(cached.spec, raw.spec, 'spec is shared, not copied');
  assert.is(cached.metadata.labels, raw.metadata.labels, 'labels are shared, not copied');
  assert.is(cached.metadata.resourceVersion, '7');
  const bare = host();
  delete bare.metadata.managedFields;
  assert.is(withoutManagedFields(bare), bare, 'an object without managedFields is cached as it is');
});

test('the store caches slim notifications and share host strings; the engine asks for the same host transform', () => {
  const seen = captureOptions();
  assert.equal([...seen.keys()].sort(), ['failoversegments', 'hahosts', 'notifications'], 'no journal page cache');
  assert.is(seen.get('failoversegments')?.transform, undefined);
  assert.is(seen.get('hahosts')?.transform, slimHost);
  assert.is(seen.get('notifications')?.transform, slimNotification);
});

test('the host indexes read the cached object', () => {
  const opts = captureOptions().get('hahosts')!;
  const cached = withoutManagedFields(host());
  assert.equal(opts.indexes![INDEX.uuid]!(cached), ['6b2c8f0e-0d1c-4c39-9d4f-3f1f6a1b2c3d']);
  assert.equal(opts.indexes![INDEX.name]!(cached), ['compute-1']);
  assert.equal(opts.indexes![INDEX.segmentRef]!(cached), ['seg']);
});

test('the id index files an object under its id in canonical digits (status first, then the label)', () => {
  const idIndex = captureOptions().get('hahosts')!.indexes![INDEX.id]!;
  const withId = (label: string | undefined, status?: number) => {
    const h = host();
    h.metadata.labels = { ...h.metadata.labels, ...(label !== undefined ? { 'masakari.openkeel.io/id': label } : {}) };
    if (status !== undefined) h.status = { ...h.status, id: status };
    return h;
  };
  assert.equal(idIndex(withId('12', 12)), ['12']);
  assert.equal(idIndex(withId('012', 12)), ['12'], 'a label in other digits is not the key');
  assert.equal(idIndex(withId('5', 12)), ['12'], 'status wins over the label');
  assert.equal(idIndex(withId('7')), ['7']);
  assert.equal(idIndex(withId(undefined)), []);
});

test('notifications are filed by duplicate fingerprint: host, type and payload whatever its key order', () => {
  const index = captureOptions().get('notifications')!.indexes![INDEX.fingerprint]! as (n: Notification) => string[];
  const notification = (payload: Record<string, string>, type = 'VM', host = 'h-uuid') =>
    ({
      metadata: { name: 'n', labels: { 'masakari.openkeel.io/host-uuid': host } },
      spec: { type, hostname: 'compute-1', generatedTime: '2026-01-02T03:04:05', payload },
      status: { sourceHostUuid: host },
    }) as unknown as Notification;
  const [key] = index(notification({ event: 'LIFECYCLE', instance_uuid: 'i1' }));
  assert.equal(index(notification({ event: 'LIFECYCLE', instance_uuid: 'i1' })), [key], 'one key per notification');
  assert.is(index(notification({ instance_uuid: 'i1', event: 'LIFECYCLE' }))[0], key, 'key order does not matter');
  assert.is.not(index(notification({ event: 'LIFECYCLE', instance_uuid: 'i2' }))[0], key, 'another payload');
  assert.is.not(index(notification({ event: 'LIFECYCLE', instance_uuid: 'i1' }, 'PROCESS'))[0], key, 'another type');
  assert.is.not(index(notification({ event: 'LIFECYCLE', instance_uuid: 'i1' }, 'VM', 'h2'))[0], key, 'another host');
  assert.is(key, fingerprintKey('h-uuid', 'VM', payloadHash({ event: 'LIFECYCLE', instance_uuid: 'i1' })));
});

test('only notifications not admitted yet are filed by hostname (a host arriving may admit them)', () => {
  const index = captureOptions().get('notifications')!.indexes![INDEX.unadmittedHostname]! as (
    n: Notification,
  ) => string[];
  const waiting = {
    metadata: { name: 'n1' },
    spec: { type: 'VM', hostname: 'compute-1', generatedTime: '2026-01-02T03:04:05', payload: {} },
  } as unknown as Notification;
  const admitted = {
    ...waiting,
    status: {
      uuid: 'n-uuid',
      id: 1,
      sourceHostUuid: 'h-uuid',
      phase: 'finished',
      conditions: [{ type: 'Ready', status: 'True', reason: 'Finished', message: '', lastTransitionTime: '' }],
    },
  } as unknown as Notification;
  assert.equal(index(waiting), ['compute-1']);
  assert.equal(index(admitted), [], 'admitted: not filed, so finished notifications cost this index nothing');
  assert.not.ok(
    Object.keys(captureOptions().get('notifications')!.indexes!).includes('hostUuid'),
    'no index by host uuid: nothing reads one (isUnderRecovery counts from the list index)',
  );
});

test('the compute-host scope caches COMPUTE_HOST notifications only, on the API server and on local writes', () => {
  const notifications = captureOptions('compute-host').get('notifications');
  assert.is(notifications?.fieldSelector, COMPUTE_HOST_FIELD_SELECTOR);
  const keep = notifications?.keep as ((n: Notification) => boolean) | undefined;
  assert.ok(keep?.({ spec: { type: 'COMPUTE_HOST' } } as Notification));
  assert.not.ok(keep?.({ spec: { type: 'VM' } } as Notification));
  const all = captureOptions().get('notifications');
  assert.is(all?.fieldSelector, undefined, 'the API keeps every notification');
  assert.is(all?.keep, undefined);
});

test.run();
