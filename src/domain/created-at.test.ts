import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANNOTATIONS } from '../model/constants.ts';
import type { MasakariObject } from '../model/types.ts';
import { createdAtOf, newestFirst } from './created-at.ts';

const obj = (creationTimestamp: string, status: Record<string, unknown> = {}, annotations = {}): MasakariObject =>
  ({ metadata: { name: 'x', creationTimestamp, annotations }, spec: {}, status }) as unknown as MasakariObject;

test('a restored object keeps the created_at recorded at admission, not its new creationTimestamp', () => {
  const restored = obj('2026-12-01T10:00:00Z', { createdAt: '2026-11-01T08:00:00Z' });
  assert.is(createdAtOf(restored), '2026-11-01T08:00:00Z');
});

test("an imported object's Masakari created_at annotation wins over both", () => {
  const imported = obj(
    '2026-12-01T10:00:00Z',
    { createdAt: '2026-11-01T08:00:00Z' },
    { [ANNOTATIONS.createdAt]: '2020-01-01T00:00:00Z' },
  );
  assert.is(createdAtOf(imported), '2020-01-01T00:00:00Z');
});

test('newestFirst orders by that created_at desc, then id desc, as Masakari lists do', () => {
  const older = obj('2026-12-01T10:00:00Z', { createdAt: '2026-11-01T08:00:00Z', id: 9 });
  const newer = obj('2026-11-20T00:00:00Z', { id: 1 });
  const sameTimeLowId = obj('2026-11-20T00:00:00Z', { id: 0 });
  assert.equal([older, sameTimeLowId, newer].sort(newestFirst), [newer, sameTimeLowId, older]);
});

test.run();
