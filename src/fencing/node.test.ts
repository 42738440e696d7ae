import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { computeHostOf, excludedFromRemediation, hostNodes, nodeNameOf, nodesForHost } from './node.ts';

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

test('a Node named like the host but annotated to another host is not one of its Nodes, and is named when none is', () => {
  const nodes = [
    { metadata: { name: 'cmp-001', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-002' } } },
    { metadata: { name: 'worker-3' } },
  ];
  assert.equal(hostNodes(nodes, 'cmp-001'), {
    nodes: [],
    problem:
      'no Node maps to host cmp-001: Node cmp-001 is annotated masakari.openkeel.io/compute-host=cmp-002, and no Node is annotated masakari.openkeel.io/compute-host=cmp-001',
  });
  assert.equal(hostNodes(nodes, 'worker-3'), { nodes: ['worker-3'] });
});

test('a host two Nodes map to has no Node: the problem names them and how to fix it', () => {
  const nodes = [
    { metadata: { name: 'worker-1', annotations: { 'masakari.openkeel.io/compute-host': 'cmp-001' } } },
    { metadata: { name: 'cmp-001' } },
  ];
  const mapped = hostNodes(nodes, 'cmp-001');
  assert.equal(mapped.nodes, ['cmp-001', 'worker-1']);
  assert.match(mapped.problem ?? '', 'host cmp-001 maps to more than one Node: cmp-001, worker-1');
  assert.match(mapped.problem ?? '', 'no fencing proof counts');
});

test.run();
