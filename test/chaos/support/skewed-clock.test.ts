import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Prints, every 50 ms, the wall clock minus the monotonic one (s) as Date.now(), new Date() and Date() see it.
const PROBE = `
// Date() has whole seconds: +500 ms centres it
const skew = () => [Date.now(), new Date().getTime(), Date.parse(Date()) + 500].map((t) => Math.round((t - performance.timeOrigin - performance.now()) / 1000));
setInterval(() => process.stdout.write(JSON.stringify({ skew: skew(), epoch: new Date(0).getTime(), isDate: new Date() instanceof Date }) + '\\n'), 50);
`;

test('skewed-clock: the wall clock runs the file offset ahead or behind, changed on SIGUSR2; the monotonic clock is untouched', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'skewed-clock-'));
  const file = path.join(dir, 'offset');
  writeFileSync(file, '30000');
  const child = spawn(
    path.join(root, 'node_modules/.bin/node'),
    [
      '--import',
      'tsx',
      '--import',
      path.join(root, 'test/chaos/support/skewed-clock.ts'),
      '--input-type=module',
      '-e',
      PROBE,
    ],
    { cwd: root, env: { ...process.env, MASAKARI_CHAOS_CLOCK_FILE: file }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const last = async (want: number[]): Promise<unknown> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const line = out.trimEnd().split('\n').at(-1);
      const got = line ? (JSON.parse(line) as { skew: number[] }) : undefined;
      if (got && JSON.stringify(got.skew) === JSON.stringify(want)) return got;
      if (Date.now() > deadline) throw new Error(`wanted ${JSON.stringify(want)}, last line ${line}`);
      await sleep(50);
    }
  };
  try {
    assert.equal(await last([30, 30, 30]), { skew: [30, 30, 30], epoch: 0, isDate: true });
    assert.is(readFileSync(`${file}.applied`, 'utf8'), '30000');
    writeFileSync(file, '-12000');
    child.kill('SIGUSR2');
    await last([-12, -12, -12]);
    assert.is(readFileSync(`${file}.applied`, 'utf8'), '-12000');
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
