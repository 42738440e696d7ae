import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Condition, Notification, NotificationStatus } from '../model/types.ts';
import { getCondition } from '../runtime/conditions.ts';
import { admittedConditions, notificationConditions, syncNotificationConditions } from './conditions.ts';
import { isAdmitted, isRefused } from '../domain/admitted.ts';

const NOW = new Date('2026-01-02T03:04:05Z');
const LATER = new Date('2026-01-02T03:09:05Z');

function summary(conditions: Condition[]): Record<string, string> {
  return Object.fromEntries(conditions.map((c) => [c.type, `${c.status}/${c.reason}`]));
}

function notification(phase: NotificationStatus, conditions?: Condition[]): Notification {
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: { name: 'n', generation: 1 },
    spec: { type: 'COMPUTE_HOST', hostname: 'compute-0', generatedTime: '2026-01-02T03:04:05Z', payload: {} },
    status: { uuid: 'u', id: 1, sourceHostUuid: 'h', phase, conditions },
  } as Notification;
}

test('each notification phase maps to the conditions kstatus and Ready readers expect', () => {
  const expect: Record<NotificationStatus, Record<string, string>> = {
    new: { Ready: 'Unknown/RecoveryPending', Reconciling: 'True/RecoveryPending' },
    running: { Ready: 'Unknown/RecoveryRunning', Reconciling: 'True/RecoveryRunning' },
    error: { Ready: 'False/RecoveryError', Reconciling: 'True/RecoveryError' },
    finished: { Ready: 'True/RecoveryFinished' },
    ignored: { Ready: 'True/Ignored' },
    failed: { Ready: 'False/RecoveryFailed', Stalled: 'True/RecoveryFailed' },
  };
  for (const [phase, want] of Object.entries(expect)) {
    assert.equal(summary(notificationConditions(undefined, phase as NotificationStatus, 1, NOW)), want, phase);
  }
});

test('a failed recovery never keeps Ready=True from its admission', () => {
  const admitted = admittedConditions(undefined, 1, NOW);
  const failed = notificationConditions(admitted, 'failed', 1, LATER);
  assert.is(getCondition(failed, 'Ready')?.status, 'False');
  assert.is(getCondition(failed, 'Stalled')?.status, 'True');
  assert.is(getCondition(failed, 'Reconciling'), undefined);
});

test('running to finished drops Reconciling and moves the Ready transition time', () => {
  const running = notificationConditions(undefined, 'running', 1, NOW);
  const finished = notificationConditions(running, 'finished', 1, LATER);
  assert.is(getCondition(finished, 'Reconciling'), undefined);
  assert.is(getCondition(finished, 'Ready')?.lastTransitionTime, '2026-01-02T03:09:05Z');
});

test('syncNotificationConditions follows status.phase', () => {
  const n = notification('failed', notificationConditions(undefined, 'running', 1, NOW));
  syncNotificationConditions((n.status ??= {}), LATER, n.metadata.generation);
  assert.equal(summary(n.status?.conditions ?? []), { Ready: 'False/RecoveryFailed', Stalled: 'True/RecoveryFailed' });
});

test('a failed or erroring notification stays visible to the Masakari API; a refused one does not', () => {
  for (const phase of ['failed', 'error'] as const) {
    const n = notification(phase, notificationConditions(undefined, phase, 1, NOW));
    assert.not.ok(isRefused(n), phase);
    assert.ok(isAdmitted(n), phase);
  }
  const refused = notification('new', [
    {
      type: 'Ready',
      status: 'False',
      reason: 'HostNotFound',
      message: 'x',
      lastTransitionTime: '2026-01-02T03:04:05Z',
    },
  ]);
  assert.ok(isRefused(refused));
  assert.not.ok(isAdmitted(refused));
});

test.run();
