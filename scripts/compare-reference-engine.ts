// Dev tool: runs the engine scenarios through the reference masakari-engine
// 22.0.0 and through our operator, and prints every difference (deliberate
// ones marked). Uses the control plane named by MASAKARI_TEST_KUBECONFIG, or
// starts a private one:
//   node_modules/.bin/node --import tsx scripts/compare-reference-engine.ts [--json]
// The test: `node scripts/run-tests.mjs e2e --filter reference-engine`.
import { compareEngines, deliberateReason, formatDifference } from '../test/e2e/reference-engine/compare.ts';

const result = await compareEngines();
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  for (const r of result.results) {
    const mark = r.differences.length === 0 ? 'same' : `${r.differences.length} difference(s)`;
    process.stdout.write(
      `${r.scenario}: ours ${String(r.ours.notification.status)}, reference ${String(r.reference.notification.status)} — ${mark}\n`,
    );
    for (const d of r.differences) {
      const why = deliberateReason(d);
      process.stdout.write(`  ${formatDifference(d)}${why === undefined ? '' : `\n    deliberate: ${why}`}\n`);
    }
  }
}
const unexplained = result.differences.filter((d) => deliberateReason(d) === undefined);
process.stdout.write(
  `${unexplained.length} unexplained, ${result.differences.length - unexplained.length} deliberate\n`,
);
process.exitCode = unexplained.length === 0 ? 0 : 1;
