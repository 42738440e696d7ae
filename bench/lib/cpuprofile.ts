// Summarises a V8 .cpuprofile (node --cpu-prof) as the heaviest functions by
// self time and by inclusive time (time with the function on the stack),
// counted per sample, so recursion does not count a sample twice.
//
//   node --import tsx bench/lib/cpuprofile.ts FILE.cpuprofile [--top 30] [--filter REGEX]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FrameCost {
  frame: string;
  selfMs: number;
  totalMs: number;
}

function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|dist)\//, '$1/');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

/** Self and inclusive milliseconds per frame name, heaviest first by `by`. */
export function frameCosts(p: Profile, by: 'selfMs' | 'totalMs'): FrameCost[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const ms = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const leaf = byId.get(id);
    if (!leaf) return;
    self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const name = frameName(byId.get(cur)!);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + ms);
    }
  });
  return [...total.keys()]
    .map((frame) => ({ frame, selfMs: self.get(frame) ?? 0, totalMs: total.get(frame) ?? 0 }))
    .sort((a, b) => b[by] - a[by]);
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, filter: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) throw new Error('usage: cpuprofile.ts FILE.cpuprofile [--top N] [--filter REGEX]');
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const wallMs = (p.endTime - p.startTime) / 1000;
  const top = Number(values.top);
  const keep = values.filter ? new RegExp(values.filter) : undefined;
  const idle = frameCosts(p, 'selfMs').find((f) => f.frame.startsWith('(idle)'))?.selfMs ?? 0;
  console.log(`profile: ${(wallMs / 1000).toFixed(1)} s wall, ${((wallMs - idle) / 1000).toFixed(1)} s busy`);
  for (const by of ['selfMs', 'totalMs'] as const) {
    console.log(`\nby ${by === 'selfMs' ? 'self' : 'inclusive'} time (ms, % of busy):`);
    for (const f of frameCosts(p, by)
      .filter((f) => !keep || keep.test(f.frame))
      .slice(0, top)) {
      const v = f[by];
      console.log(`${v.toFixed(0).padStart(8)} ${((100 * v) / (wallMs - idle)).toFixed(1).padStart(5)}%  ${f.frame}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
