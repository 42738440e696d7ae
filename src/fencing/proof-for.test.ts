// fencingProofFor: the API-path gate (segment spec.requireFencing) over a
// KubeClient that answers list calls only, as the engine would call it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { missingProof } from './testing/verdict.ts';
import { rejection } from '../testing/expect-error.ts';
import type { KubeClient, KubeList, ResourceRef } from '../k8s/client.ts';
import { KubeError } from '../k8s/client.ts';
import { scriptedKube } from '../testing/fake-kube.ts';
import { fencingProofFor } from './proof.ts';

const NOW = Date.parse('2026-11-29T12:00:00Z');

/** Only list is scripted: any other call rejects (501), as fencingProofFor only lists. */
function listingKube(collections: Record<string, unknown[] | KubeError>): KubeClient {
  return scriptedKube({
    list: async (ref: ResourceRef): Promise<KubeList<unknown>> => {
      const found = collections[ref.plural];
      if (found instanceof KubeError) throw found;
      if (!found)
        throw new KubeError(404, 'NotFound', `the server could not find the requested resource (${ref.plural})`);
      return { metadata: {}, items: found };
    },
  });
}

const nodes = [
  { metadata: { name: 'worker-1', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001' } } },
  { metadata: { name: 'worker-2' } },
];
const fenced = (node: string) => ({
  metadata: { name: node, namespace: 'far' },
  status: {
    conditions: [
      {
        type: 'FenceAgentActionSucceeded',
        status: 'True',
        reason: 'FenceAgentSucceeded',
        message: '',
        lastTransitionTime: '2026-11-29T11:59:00Z',
      },
    ],
  },
});

test('a host is proven fenced by the FAR of the Node that maps to it', async () => {
  const kube = listingKube({ nodes, fenceagentsremediations: [fenced('worker-1')] });
  const v = await fencingProofFor('cmp-001', { kube, now: () => NOW });
  assert.equal(v.proven && v.proof.kind, 'FenceAgentsRemediation');
});

test('absent FAR and SNR CRDs mean "not proven" with the reason, not an exception', async () => {
  const v = await fencingProofFor('worker-2', { kube: listingKube({ nodes }), now: () => NOW });
  assert.match(missingProof(v), 'FenceAgentsRemediation (fence-agents-remediation.medik8s.io) is not installed');
  assert.match(missingProof(v), 'SelfNodeRemediation (self-node-remediation.medik8s.io) is not installed');
});

test('a host no Node maps to is not proven', async () => {
  const v = await fencingProofFor('cmp-404', { kube: listingKube({ nodes }), now: () => NOW });
  assert.match(missingProof(v), 'no Node maps to host cmp-404');
});

test("the remediator's FencingVerified verdict and a person's approval on the Notification both count", async () => {
  const remediation = {
    metadata: { name: 'worker-2-abcde', annotations: { 'remediation.medik8s.io/node-name': 'worker-2' } },
    status: {
      conditions: [
        {
          type: 'FencingVerified',
          status: 'True',
          reason: 'FenceAgentActionSucceeded',
          message: 'm',
          lastTransitionTime: '2026-11-29T11:59:00Z',
        },
      ],
    },
  };
  const kube = listingKube({ nodes, masakariremediations: [remediation] });
  const byRemediation = await fencingProofFor('worker-2', { kube, remediationNamespace: 'masakari', now: () => NOW });
  assert.equal(byRemediation.proven && byRemediation.proof.source, 'MasakariRemediation worker-2-abcde');
  const byPerson = await fencingProofFor('worker-2', {
    kube: listingKube({ nodes }),
    approvalOn: {
      meta: { name: 'n-1', annotations: { 'masakari.openkeel.io/fencing-approved-by': 'carol' } },
      kind: 'Notification',
    },
  });
  assert.equal(byPerson.proven && byPerson.proof.approvedBy, 'carol');
});

test('a fencing proof taken from the wrong Node: two Nodes mapping to one host make no proof count, and the verdict names both', async () => {
  const twoNodes = [
    ...nodes,
    { metadata: { name: 'worker-9', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001' } } },
  ];
  const approved = {
    meta: { name: 'n-1', annotations: { 'masakari.openkeel.io/fencing-approved-by': 'carol' } },
    kind: 'Notification',
  };
  for (const approvalOn of [undefined, approved]) {
    const kube = listingKube({ nodes: twoNodes, fenceagentsremediations: [fenced('worker-9')] });
    const v = await fencingProofFor('cmp-001', { kube, now: () => NOW, ...(approvalOn ? { approvalOn } : {}) });
    assert.match(missingProof(v), 'host cmp-001 maps to more than one Node: worker-1, worker-9');
    assert.match(missingProof(v), 'masakari.openkeel.io/compute-host');
  }
});

test('an approval is not honoured while the policy that lets only approvers write it is missing', async () => {
  const approvalOn = {
    meta: { name: 'n-1', annotations: { 'masakari.openkeel.io/fencing-approved-by': 'mallory' } },
    kind: 'Notification',
  };
  const unguarded = 'ValidatingAdmissionPolicyBinding mo-safety-overrides does not exist: …';
  const v = await fencingProofFor('worker-2', {
    kube: listingKube({ nodes }),
    now: () => NOW,
    approvalOn,
    approvalGuard: { unguardedReason: async () => unguarded },
  });
  assert.match(missingProof(v), `masakari.openkeel.io/fencing-approved-by ("mallory") is not honoured: ${unguarded}`);
  assert.match(missingProof(v), 'FenceAgentsRemediation (fence-agents-remediation.medik8s.io) is not installed');
  const guarded = await fencingProofFor('worker-2', {
    kube: listingKube({ nodes }),
    now: () => NOW,
    approvalOn,
    approvalGuard: { unguardedReason: async () => undefined },
  });
  assert.equal(guarded.proven && guarded.proof.approvedBy, 'mallory');
});

test('API failures other than 404/403 propagate so the caller retries', async () => {
  const kube = listingKube({ nodes, fenceagentsremediations: new KubeError(500, 'InternalError', 'etcd down') });
  await rejection(fencingProofFor('worker-2', { kube, now: () => NOW }), KubeError);
});

test.run();
