// CEL transition rules: a host cannot change segment, and a notification's
// spec never changes once received; everything else stays editable.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';
import { host, notification, segment, yaml } from './manifests.ts';

const test = suite<{ ns: TestNamespace }>('CRD immutability rules', { ns: undefined as unknown as TestNamespace });
test.before(async (ctx) => {
  ctx.ns = await useNamespace('crd-immutable');
  const r = await ctx.ns.kubectl(['apply', '-f', '-'], yaml(segment('seg-a'), segment('seg-b'), host('h', 'seg-a'), notification('n')));
  assert.is(r.code, 0, r.stderr);
});
test.after(async ({ ns }) => ns.cleanup());

const patch = (ns: TestNamespace, what: string, body: object) => ns.kubectl(['patch', what, '--type=merge', '-p', JSON.stringify(body)]);

test('HaHost spec.segmentRef cannot change', async ({ ns }) => {
  const r = await patch(ns, 'hahost/h', { spec: { segmentRef: { name: 'seg-b' } } });
  assert.is.not(r.code, 0);
  assert.match(r.stderr, 'spec.segmentRef: Invalid value: "object": segmentRef is immutable; a host cannot move to another segment');
});

test('the rest of a HaHost spec stays editable (rename, flags, type)', async ({ ns }) => {
  const r = await patch(ns, 'hahost/h', { spec: { name: 'h-renamed', reserved: true, onMaintenance: true, type: 'SSH' } });
  assert.is(r.code, 0, r.stderr);
});

for (const [field, value] of [
  ['type', 'PROCESS'],
  ['hostname', 'compute-2'],
  ['generatedTime', '2026-11-29T11:00:00Z'],
  ['payload', { event: 'STARTED' }],
] as const) {
  test(`Notification spec.${field} cannot change`, async ({ ns }) => {
    const r = await patch(ns, 'notification/n', { spec: { [field]: value } });
    assert.is.not(r.code, 0, r.stdout);
    assert.match(r.stderr, 'spec is immutable; a notification cannot be changed once received');
  });
}

// The payload rules are for new specs only (optionalOldSelf): on every update, status writes included, they end at
// `oldSelf.hasValue()` instead of walking the payload, and the immutability rule alone answers a spec change.
test('a Notification spec change is refused by the immutability rule alone; the payload rules run on create only', async ({
  ns,
}) => {
  const r = await patch(ns, 'notification/n', { spec: { payload: { event: 'BOGUS', 'bad/key': 'x' } } });
  assert.is.not(r.code, 0, r.stdout);
  assert.match(r.stderr, 'spec is immutable; a notification cannot be changed once received');
  assert.not.match(r.stderr, 'is not one of');
  assert.not.match(r.stderr, 'payload keys must match');
});

test('a Notification still takes label, annotation and status updates', async ({ ns }) => {
  const r = await ns.kubectl(['label', 'notification/n', 'reviewed=yes']);
  assert.is(r.code, 0, r.stderr);
  const s = await ns.kubectl(['patch', 'notification/n', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"finished"}}']);
  assert.is(s.code, 0, s.stderr);
});

test('FailoverSegment spec stays editable (Masakari allows renames and method changes)', async ({ ns }) => {
  const r = await patch(ns, 'failoversegment/seg-a', { spec: { name: 'renamed', recoveryMethod: 'rh_priority', enabled: false } });
  assert.is(r.code, 0, r.stderr);
});

test.run();
