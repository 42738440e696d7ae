// Lets a suite keep its control-plane records in a private state dir, apart
// from the records of the runner's shared control plane (and of anyone else's).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'uvu';

export function usePrivateStateDir(test: Test<{ stateDir: string }>): void {
  test.before((ctx) => {
    ctx.stateDir = mkdtempSync(join(tmpdir(), 'cp-state-'));
    process.env.MASAKARI_CONTROLPLANE_STATE_DIR = ctx.stateDir;
  });
  test.after(({ stateDir }) => {
    delete process.env.MASAKARI_CONTROLPLANE_STATE_DIR;
    rmSync(stateDir, { recursive: true, force: true });
  });
}
