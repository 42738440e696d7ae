// Well-known locations: the repository root (for hack/ and crds/) and the
// state dir where every running control plane leaves a record, so a later
// start can find and reap the ones whose owner died.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest ancestor of this module holding package.json and hack/envtest,
 * so the answer is the same from src/ (tsx) and from dist/src/ (compiled).
 */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'hack', 'envtest'))) return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`no repository root (package.json + hack/envtest) above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export function defaultCrdDir(): string {
  return join(repoRoot(), 'crds');
}

/** The ValidatingAdmissionPolicies installed with the CRDs (config/policy). */
export function defaultPolicyDir(): string {
  return join(repoRoot(), 'config', 'policy');
}

/** MASAKARI_CONTROLPLANE_STATE_DIR overrides it (tests use a private one). */
export function stateDir(): string {
  return process.env.MASAKARI_CONTROLPLANE_STATE_DIR || join(tmpdir(), 'masakari-operator-controlplanes');
}
