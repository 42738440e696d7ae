import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BEGIN, DOC_PATH, END, renderOptionReference } from './docs.ts';
import { OPTIONS } from './options.ts';

test('docs/configuration.md holds the option reference generated from the option table', () => {
  const text = readFileSync(DOC_PATH, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  assert.ok(begin >= 0 && end > begin, 'the generated-section markers are present');
  const documented = text.slice(begin + BEGIN.length, end).trim();
  assert.is(documented, renderOptionReference().trim(), 'docs/configuration.md is stale: run `make config-docs`');
});

test('the reference lists every option with its generic variable', () => {
  const reference = renderOptionReference();
  for (const [group, options] of Object.entries(OPTIONS)) {
    assert.ok(reference.includes(`### \`[${group}]\``), group);
    for (const option of Object.keys(options)) {
      assert.ok(reference.includes(`| \`${option}\` |`), `${group}.${option}`);
      assert.ok(reference.includes(`MASAKARI__${group.toUpperCase()}__${option.toUpperCase()}`), `${group}.${option} env`);
    }
  }
});

test.run();
