// Every file in config/samples/ applies cleanly, and applying again changes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useNamespace } from '../../support/cluster.ts';
import type { TestNamespace } from '../../support/cluster.ts';

const SAMPLES = fileURLToPath(new URL('../../../config/samples/', import.meta.url));
const test = suite<{ ns: TestNamespace }>('config/samples', { ns: undefined as unknown as TestNamespace });
test.before(async (ctx) => {
  ctx.ns = await useNamespace('crd-samples');
});
test.after(async ({ ns }) => ns.cleanup());

test('there are samples: a segment, two hosts and a notification', () => {
  const files = readdirSync(SAMPLES).filter((f) => f.endsWith('.yaml'));
  assert.ok(files.length >= 4, files.join(', '));
});

test('every sample file applies with kubectl apply', async ({ ns }) => {
  for (const file of readdirSync(SAMPLES).filter((f) => f.endsWith('.yaml'))) {
    const r = await ns.kubectl(['apply', '-f', join(SAMPLES, file)]);
    assert.is(r.code, 0, `${file}: ${r.stderr}`);
    assert.match(r.stdout, / created$/m, `${file}: ${r.stdout}`);
  }
  const r = await ns.kubectl(['get', 'masakari', '-o', 'name']);
  assert.equal(r.stdout.trim().split('\n').sort(), [
    'failoversegment.masakari.openkeel.io/segment1',
    'hahost.masakari.openkeel.io/compute1',
    'hahost.masakari.openkeel.io/compute2',
    'notification.masakari.openkeel.io/compute-1-host-down',
  ]);
});

test('applying the whole directory again leaves every object unchanged', async ({ ns }) => {
  const r = await ns.kubectl(['apply', '-f', SAMPLES]);
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.is(lines.length, 4, r.stdout);
  for (const line of lines) assert.match(line, / unchanged$/);
});

test.run();
