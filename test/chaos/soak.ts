// `make chaos-soak`: many seeded chaos runs in one session (default 100:
// MASAKARI_CHAOS_RUNS, MASAKARI_CHAOS_BASE_SEED as in chaos.test.ts), then a
// summary: faults injected per kind, lost and duplicate evacuations, failed
// runs with their seeds. Written as JSON to MASAKARI_CHAOS_SUMMARY (default
// .run/chaos-soak.json) and as a Markdown table on stdout (docs/benchmarks.md
// keeps the last one). Exit status 1 when any run failed. `make chaos-ha` runs
// it with MASAKARI_CHAOS_SHAPE=ha (support/session.ts chaosShape).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { faultKindsFor, type FaultKind } from './support/schedule.ts';
import { chaosShape, sessionSeeds, startSession } from './support/session.ts';
import type { RunResult } from './support/scenario.ts';
import { FAILED_PER_RUN, SERVERS_PER_HOST } from './support/topology.ts';

const say = (line: string) => process.stdout.write(`[chaos-soak] ${line}\n`);

interface Summary {
  seeds: number[];
  runs: number;
  passed: number;
  failedSeeds: number[];
  injected: Record<FaultKind, number>;
  servers: number;
  lost: number;
  duplicate: number;
  minutes: number;
  slowestRunSeconds: number;
}

function summarize(results: RunResult[], startedAt: number): Summary {
  const injected = Object.fromEntries(faultKindsFor(chaosShape()).map((k) => [k, 0])) as Record<FaultKind, number>;
  for (const r of results) for (const [k, n] of Object.entries(r.report.injected)) injected[k as FaultKind] += n;
  return {
    seeds: results.map((r) => r.seed),
    runs: results.length,
    passed: results.filter((r) => !r.violations.length).length,
    failedSeeds: results.filter((r) => r.violations.length).map((r) => r.seed),
    injected,
    servers: results.filter((r) => r.tally).length * FAILED_PER_RUN * SERVERS_PER_HOST,
    lost: results.reduce((n, r) => n + (r.tally?.lost ?? 0), 0),
    duplicate: results.reduce((n, r) => n + (r.tally?.duplicate ?? 0), 0),
    minutes: Math.round((Date.now() - startedAt) / 6_000) / 10,
    slowestRunSeconds: Math.round(Math.max(0, ...results.map((r) => r.durationMs)) / 1000),
  };
}

function markdown(s: Summary & { endProblems: number }): string {
  const rows = faultKindsFor(chaosShape()).map((k) => `| ${k} | ${s.injected[k]} |`);
  return [
    `${s.runs} runs (seeds ${s.seeds[0]}..${s.seeds.at(-1)}), ${s.passed} passed, ${s.minutes} min, slowest run ${s.slowestRunSeconds} s`,
    '',
    '| Fault | Injected |',
    '|---|---|',
    ...rows,
    '',
    `Servers to evacuate: ${s.servers}; lost: ${s.lost}; evacuated twice or more: ${s.duplicate}; failed seeds: ${s.failedSeeds.join(', ') || 'none'}; problems found when the replicas stopped: ${s.endProblems}`,
  ].join('\n');
}

async function main(): Promise<number> {
  const seeds = sessionSeeds(Number(process.env.MASAKARI_CHAOS_RUNS) || 100);
  say(`seeds ${seeds[0]}..${seeds.at(-1)} (MASAKARI_CHAOS_SEED=N reproduces one)`);
  const startedAt = Date.now();
  const session = await startSession(say);
  const results: RunResult[] = [];
  let endProblems = 0;
  const out = process.env.MASAKARI_CHAOS_SUMMARY ?? path.join('.run', 'chaos-soak.json');
  mkdirSync(path.dirname(out), { recursive: true });
  try {
    for (const seed of seeds) {
      const r = await session.run(seed);
      results.push(r);
      say(`seed ${seed}: ${r.violations.length ? 'FAILED' : 'ok'} in ${(r.durationMs / 1000).toFixed(1)} s`);
      for (const v of r.violations.slice(0, 10)) say(`  ${v.slice(0, 800)}`);
      // the summary so far, so an interrupted soak still leaves its numbers
      writeFileSync(out, `${JSON.stringify(summarize(results, startedAt), null, 2)}\n`);
    }
  } finally {
    const problems = await session.stop();
    for (const p of problems) say(`at the end: ${p.slice(0, 800)}`);
    endProblems = problems.length;
  }
  const summary = { ...summarize(results, startedAt), endProblems };
  writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(`\n${markdown(summary)}\n\nsummary: ${out}; logs of failed runs: ${session.logDir}\n`);
  return summary.failedSeeds.length || endProblems ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`chaos-soak: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  },
);
