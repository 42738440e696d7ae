import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Notification } from '../../model/types.ts';
import { managedFieldsDroppable } from './drop-managed-fields.ts';

function stored(phase: string, operations: string[]): Notification {
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: {
      name: 'n',
      resourceVersion: '7',
      managedFields: operations.map((operation) => ({ manager: 'm', operation, fieldsV1: {} })),
    },
    spec: { type: 'VM', hostname: 'compute-1', generatedTime: '2026-12-03T00:00:00', payload: {} },
    status: { phase },
  } as unknown as Notification;
}

test('an ended notification nobody applies sheds its managedFields: finished, failed, ignored', () => {
  for (const phase of ['finished', 'failed', 'ignored']) {
    assert.ok(managedFieldsDroppable(stored(phase, ['Update', 'Update'])), phase);
  }
});

test('a notification that can still be written keeps them: new, running, error', () => {
  for (const phase of ['new', 'running', 'error']) {
    assert.not.ok(managedFieldsDroppable(stored(phase, ['Update'])), phase);
  }
});

test('a notification applied server-side (GitOps) keeps them: the next apply diffs against them', () => {
  assert.not.ok(managedFieldsDroppable(stored('finished', ['Apply', 'Update'])));
});

test('nothing to drop: no write', () => {
  assert.not.ok(managedFieldsDroppable(stored('finished', [])));
});

test.run();
