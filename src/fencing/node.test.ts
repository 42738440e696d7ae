import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { computeHostOf, excludedFromRemediation, nodeNameOf, nodesForHost } from './node.ts';

test("the node comes from the node-name annotation, so generateName'd remediations work", () => {
  assert.equal(
    nodeNameOf({ name: 'worker-1-abcde', annotations: { 'remediation.medik8s.io/node-name': 'worker-1' } }),
    'worker-1',
  );
  assert.equal(nodeNameOf({ name: 'worker-1' }), 'worker-1');
});

test('a Node maps to the host in its compute-host annotation, else to its own name', () => {
  assert.equal(
    computeHostOf({ metadata: { name: 'worker-1', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001' } } }),
    'cmp-001',
  );
  assert.equal(computeHostOf({ metadata: { name: 'worker-1' } }), 'worker-1');
});

test('a Node labelled exclude-from-remediation=true (exactly "true", as NHC and SNR read it) is excluded', () => {
  const labelled = (value: string) => ({
    metadata: { name: 'worker-1', labels: { 'remediation.medik8s.io/exclude-from-remediation': value } },
  });
  assert.ok(excludedFromRemediation(labelled('true')));
  assert.not.ok(excludedFromRemediation(labelled('')));
  assert.not.ok(excludedFromRemediation(labelled('false')));
  assert.not.ok(excludedFromRemediation({ metadata: { name: 'worker-1' } }));
});

test('the Nodes of a host: annotated ones, and a same-named Node only if not annotated elsewhere', () => {
  const nodes = [
    { metadata: { name: 'worker-1', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001' } } },
    { metadata: { name: 'cmp-001', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-002' } } },
    { metadata: { name: 'worker-3' } },
  ];
  assert.equal(nodesForHost(nodes, 'cmp-001'), ['worker-1']);
  assert.equal(nodesForHost(nodes, 'worker-3'), ['worker-3']);
  assert.equal(nodesForHost(nodes, 'nowhere'), []);
});

test.run();
