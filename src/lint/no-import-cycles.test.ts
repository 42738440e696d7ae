// No import cycle among the files of src/ and tools/, counting type imports too:
// eslint's import-x/no-cycle (make lint) skips `import type`, so a cycle of
// types alone (store/admission/create.ts <-> admission/seal.ts had one) would pass
// it. This follows every relative import and re-export of every non-test file.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The development tools (tools/), checked alongside: they import src/, so a cycle could run through both. */
const TOOLS = resolve(SRC, '../tools');
const IMPORT = /(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?'(\.[^']+\.ts)'/gs;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/** The strongly connected groups of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        group.push(relative(SRC, w));
        if (w === v) break;
      }
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The files `file` imports or re-exports from, types included. */
const importsOf = (file: string, text: string): string[] =>
  [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(file), m[1]!)));

test('no import cycle of types or values in src/ and tools/', () => {
  const graph = new Map<string, string[]>();
  for (const file of [...files(SRC), ...files(TOOLS)]) graph.set(file, importsOf(file, readFileSync(file, 'utf8')));
  assert.ok(graph.size > 100, `read ${graph.size} files`);
  assert.equal(cycles(graph), []);
});

test('the check follows type imports and re-exports, and finds the cycle they make', () => {
  const a = join(SRC, 'x', 'a.ts');
  const b = join(SRC, 'x', 'b.ts');
  const c = join(SRC, 'c.ts');
  const graph = new Map([
    [a, importsOf(a, "import type {\n  B,\n} from './b.ts';\nimport { c } from '../c.ts';")],
    [b, importsOf(b, "export type { A } from './a.ts';")],
    [c, []],
  ]);
  assert.equal(graph.get(a), [b, c]);
  assert.equal(cycles(graph), [['x/a.ts', 'x/b.ts']]);
});

test.run();
