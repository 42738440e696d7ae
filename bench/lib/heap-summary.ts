// Summarises a V8 .heapsnapshot (bench/lib/inspector.ts heapSnapshot) in the
// terminal: which objects retain the most memory, as Chrome DevTools'
// "Retained size" column would say, without DevTools. Retained sizes come
// from the dominator tree over the snapshot's strong edges (weak edges do not
// keep anything alive), computed with the iterative algorithm of Cooper,
// Harvey and Kennedy ("A Simple, Fast Dominance Algorithm").
//
// Snapshots of a few hundred MiB of heap are larger than the longest string
// V8 can JSON.parse, so the two big integer arrays (nodes, edges) are read
// straight from the file's bytes; only the header and the strings table go
// through JSON.parse.
//
//   node --import tsx bench/lib/heap-summary.ts FILE [--top 40]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export interface HeapGraph {
  nodeFieldCount: number;
  nodes: Float64Array;
  edges: Uint32Array;
  edgeFieldCount: number;
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  fields: { type: number; name: number; selfSize: number; edgeCount: number };
  edgeFields: { type: number; nameOrIndex: number; toNode: number };
}

/** The integers of the JSON array that starts at `open` (its '['), as they come. */
function readIntArray(buf: Buffer, open: number): { values: Float64Array; end: number } {
  let values = new Float64Array(1 << 20);
  let n = 0;
  let current = 0;
  let inNumber = false;
  let i = open + 1;
  for (; i < buf.length; i++) {
    const c = buf[i] as number;
    if (c >= 48 && c <= 57) {
      current = current * 10 + (c - 48);
      inNumber = true;
      continue;
    }
    if (inNumber) {
      if (n === values.length) {
        const bigger = new Float64Array(values.length * 2);
        bigger.set(values);
        values = bigger;
      }
      values[n++] = current;
      current = 0;
      inNumber = false;
    }
    if (c === 93) break; // ']'
  }
  return { values: values.subarray(0, n), end: i };
}

export function parseHeapSnapshot(file: string): HeapGraph {
  const buf = readFileSync(file);
  const nodesAt = buf.indexOf('"nodes":');
  const edgesAt = buf.indexOf('"edges":', nodesAt);
  const stringsAt = buf.lastIndexOf('"strings":');
  if (nodesAt < 0 || edgesAt < 0 || stringsAt < 0) throw new Error(`${file}: not a V8 heap snapshot`);
  const header = JSON.parse(`${buf.subarray(0, nodesAt).toString().replace(/,\s*$/, '')}}`) as {
    snapshot: {
      meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
    };
  };
  const meta = header.snapshot.meta;
  const nodes = readIntArray(buf, buf.indexOf('[', nodesAt)).values;
  const edges = Uint32Array.from(readIntArray(buf, buf.indexOf('[', edgesAt)).values);
  const stringsOpen = buf.indexOf('[', stringsAt);
  const stringsClose = buf.lastIndexOf(']');
  const strings = JSON.parse(buf.subarray(stringsOpen, stringsClose + 1).toString()) as string[];
  const nf = meta.node_fields;
  const ef = meta.edge_fields;
  return {
    nodeFieldCount: nf.length,
    nodes,
    edges,
    edgeFieldCount: ef.length,
    strings,
    nodeTypes: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    fields: {
      type: nf.indexOf('type'),
      name: nf.indexOf('name'),
      selfSize: nf.indexOf('self_size'),
      edgeCount: nf.indexOf('edge_count'),
    },
    edgeFields: { type: ef.indexOf('type'), nameOrIndex: ef.indexOf('name_or_index'), toNode: ef.indexOf('to_node') },
  };
}

export interface Retained {
  count: number;
  selfSize: Float64Array;
  retained: Float64Array;
  idom: Int32Array;
  /** For each node, the name of one strong edge that reaches it (how it is held). */
  heldAs: Int32Array;
  name(node: number): string;
  type(node: number): string;
}

/** Dominator tree and retained sizes of every node reachable from the root (node 0) by strong edges. */
export function retainedSizes(g: HeapGraph): Retained {
  const count = g.nodes.length / g.nodeFieldCount;
  const firstEdge = new Uint32Array(count + 1);
  const selfSize = new Float64Array(count);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += (g.nodes[i * g.nodeFieldCount + g.fields.edgeCount] as number) * g.edgeFieldCount;
    selfSize[i] = g.nodes[i * g.nodeFieldCount + g.fields.selfSize] as number;
  }
  firstEdge[count] = g.edges.length;
  const weak = g.edgeTypes.indexOf('weak');
  const shortcut = g.edgeTypes.indexOf('shortcut');
  const strong = (e: number) => {
    const t = g.edges[e + g.edgeFields.type];
    return t !== weak && t !== shortcut;
  };
  const target = (e: number) => (g.edges[e + g.edgeFields.toNode] as number) / g.nodeFieldCount;

  // Post-order numbering by an iterative depth-first search.
  const order = new Int32Array(count).fill(-1); // node -> post-order number
  const byOrder = new Int32Array(count); // post-order number -> node
  const heldAs = new Int32Array(count).fill(-1);
  const stackNode = new Int32Array(count);
  const stackEdge = new Uint32Array(count);
  const visited = new Uint8Array(count);
  let sp = 0;
  let post = 0;
  stackNode[0] = 0;
  stackEdge[0] = firstEdge[0] as number;
  visited[0] = 1;
  sp = 1;
  while (sp > 0) {
    const node = stackNode[sp - 1] as number;
    let e = stackEdge[sp - 1] as number;
    const end = firstEdge[node + 1] as number;
    let pushed = false;
    for (; e < end; e += g.edgeFieldCount) {
      if (!strong(e)) continue;
      const to = target(e);
      if (visited[to]) continue;
      visited[to] = 1;
      heldAs[to] = e;
      stackEdge[sp - 1] = e + g.edgeFieldCount;
      stackNode[sp] = to;
      stackEdge[sp] = firstEdge[to] as number;
      sp++;
      pushed = true;
      break;
    }
    if (!pushed) {
      order[node] = post;
      byOrder[post++] = node;
      sp--;
    }
  }

  // Predecessors (strong edges between reachable nodes), by post-order number.
  const predCount = new Uint32Array(post + 1);
  for (let n = 0; n < count; n++) {
    if ((order[n] as number) < 0) continue;
    for (let e = firstEdge[n] as number; e < (firstEdge[n + 1] as number); e += g.edgeFieldCount) {
      if (strong(e) && (order[target(e)] as number) >= 0) predCount[order[target(e)] as number]!++;
    }
  }
  const predStart = new Uint32Array(post + 1);
  for (let i = 0, acc = 0; i <= post; i++) {
    predStart[i] = acc;
    acc += predCount[i] as number;
  }
  const preds = new Int32Array(predStart[post] as number);
  const fill = predStart.slice();
  for (let n = 0; n < count; n++) {
    const from = order[n] as number;
    if (from < 0) continue;
    for (let e = firstEdge[n] as number; e < (firstEdge[n + 1] as number); e += g.edgeFieldCount) {
      const to = strong(e) ? (order[target(e)] as number) : -1;
      if (to >= 0) preds[fill[to]!++] = from;
    }
  }

  // Cooper-Harvey-Kennedy, on post-order numbers (the root has the highest).
  const root = post - 1;
  const dom = new Int32Array(post).fill(-1);
  dom[root] = root;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = dom[a] as number;
      while (b < a) b = dom[b] as number;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let b = root - 1; b >= 0; b--) {
      let idom = -1;
      for (let p = predStart[b] as number; p < (predStart[b + 1] as number); p++) {
        const pred = preds[p] as number;
        if (dom[pred] === -1) continue;
        idom = idom === -1 ? pred : intersect(pred, idom);
      }
      if (idom !== -1 && dom[b] !== idom) {
        dom[b] = idom;
        changed = true;
      }
    }
  }

  const retained = new Float64Array(count);
  const idomNode = new Int32Array(count).fill(-1);
  for (let i = 0; i < post; i++) retained[byOrder[i] as number] = selfSize[byOrder[i] as number] as number;
  for (let i = 0; i < root; i++) {
    const node = byOrder[i] as number;
    const parent = byOrder[dom[i] as number] as number;
    idomNode[node] = parent;
    retained[parent] = (retained[parent] as number) + (retained[node] as number);
  }
  const name = (node: number) => g.strings[g.nodes[node * g.nodeFieldCount + g.fields.name] as number] ?? '';
  const type = (node: number) => g.nodeTypes[g.nodes[node * g.nodeFieldCount + g.fields.type] as number] ?? '';
  return { count, selfSize, retained, idom: idomNode, heldAs, name, type };
}

/** How an edge reads in a retaining path: a property name or an element index. */
function edgeLabel(g: HeapGraph, e: number): string {
  if (e < 0) return '';
  const t = g.edgeTypes[g.edges[e + g.edgeFields.type] as number];
  const v = g.edges[e + g.edgeFields.nameOrIndex] as number;
  return t === 'element' || t === 'hidden' ? `[${v}]` : `.${g.strings[v] ?? '?'}`;
}

const MiB = (b: number) => (b / 2 ** 20).toFixed(1);

/** A plain-text report: totals, self size by constructor, and the objects that retain the most. */
export function summarise(g: HeapGraph, r: Retained, top: number): string {
  const lines: string[] = [];
  let total = 0;
  const byName = new Map<string, { self: number; count: number }>();
  for (let n = 0; n < r.count; n++) {
    if (r.idom[n] === -1 && n !== 0) continue; // unreachable
    total += r.selfSize[n] as number;
    const key = `${r.type(n)} ${r.type(n) === 'object' || r.type(n) === 'closure' ? r.name(n) : ''}`.trim();
    const s = byName.get(key) ?? { self: 0, count: 0 };
    s.self += r.selfSize[n] as number;
    s.count++;
    byName.set(key, s);
  }
  lines.push(`reachable heap: ${MiB(total)} MiB in ${r.count} nodes`, '', 'self size by type and constructor:');
  for (const [key, s] of [...byName].sort((a, b) => b[1].self - a[1].self).slice(0, top)) {
    lines.push(`  ${MiB(s.self).padStart(8)} MiB  ${String(s.count).padStart(9)}  ${key}`);
  }
  // The largest retainers, skipping the chain of synthetic roots above them.
  const candidates: number[] = [];
  for (let n = 1; n < r.count; n++) {
    if (r.type(n) === 'synthetic' || r.idom[n] === -1) continue;
    if ((r.retained[n] as number) > total / 200) candidates.push(n);
  }
  candidates.sort((a, b) => (r.retained[b] as number) - (r.retained[a] as number));
  lines.push('', 'largest retained sizes (object, how it is held, held by):');
  for (const n of candidates.slice(0, top)) {
    const holder = r.idom[n] as number;
    lines.push(
      `  ${MiB(r.retained[n] as number).padStart(8)} MiB  ${r.type(n)} ${r.name(n).slice(0, 60)}  ${edgeLabel(g, r.heldAs[n] as number)}  <- ${r.type(holder)} ${r.name(holder).slice(0, 40)}`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    options: { top: { type: 'string', default: '40' } },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (!file) throw new Error('usage: heap-summary.ts FILE [--top N]');
  const g = parseHeapSnapshot(file);
  console.log(summarise(g, retainedSizes(g), Number(values.top)));
}
