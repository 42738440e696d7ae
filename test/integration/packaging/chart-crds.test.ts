// The CRDs ship three ways: crds/ (the source), the Helm chart's files/crds/ and
// kustomize's config/crd/bases/. The copies must be byte-identical to the
// source; hack/sync-chart-crds.sh makes them so.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { CHART, CONFIG, ROOT, run } from './tools.ts';

const SOURCE = join(ROOT, 'crds');
const COPIES = [join(CHART, 'files', 'crds'), join(CONFIG, 'crd', 'bases')];
const FIX = 'run hack/sync-chart-crds.sh';
const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

test('the source has CRDs', () => {
  assert.ok(yamlFiles(SOURCE).length >= 3, yamlFiles(SOURCE).join(', '));
});

for (const copy of COPIES) {
  const where = copy.slice(ROOT.length);
  test(`${where} holds exactly the files of crds/ (${FIX})`, () => {
    assert.equal(yamlFiles(copy), yamlFiles(SOURCE));
  });

  test(`${where}: every file is byte-identical to crds/ (${FIX})`, () => {
    for (const file of yamlFiles(SOURCE)) {
      const source = readFileSync(join(SOURCE, file));
      const copied = readFileSync(join(copy, file));
      assert.ok(source.equals(copied), `${where}/${file} differs from crds/${file}: ${FIX}`);
    }
  });
}

test('config/crd/kustomization.yaml lists every CRD in bases/', () => {
  const k = load(readFileSync(join(CONFIG, 'crd', 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  assert.equal(
    [...k.resources].sort(),
    yamlFiles(SOURCE).map((f) => `bases/${f}`),
  );
});

test('hack/sync-chart-crds.sh --check agrees', async () => {
  const r = await run(join(ROOT, 'hack', 'sync-chart-crds.sh'), ['--check'], 30_000);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /in sync/);
});

test.run();
