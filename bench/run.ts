// `make bench`: every benchmark, each writing its section of docs/benchmarks.md.
//   bench/api       the facade against the reference masakari-api 22.0.0
//   bench/recovery  POST → finished for 10 and 100 instances against the physical limit
//   bench/scale     1k, 10k and 100k notifications stored: memory, list and intake latency, cold start
//   bench/storm     20,000 VM notifications for one host: 5xx, etcd growth per notification, rate
//   bench/openstack host failure on a real mini OpenStack, side by side with masakari 22.0.0: POST → finished, end states
// `make bench BENCH=scale,storm` (or `bench/run.ts --only scale,storm`) runs some of them.
// Each also runs on its own, with more options (listed in its header comment):
//   node_modules/.bin/node --import tsx bench/<name>/run.ts [options]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = path.join(root, 'node_modules/.bin/node');
const BENCHMARKS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['api', []],
  ['recovery', ['--mode', 'both']],
  ['scale', ['--sizes', '1k,10k,100k']],
  ['storm', ['--count', '20000']],
  ['openstack', []],
];
const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only?.split(',').filter(Boolean);
const unknown = only?.filter((n) => !BENCHMARKS.some(([name]) => name === n)) ?? [];
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map(([n]) => n).join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const [name, args] of BENCHMARKS) {
  if (only && !only.includes(name)) continue;
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
