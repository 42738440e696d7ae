// docs/benchmarks.md is one file with a section per benchmark; each
// benchmark rewrites only its own "## <heading>" section.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BENCHMARKS_MD = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

/** `doc` with its "## heading" section replaced by `section` (which starts with that heading), or it appended. */
export function replaceSection(doc: string, heading: string, section: string): string {
  const body = section.endsWith('\n') ? section : `${section}\n`;
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.trimEnd() === `## ${heading}`);
  if (start < 0) return `${doc.trimEnd()}\n\n${body}`;
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end < 0) end = lines.length;
  const before = lines.slice(0, start).join('\n');
  const after = lines.slice(end).join('\n');
  return `${before}${before ? '\n' : ''}${body}${after ? `\n${after}` : ''}`;
}

/** The "## heading" section of `doc` (from its heading to the next "## "), or undefined when there is none. */
export function sectionOf(doc: string, heading: string): string | undefined {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.trimEnd() === `## ${heading}`);
  if (start < 0) return undefined;
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join('\n');
}

export function writeSection(heading: string, section: string, file = BENCHMARKS_MD): void {
  const doc = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  writeFileSync(file, replaceSection(doc, heading, section));
}

/** The commit the benchmark ran on (short hash, "+ local changes" when the tree is dirty), or "unknown". */
export function sourceRevision(): string {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  try {
    const hash = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${hash} + local changes` : hash;
  } catch {
    return 'unknown';
  }
}
