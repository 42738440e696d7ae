// The taskflow driver: Masakari's engine/drivers/taskflow/driver.py, which
// builds the host_failure, instance_failure and process_failure flows. Each
// workflow module reads as its list of steps; this only binds them to the
// RecoveryDriver interface the engine calls.

import type { RecoveryDriver } from './recovery-driver.ts';
import { runHostFailure } from './host-failure.ts';
import type { HostFailureOptions } from './host-failure.ts';
import { runInstanceFailure } from './instance-failure.ts';
import { runProcessFailure } from './process-failure.ts';

export function taskflowDriver(hostOptions: HostFailureOptions = {}): RecoveryDriver {
  return {
    host: (ctx, startFallbackRun) => runHostFailure(ctx, startFallbackRun, hostOptions),
    instance: runInstanceFailure,
    process: runProcessFailure,
  };
}
