import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { replaceSection, sectionOf } from './docs.ts';

const DOC = '# Benchmarks\n\nintro\n\n## A\n\nold a\n\n## B\n\nold b\n';

test('replaceSection swaps one section and keeps the others in place', () => {
  assert.is(replaceSection(DOC, 'A', '## A\n\nnew a\n'), '# Benchmarks\n\nintro\n\n## A\n\nnew a\n\n## B\n\nold b\n');
  assert.is(replaceSection(DOC, 'B', '## B\n\nnew b\n'), '# Benchmarks\n\nintro\n\n## A\n\nold a\n\n## B\n\nnew b\n');
});

test('replaceSection appends a section that is not there yet', () => {
  assert.is(replaceSection(DOC, 'C', '## C\n\nc'), `${DOC.trimEnd()}\n\n## C\n\nc\n`);
});

test('replaceSection matches the whole heading, not a prefix', () => {
  const doc = '## Scale storm\n\nx\n\n## Scale\n\ny\n';
  assert.is(replaceSection(doc, 'Scale', '## Scale\n\nz\n'), '## Scale storm\n\nx\n\n## Scale\n\nz\n');
});

test('sectionOf returns one section up to the next, or undefined', () => {
  assert.is(sectionOf(DOC, 'A'), '## A\n\nold a\n');
  assert.is(sectionOf(DOC, 'B'), '## B\n\nold b\n');
  assert.is(sectionOf(DOC, 'C'), undefined);
  assert.is(replaceSection(DOC, 'A', sectionOf(DOC, 'A')!), DOC, 'what it returns puts the doc back as it was');
});

test.run();
