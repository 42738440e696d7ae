// Developer tool: runs the side-by-side comparison with the reference
// masakari-api and prints every difference. Needs a control plane:
//   node --import tsx scripts/compare-reference.ts
import { compareWithReference, formatDifference, DELIBERATE_DIFFERENCES } from '../test/e2e/reference/compare.ts';

const r = await compareWithReference();
for (const d of r.differences) {
  const why = DELIBERATE_DIFFERENCES[d.step];
  console.log(formatDifference(d) + (why ? `\n  (deliberate: ${why})` : ''));
}
console.log(`${r.steps} steps, ${r.differences.length} differences`);
process.exit(0);
