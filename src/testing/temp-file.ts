// FOR UNIT TESTS ONLY: a file with the given text in a directory of its own
// under the system's temporary directory (a policy file, a masakari.conf).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempFile {
  path: string;
  /** Deletes the file and its directory. */
  remove(): void;
}

export function tempFile(name: string, text: string): TempFile {
  const dir = mkdtempSync(join(tmpdir(), 'masakari-test-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
