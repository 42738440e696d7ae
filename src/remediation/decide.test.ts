import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MasakariRemediation } from '../model/remediation-types.ts';
import type { Condition, Notification, NotificationStatus } from '../model/types.ts';
import { effectiveSpec, heldByReason, notificationOutcome, stage, waitDelayMs } from './decide.ts';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const spec = effectiveSpec({ recoveryTimeoutSeconds: 600 }, 'masakari');
const cond = (type: string, status: Condition['status']): Condition => ({
  type,
  status,
  reason: 'R',
  message: '',
  lastTransitionTime: '2026-11-29T11:55:00Z',
});
const remediation = (over: Partial<MasakariRemediation> = {}): MasakariRemediation => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'MasakariRemediation',
  metadata: { name: 'worker-1', annotations: {} },
  status: { startedAt: '2026-11-29T11:55:00Z' },
  ...over,
});

test('defaults: FAR proof, operator namespace, 1800 s, force-down on', () => {
  assert.equal(effectiveSpec(undefined, 'ops'), {
    fencingProof: 'FenceAgentsRemediation',
    segmentNamespace: 'ops',
    recoveryTimeoutSeconds: 1800,
    forceDownComputeService: true,
  });
});

test('a new remediation (no finalizer or no start time) starts first', () => {
  assert.equal(stage(remediation({ status: undefined }), spec, NOW, true).kind, 'start');
  assert.equal(stage(remediation(), spec, NOW, false).kind, 'start');
});

test('deletion wins over everything, a finished remediation is left alone', () => {
  assert.equal(
    stage(remediation({ metadata: { name: 'w', deletionTimestamp: '2026-11-29T11:59:00Z' } }), spec, NOW, true).kind,
    'delete',
  );
  const done = remediation({ status: { startedAt: '2026-11-29T11:55:00Z', conditions: [cond('Succeeded', 'False')] } });
  assert.equal(stage(done, spec, NOW + 10 ** 9, true).kind, 'done');
});

test('before the notification exists the gate runs; afterwards the notification is followed', () => {
  assert.equal(stage(remediation(), spec, NOW, true).kind, 'gate');
  const filed = remediation({ status: { startedAt: '2026-11-29T11:55:00Z', notificationName: 'n-1' } });
  assert.equal(stage(filed, spec, NOW, true).kind, 'follow');
});

test('the nhc-timed-out annotation ends the remediation with RemediationTimeoutByNHC', () => {
  const r = remediation({
    metadata: { name: 'worker-1', annotations: { 'remediation.medik8s.io/nhc-timed-out': '2026-11-29T11:58:00Z' } },
  });
  const s = stage(r, spec, NOW, true);
  assert.equal(s.kind === 'finish' && s.finish.reason, 'RemediationTimeoutByNHC');
  assert.equal(s.kind === 'finish' && s.finish.succeeded, false);
  assert.match(s.kind === 'finish' ? s.finish.message : '', 'nothing was evacuated');
});

test('past recoveryTimeoutSeconds the remediation fails with RemediationTimedOut and says where it stood', () => {
  const s = stage(remediation(), spec, Date.parse('2026-11-29T12:05:00Z'), true);
  assert.equal(s.kind === 'finish' && s.finish.reason, 'RemediationTimedOut');
  assert.match(s.kind === 'finish' ? s.finish.message : '', 'fencing was not proven within recoveryTimeoutSeconds=600');
  assert.equal(stage(remediation(), spec, Date.parse('2026-11-29T12:04:59Z'), true).kind, 'gate');
});

test('a timeout while something held the remediation back says what, not that fencing failed', () => {
  const held = (reason: string, message: string) =>
    remediation({
      status: {
        startedAt: '2026-11-29T11:55:00Z',
        conditions: [{ ...cond('Processing', 'True'), reason, message }],
      },
    });
  for (const [reason, message] of [
    ['NodeLeaseHeld', 'the medik8s node lease of worker-1 is held by node-maintenance'],
    ['NodeExcludedFromRemediation', 'Node worker-1 has label remediation.medik8s.io/exclude-from-remediation=true'],
  ] as const) {
    const s = stage(held(reason, message), spec, Date.parse('2026-11-29T12:05:00Z'), true);
    assert.equal(s.kind === 'finish' && s.finish.reason, 'RemediationTimedOut');
    const text = s.kind === 'finish' ? s.finish.message : '';
    assert.match(text, `no notification was filed within recoveryTimeoutSeconds=600`);
    assert.match(text, message);
    assert.not.match(text, 'fencing was not proven');
  }
});

const notification = (phase?: NotificationStatus, runs?: number, message?: string): Notification => ({
  apiVersion: 'masakari.openkeel.io/v1alpha1',
  kind: 'Notification',
  metadata: { name: 'n-1' },
  spec: { type: 'COMPUTE_HOST', hostname: 'worker-1', generatedTime: '2026-11-29T11:56:00Z', payload: {} },
  status: {
    phase,
    runs,
    message,
  },
});

test('notification phases map to Medik8s outcomes', () => {
  assert.equal(notificationOutcome(notification('finished'), 'u'), {
    succeeded: true,
    reason: 'RemediationFinishedSuccessfully',
    message: "Notification u finished: the host's instances are recovered",
  });
  const ignored = notificationOutcome(notification('ignored', 1, 'Recovery aboart: the segment HA is disabled.'), 'u');
  assert.equal('reason' in ignored && ignored.reason, 'NotificationIgnored');
  assert.match('message' in ignored ? ignored.message : '', 'aboart');
  const failed = notificationOutcome(notification('failed'), 'u');
  assert.equal('reason' in failed && failed.reason, 'RecoveryFailed');
  assert.equal(notificationOutcome(undefined, 'u'), {
    succeeded: false,
    reason: 'NotificationDeleted',
    message: 'Notification u no longer exists',
  });
});

test('an error notification is waited on once (the engine retries it), then fails the remediation', () => {
  assert.ok('running' in notificationOutcome(notification('error', 1), 'u'));
  const again = notificationOutcome(notification('error', 2), 'u');
  assert.equal('reason' in again && again.reason, 'RecoveryError');
  assert.ok('running' in notificationOutcome(notification(undefined), 'u'));
  assert.ok('running' in notificationOutcome(notification('running'), 'u'));
});

test('waiting starts at 2 s, grows to 30 s, and never overshoots the deadline', () => {
  assert.equal(waitDelayMs(NOW, NOW, undefined), 2_000);
  assert.equal(waitDelayMs(NOW, NOW + 100_000, undefined), 10_000);
  assert.equal(waitDelayMs(NOW, NOW + 3_600_000, undefined), 30_000);
  assert.equal(waitDelayMs(NOW, NOW + 100_000, NOW + 101_000), 1_100);
});

test('held remediations are counted by reason for masakari_remediations_held (an unreadable lease among them)', () => {
  const held = (reason: string, status: 'True' | 'False' = 'True'): MasakariRemediation =>
    remediation({
      status: {
        startedAt: '2026-11-29T11:55:00Z',
        conditions: [{ type: 'Processing', status, reason, message: 'm', lastTransitionTime: '2026-11-29T11:55:00Z' }],
      },
    });
  assert.equal(
    Object.fromEntries(
      heldByReason([
        held('NodeLeaseUnreadable'),
        held('NodeLeaseUnreadable'),
        held('NodeLeaseHeld'),
        held('WaitingForFencing'),
        held('NodeLeaseHeld', 'False'),
        remediation(),
      ]),
    ),
    { NodeLeaseHeld: 1, NodeLeaseUnreadable: 2, NodeExcludedFromRemediation: 0 },
  );
});

test.run();
