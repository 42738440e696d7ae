// The recovery workflows the engine runs, one per notification type, as
// Masakari's engine/driver.py (NotificationDriver: execute_host_failure,
// execute_instance_failure, execute_process_failure). The taskflow driver
// (src/engine/workflows/driver.ts) implements it; tests inject their own.

import type { Workflow } from '../intake/decisions.ts';
import type { StartFallbackRun, WorkflowContext } from './context.ts';

export interface RecoveryDriver {
  /** Host failure: evacuate the host's instances; a priority method may start fallback runs. */
  host(ctx: WorkflowContext, startFallbackRun: StartFallbackRun): Promise<void>;
  /** Instance failure: stop and start (or keep stopped) the failed instance. */
  instance(ctx: WorkflowContext): Promise<void>;
  /** Process failure: disable the host's compute service. */
  process(ctx: WorkflowContext): Promise<void>;
}

export type HostWorkflow = RecoveryDriver['host'];

/** Runs the driver's workflow for `workflow`; resolves when it completed, throws how it ended otherwise. */
export function runRecoveryWorkflow(
  driver: RecoveryDriver,
  workflow: Workflow,
  ctx: WorkflowContext,
  startFallbackRun: StartFallbackRun,
): Promise<void> {
  if (workflow === 'instance') return driver.instance(ctx);
  if (workflow === 'process') return driver.process(ctx);
  return driver.host(ctx, startFallbackRun);
}
