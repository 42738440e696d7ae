// `make bench`: every benchmark, each writing its section of docs/benchmarks.md.
//   bench/api       the facade against the reference masakari-api 22.0.0
//   bench/recovery  POST → finished for 10 and 100 instances against the physical limit
// Each also runs on its own: node --import tsx bench/<name>/run.ts --help
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = path.join(root, 'node_modules/.bin/node');
let failed = 0;
for (const [name, args] of [
  ['api', []],
  ['recovery', ['--mode', 'both']],
] as const) {
  console.log(`== bench/${name}`);
  const r = spawnSync(node, ['--import', 'tsx', path.join(root, 'bench', name, 'run.ts'), ...args], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.log(`bench/${name} failed (exit ${r.status})`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
