import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { admittedConditions } from '../../testing/admitted.ts';
import { API_VERSION, LABELS } from '../../model/constants.ts';
import type { FailoverSegment, HaHost } from '../../model/types.ts';
import type { ImportTarget, SourceHost, SourceSegment } from '../../store/import-mapping.ts';
import { buildPlan, executionOrder } from './plan.ts';
import type { IdMarks, PlanItem } from './plan.ts';
import type { SourceSnapshot } from './source.ts';

const uuid = (kind: 's' | 'h', n: number) =>
  `${kind === 's' ? '0' : '1'}0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const src = (n: number, extra: Partial<SourceSegment> = {}): SourceSegment => ({
  id: n,
  uuid: uuid('s', n),
  name: `seg-${n}`,
  service_type: 'COMPUTE',
  recovery_method: 'auto',
  description: null,
  enabled: true,
  updated_at: null,
  ...extra,
});

const srcHost = (n: number, seg: number, extra: Partial<SourceHost> = {}): SourceHost => ({
  id: n,
  uuid: uuid('h', n),
  name: `compute-${n}`,
  segment_uuid: uuid('s', seg),
  type: 'COMPUTE',
  control_attributes: 'SSH',
  reserved: false,
  on_maintenance: false,
  updated_at: null,
  ...extra,
});

const admitted = (id: number, u: string) => ({ uuid: u, id, conditions: admittedConditions() });

function segCr(s: SourceSegment, id = s.id): FailoverSegment {
  return {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name: `k-${s.name}`, uid: `uid-${s.uuid}`, generation: 1, labels: { [LABELS.uuid]: s.uuid } },
    spec: {
      name: s.name,
      serviceType: s.service_type,
      recoveryMethod: s.recovery_method,
      description: s.description,
      enabled: s.enabled,
    },
    status: admitted(id, s.uuid),
  };
}

function hostCr(h: SourceHost, id = h.id): HaHost {
  return {
    apiVersion: API_VERSION,
    kind: 'HaHost',
    metadata: { name: `k-${h.name}`, generation: 1, labels: { [LABELS.uuid]: h.uuid } },
    spec: {
      name: h.name,
      segmentRef: { name: 'whatever' },
      type: h.type,
      controlAttributes: h.control_attributes,
      reserved: h.reserved,
      onMaintenance: h.on_maintenance,
    },
    status: { ...admitted(id, h.uuid), segmentUuid: h.segment_uuid },
  };
}

const snapshot = (...entries: Array<[SourceSegment, SourceHost[]]>): SourceSnapshot => ({
  endpoint: 'http://m/v1',
  segments: entries.map(([segment, hosts]) => ({ segment, hosts })),
});

const brief = (items: PlanItem[]) => items.map((i) => `${i.kind} ${i.name} ${i.action} ${i.id ?? '-'}`);

/** The plan's items, checked in brief (kind, name, action, id) against `expected`. */
function planned(source: SourceSnapshot, target: ImportTarget, marks: IdMarks, expected: string[]): PlanItem[] {
  const { items } = buildPlan(source, target, marks);
  assert.equal(brief(items), expected);
  return items;
}

test('an empty namespace: everything is created with its own id', () => {
  const items = planned(
    snapshot([src(1), [srcHost(1, 1), srcHost(2, 1)]], [src(2), []]),
    { segments: [], hosts: [] },
    { segments: 1, hosts: 1 },
    ['segment seg-1 create 1', 'host compute-1 create 1', 'host compute-2 create 2', 'segment seg-2 create 2'],
  );
  assert.ok(items.every((i) => i.keepsId));
});

test('ids used or already handed out get new ids, after every id that can be kept', () => {
  const local = segCr(src(7, { name: 'local' }), 1);
  // sequence mark 3: ids 1 and 2 were handed out; 1 is local's
  const items = planned(
    snapshot([src(1), []], [src(2), []], [src(3), []], [src(5), []]),
    { segments: [local], hosts: [] },
    { segments: 3, hosts: 1 },
    [
      'segment seg-1 create 6',
      'segment seg-2 create 7',
      'segment seg-3 create 3',
      'segment seg-5 create 5',
      'segment local leave 1',
    ],
  );
  assert.equal(items[0]?.details, ['id 1 is already used in the namespace: new id 6']);
  assert.equal(items[1]?.details, ['id 2 is already allocated in the namespace: new id 7']);
  assert.equal(
    executionOrder(items, 'segment').map((i) => i.name),
    ['seg-3', 'seg-5', 'seg-1', 'seg-2', 'local'],
  );
});

test('an object with the uuid is skipped when equal and updated when not, field by field', () => {
  const same = src(1);
  const changed = src(2, { enabled: false, description: 'new' });
  const h1 = srcHost(1, 1, { reserved: true });
  const h1cr = hostCr(h1);
  // engine latch: effective on_maintenance true while the source says false
  h1cr.status = { ...h1cr.status, onMaintenance: true, flagsGeneration: 1 };
  const items = planned(
    snapshot([same, [h1, srcHost(2, 1)]], [changed, []]),
    { segments: [segCr(same), segCr(src(2))], hosts: [h1cr, hostCr(srcHost(2, 1))] },
    { segments: 21, hosts: 21 },
    ['segment seg-1 skip 1', 'host compute-1 update 1', 'host compute-2 skip 2', 'segment seg-2 update 2'],
  );
  assert.equal(items[1]?.details, ['on_maintenance: true -> false']);
  assert.equal(items[3]?.details, ['description: null -> "new"', 'enabled: true -> false']);
});

test('a name another object keeps is an error for that object and its hosts; a name a source object gives up is not', () => {
  const local = segCr(src(9, { name: 'seg-1' }), 9);
  local.metadata.labels = { [LABELS.uuid]: uuid('s', 99) };
  local.status = admitted(9, uuid('s', 99));
  const renamedAway = src(3, { name: 'seg-3-new' });
  const items = planned(
    snapshot([src(1), [srcHost(1, 1)]], [src(2, { name: 'seg-3' }), []], [renamedAway, []]),
    { segments: [local, segCr(src(3))], hosts: [] },
    { segments: 21, hosts: 1 },
    [
      'segment seg-1 fail -',
      'host compute-1 fail -',
      'segment seg-3 create 21',
      'segment seg-3-new update 3',
      'segment seg-1 leave 9',
    ],
  );
  assert.match(
    items[0]?.reason ?? '',
    /segment name "seg-1" is already used by segment 00000000-0000-4000-8000-000000000099/,
  );
  assert.is(items[1]?.reason, 'its segment cannot be imported');
});

test('a host the namespace has in another segment, and invalid records, cannot be imported', () => {
  const h = srcHost(1, 1);
  const there = hostCr({ ...h, segment_uuid: uuid('s', 2) });
  const items = planned(
    {
      endpoint: 'http://m/v1',
      segments: [
        { segment: src(1), hosts: [h, { invalid: 'reserved is missing', name: 'compute-9', id: 9 }] },
        { segment: { invalid: 'uuid is not a uuid ("x")', uuid: 'x', name: 'bad', id: 4 }, hosts: [] },
      ],
    },
    { segments: [], hosts: [there] },
    { segments: 1, hosts: 1 },
    ['segment seg-1 create 1', 'host compute-1 fail 1', 'host compute-9 fail -', 'segment bad fail -'],
  );
  assert.match(
    items[1]?.reason ?? '',
    /has this host in segment 00000000-0000-4000-8000-000000000002, Masakari in 00000000-0000-4000-8000-000000000001/,
  );
  assert.is(items[2]?.reason, 'invalid record from Masakari: reserved is missing');
});

test('an object being deleted, or never admitted, is reported as such', () => {
  const deleting = segCr(src(1));
  deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  const half = segCr(src(2));
  delete half.status;
  const items = planned(
    snapshot([src(1), []], [src(2), []]),
    { segments: [deleting, half], hosts: [] },
    { segments: 3, hosts: 1 },
    ['segment seg-1 fail 1', 'segment seg-2 update -'],
  );
  assert.match(items[0]?.reason ?? '', /being deleted/);
  assert.match(items[1]?.details.join() ?? '', /not yet admitted/);
});

test.run();
