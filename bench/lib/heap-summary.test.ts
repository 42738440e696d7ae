import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHeapSnapshot, retainedSizes } from './heap-summary.ts';

// root -> A, root -> B, A -> C, B -> C, C -> D, and a weak edge D -> E (E is then unreachable).
function tinySnapshot(): string {
  const strings = ['', 'root', 'A', 'B', 'C', 'D', 'E', 'a', 'b', 'c', 'd', 'e'];
  // fields: type, name, id, self_size, edge_count; types: 0 synthetic, 1 object
  const node = (type: number, name: number, size: number, edges: number) => [type, name, name, size, edges];
  const nodes = [
    ...node(0, 1, 0, 2),
    ...node(1, 2, 10, 1),
    ...node(1, 3, 20, 1),
    ...node(1, 4, 30, 1),
    ...node(1, 5, 40, 1),
    ...node(1, 6, 50, 0),
  ];
  const F = 5;
  // edge fields: type (0 property, 1 weak), name_or_index, to_node (index into nodes)
  const edges = [0, 7, 1 * F, 0, 8, 2 * F, 0, 9, 3 * F, 0, 9, 3 * F, 0, 10, 4 * F, 1, 11, 5 * F];
  return JSON.stringify({
    snapshot: {
      meta: {
        node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
        node_types: [['synthetic', 'object']],
        edge_fields: ['type', 'name_or_index', 'to_node'],
        edge_types: [['property', 'weak']],
      },
      node_count: 6,
      edge_count: 6,
    },
    nodes,
    edges,
    strings,
  });
}

test('retained sizes follow the dominator tree over strong edges: a shared child counts for neither parent', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'heap-summary-'));
  const file = path.join(dir, 'tiny.heapsnapshot');
  writeFileSync(file, tinySnapshot());
  const g = parseHeapSnapshot(file);
  const r = retainedSizes(g);
  const byName = (n: string) => [...Array(r.count).keys()].find((i) => r.name(i) === n) as number;
  assert.is(r.retained[byName('A')], 10);
  assert.is(r.retained[byName('B')], 20);
  assert.is(r.retained[byName('C')], 70, 'C and D');
  assert.is(r.name(r.idom[byName('C')] as number), 'root');
  assert.is(r.retained[byName('root')], 100, 'E is held only weakly');
});

test.run();
