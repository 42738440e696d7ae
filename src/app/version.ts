// The operator's version: package.json's, found by walking up from this file
// (src/app/ in development, dist/src/app/ in the image).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function operatorVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'masakari-operator' && pkg.version) return (cached = pkg.version);
    }
    const parent = dirname(dir);
    if (parent === dir) return (cached = 'unknown');
    dir = parent;
  }
}
