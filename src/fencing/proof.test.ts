import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FenceAgentsRemediationLike, SelfNodeRemediationLike } from '../model/remediation-types.ts';
import type { Condition } from '../model/types.ts';
import { evaluateFencing, farProof, manualApproval, remediationProof, snrProof } from './proof.ts';
import type { FencingInput } from './proof.ts';
import { missingProof } from './testing/verdict.ts';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const cond = (type: string, status: Condition['status']): Condition => ({
  type,
  status,
  reason: 'X',
  message: '',
  lastTransitionTime: '2026-11-29T11:59:00Z',
});
/** The verdict for node worker-1, now. */
const verdict = (i: Omit<FencingInput, 'node' | 'nowMs'>) => evaluateFencing({ node: 'worker-1', nowMs: NOW, ...i });
const far = (
  name: string,
  status: Condition['status'],
  annotations?: Record<string, string>,
): FenceAgentsRemediationLike => ({
  metadata: { name, namespace: 'far', annotations },
  status: { conditions: [cond('FenceAgentActionSucceeded', status)] },
});

test('a FAR for the node with FenceAgentActionSucceeded=True proves fencing', () => {
  const proof = farProof([far('worker-1', 'True')], 'worker-1');
  assert.equal(proof?.kind, 'FenceAgentsRemediation');
  assert.equal(proof?.reason, 'FenceAgentActionSucceeded');
  assert.match(proof!.source, 'far/worker-1');
});

test('a FAR still running, for another node, or being deleted proves nothing', () => {
  assert.is(farProof([far('worker-1', 'False')], 'worker-1'), undefined);
  assert.is(farProof([far('worker-2', 'True')], 'worker-1'), undefined);
  const deleting = far('worker-1', 'True');
  deleting.metadata.deletionTimestamp = '2026-11-29T11:59:30Z';
  assert.is(farProof([deleting], 'worker-1'), undefined);
});

test("a generateName'd FAR is matched by its node-name annotation, not its name", () => {
  const f = far('worker-1-x7k2p', 'True', { 'remediation.medik8s.io/node-name': 'worker-1' });
  assert.ok(farProof([f], 'worker-1'));
  assert.is(farProof([f], 'worker-1-x7k2p'), undefined);
});

const snr = (created: string, timeAssumedRebooted?: string): SelfNodeRemediationLike => ({
  metadata: { name: 'worker-1', namespace: 'snr', creationTimestamp: created },
  status: timeAssumedRebooted ? { timeAssumedRebooted } : {},
});

test('an SNR proves fencing once timeAssumedRebooted has passed', () => {
  assert.ok(snrProof([snr('2026-11-29T11:50:00Z', '2026-11-29T11:59:00Z')], 'worker-1', NOW));
  assert.is(snrProof([snr('2026-11-29T11:50:00Z', '2026-11-29T12:01:00Z')], 'worker-1', NOW), undefined);
});

test('an SNR older than the safe time proves fencing only when a safe time is configured', () => {
  const old = snr('2026-11-29T11:55:00Z');
  assert.is(snrProof([old], 'worker-1', NOW), undefined);
  assert.ok(snrProof([old], 'worker-1', NOW, 300));
  assert.is(snrProof([old], 'worker-1', NOW, 301), undefined);
});

test('the fencing-approved-by annotation is an approval that names who and the writing field manager', () => {
  const proof = manualApproval(
    {
      name: 'worker-1',
      annotations: { 'masakari.openkeel.io/fencing-approved-by': ' alice@ops ' },
      managedFields: [
        {
          manager: 'kubectl-annotate',
          fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:masakari.openkeel.io/fencing-approved-by': {} } } },
        },
      ],
    },
    'MasakariRemediation',
  );
  assert.equal(proof?.approvedBy, 'alice@ops');
  assert.match(proof!.message, 'approved by "alice@ops"');
  assert.match(proof!.message, 'kubectl-annotate');
  assert.is(manualApproval({ annotations: { 'masakari.openkeel.io/fencing-approved-by': '  ' } }, 'X'), undefined);
});

test('without proof the verdict says what is missing', () => {
  const none = verdict({
    required: 'FenceAgentsRemediation',
    fars: { items: [] },
  });
  assert.match(missingProof(none), 'no FenceAgentsRemediation exists for node worker-1');
  assert.match(missingProof(none), 'masakari.openkeel.io/fencing-approved-by');
  const running = verdict({
    required: 'FenceAgentsRemediation',
    fars: { items: [far('worker-1', 'False')] },
  });
  assert.match(missingProof(running), 'far/worker-1 has not reported FenceAgentActionSucceeded=True yet');
});

test('an absent FAR CRD is "no proof", not an error', () => {
  const v = verdict({
    required: 'FenceAgentsRemediation',
    fars: {
      unavailable: 'FenceAgentsRemediation (fence-agents-remediation.medik8s.io) is not installed in this cluster',
    },
  });
  assert.match(missingProof(v), 'is not installed');
});

test('only the required proof counts, but a manual approval overrides any requirement', () => {
  const snrOnly = verdict({
    required: 'SelfNodeRemediation',
    fars: { items: [far('worker-1', 'True')] },
    snrs: { items: [] },
  });
  assert.equal(snrOnly.proven, false);
  const approved = verdict({
    required: 'FenceAgentsRemediation',
    fars: { items: [] },
    approvalOn: {
      meta: { name: 'r', annotations: { 'masakari.openkeel.io/fencing-approved-by': 'bob' } },
      kind: 'MasakariRemediation',
    },
  });
  assert.equal(approved.proven && approved.proof.kind, 'ManualApproval');
  const manual = verdict({ required: 'ManualApproval' });
  assert.match(missingProof(manual), 'fencingProof is ManualApproval');
});

test("a MasakariRemediation's FencingVerified=True is proof for the API path", () => {
  const proof = remediationProof(
    [
      {
        apiVersion: 'masakari.openkeel.io/v1alpha1',
        kind: 'MasakariRemediation',
        metadata: { name: 'worker-1-abcde', annotations: { 'remediation.medik8s.io/node-name': 'worker-1' } },
        status: { conditions: [{ ...cond('FencingVerified', 'True'), reason: 'FenceAgentActionSucceeded' }] },
      },
    ],
    'worker-1',
  );
  assert.equal(proof?.reason, 'FenceAgentActionSucceeded');
  assert.is(remediationProof([], 'worker-1'), undefined);
});

test.run();
