import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Condition } from '../model/types.ts';
import { getCondition, isFalse, isTrue, removeCondition, sameConditions, setCondition } from './conditions.ts';

const t0 = new Date('2026-01-01T00:00:00.123Z');
const t1 = new Date('2026-01-01T00:05:00.000Z');

test('setting a new condition stamps lastTransitionTime with second precision', () => {
  const c = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Admitted', observedGeneration: 2 }, t0);
  assert.equal(c, [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Admitted',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 2,
    },
  ]);
});

test('lastTransitionTime does not move when only reason or message change', () => {
  const a = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: 'x' }, t0);
  const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'B', message: 'y' }, t1);
  assert.is(b[0]!.lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.is(b[0]!.reason, 'B');
  assert.is(b[0]!.message, 'y');
});

test('lastTransitionTime moves when the status flips', () => {
  const a = setCondition([], { type: 'Ready', status: 'False', reason: 'A' }, t0);
  const b = setCondition(a, { type: 'Ready', status: 'True', reason: 'A' }, t1);
  assert.is(b[0]!.lastTransitionTime, '2026-01-01T00:05:00Z');
});

test('other conditions are kept in place and the input is not modified', () => {
  const input: Condition[] = [
    { type: 'A', status: 'True', reason: 'r', message: '', lastTransitionTime: 'x' },
    { type: 'Ready', status: 'False', reason: 'r', message: '', lastTransitionTime: 'x' },
  ];
  const out = setCondition(input, { type: 'Ready', status: 'True', reason: 'ok' }, t1);
  assert.equal(
    out.map((c) => c.type),
    ['A', 'Ready'],
  );
  assert.is(input[1]!.status, 'False');
});

test('getCondition, isTrue and isFalse treat an absent condition as Unknown', () => {
  const c = setCondition([], { type: 'Ready', status: 'True', reason: 'r' }, t0);
  assert.ok(isTrue(c, 'Ready'));
  assert.not.ok(isFalse(c, 'Ready'));
  assert.not.ok(isTrue(c, 'Other'));
  assert.not.ok(isFalse(undefined, 'Ready'));
  assert.is(getCondition(c, 'Missing'), undefined);
  assert.equal(removeCondition(c, 'Ready'), []);
});

test('sameConditions ignores lastTransitionTime only', () => {
  const a = setCondition([], { type: 'Ready', status: 'True', reason: 'r' }, t0);
  const b = setCondition([], { type: 'Ready', status: 'True', reason: 'r' }, t1);
  assert.ok(sameConditions(a, b));
  assert.not.ok(sameConditions(a, setCondition(a, { type: 'Ready', status: 'True', reason: 'other' }, t1)));
  assert.not.ok(sameConditions(a, []));
});

test.run();
