// The Python venv with the real OpenStack clients and the reference Masakari,
// created on first use by scripts/e2e-venv.sh (pinned in test/e2e/python/).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let cached: Promise<string> | undefined;

/** Path of the venv; builds it when missing (minutes on a new machine). */
export function e2eVenv(): Promise<string> {
  cached ??= run('bash', [path.join(root, 'scripts/e2e-venv.sh')], { maxBuffer: 16 << 20, timeout: 20 * 60_000 }).then(
    (r) => r.stdout.trim().split('\n').pop() as string,
  );
  return cached;
}
