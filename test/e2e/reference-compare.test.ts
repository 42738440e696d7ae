// Acceptance: the reference masakari-api 22.0.0 (PyPI, noauth2, SQLite) and
// our facade, both pointed at the same Nova simulator, answer the same
// scripted sequence identically once uuids, request ids and timestamp digits
// are normalised — except the deliberate differences in docs/compatibility.md.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { compareWithReference, DELIBERATE_DIFFERENCES, formatDifference } from './reference/compare.ts';

test('the facade answers like the reference masakari-api 22.0.0', async () => {
  const result = await compareWithReference();
  assert.ok(result.steps >= 60, `at least 60 requests (${result.steps})`);
  const unexplained = result.differences.filter((d) => !(d.step in DELIBERATE_DIFFERENCES));
  assert.ok(unexplained.length === 0, `unexplained differences:\n${unexplained.map(formatDifference).join('\n')}`);
});

test('every deliberate difference is documented in docs/compatibility.md', async () => {
  const doc = await readFile(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
  for (const [step, why] of Object.entries(DELIBERATE_DIFFERENCES)) {
    assert.ok(doc.includes(why), `docs/compatibility.md should explain "${step}": ${why}`);
  }
});

test.run();
