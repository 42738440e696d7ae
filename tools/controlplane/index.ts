// Public surface of the local control plane used by tests, the test runner and `make run`.
export { startControlPlane } from './controlplane.ts';
export type { ControlPlane, ControlPlaneOptions, ControlPlaneShape } from './contract.ts';
export type { HaControls } from './ha.ts';
export { ensureBinaries } from './binaries.ts';
export { reapOrphans, listRecords } from './registry.ts';
export type { ControlPlaneRecord, ReapedControlPlane } from './registry.ts';
export { stateDir, repoRoot, defaultCrdDir } from './paths.ts';
