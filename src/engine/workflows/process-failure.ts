// Process failure workflow (Masakari process_failure.py): only nova-compute
// has one. It disables the host's compute service and confirms Nova reports
// it disabled. Driven by [taskflow_driver_recovery_flows] process_failure_recovery_tasks.

import { NovaError } from '../../openstack/types.ts';
import type { NovaService } from '../../openstack/types.ts';
import { confirmWithin } from './evacuation-polling.ts';
import { SkipRecovery } from './context.ts';
import type { WorkflowContext } from './context.ts';
import { buildFlow, noOpTask, runFlow } from './tasks.ts';
import type { RecoveryTask, TaskRegistry } from './tasks.ts';

export interface ProcessInput {
  processName: string;
  hostName: string;
}

/** The only process Masakari has a workflow for (exact match). */
export const RECOVERABLE_PROCESS = 'nova-compute';

/**
 * Masakari takes the first service of the lookup without a check, so an empty
 * list raised IndexError; here it is a NovaError-shaped, readable failure.
 */
async function findService(ctx: WorkflowContext, host: string, binary: string): Promise<NovaService> {
  const services = await ctx.nova.listServices({ host, binary }, { requestId: ctx.requestId, signal: ctx.signal });
  const svc = services[0];
  if (!svc) throw new NovaError(404, `No Nova service with binary '${binary}' on host '${host}'`);
  return svc;
}

export const DisableComputeNodeTask: RecoveryTask<ProcessInput> = {
  className: 'DisableComputeNodeTask',
  recorded: true,
  async execute(ctx, { processName, hostName }, update) {
    await update(`Disabling compute service on host: '${hostName}'`);
    const svc = await findService(ctx, hostName, processName);
    if (svc.status !== 'disabled') {
      // Masakari's enable_disable_service always looks up the nova-compute binary.
      const compute = processName === 'nova-compute' ? svc : await findService(ctx, hostName, 'nova-compute');
      const reason = ctx.config.process_failure.service_disable_reason;
      await ctx.nova.updateService(
        compute.id,
        reason ? { status: 'disabled', disabled_reason: reason } : { status: 'disabled' },
        { requestId: ctx.requestId, signal: ctx.signal },
      );
      await update(`Disabled compute service on host: '${hostName}'`, 1.0);
    } else {
      const msg = `Skipping recovery for process ${processName} as it is already disabled`;
      ctx.log.info(msg);
      await update(msg, 1.0);
    }
  },
};

export const ConfirmComputeNodeDisabledTask: RecoveryTask<ProcessInput> = {
  className: 'ConfirmComputeNodeDisabledTask',
  recorded: true,
  async execute(ctx, { processName, hostName }, update) {
    await update(`Confirming compute service is disabled on host: '${hostName}'`);
    await confirmWithin(
      ctx,
      `service ${processName} on ${hostName} to be disabled`,
      async () => (await findService(ctx, hostName, processName)).status === 'disabled',
      ctx.config.DEFAULT.wait_period_after_service_update,
      `Failed to disable service ${processName}`,
      update,
    );
    await update(`Confirmed compute service is disabled on host: '${hostName}'`, 1.0);
  },
};

export const PROCESS_TASKS: TaskRegistry<ProcessInput> = {
  disable_compute_node_task: DisableComputeNodeTask,
  confirm_compute_node_disabled_task: ConfirmComputeNodeDisabledTask,
  no_op: noOpTask<ProcessInput>(),
};

/**
 * Runs the process recovery flow. A process other than nova-compute throws
 * SkipRecovery before any task runs (the notification ends finished; the
 * host stays on maintenance, as upstream, unless
 * [process_failure] maintenance_only_for_nova_compute kept it out: intake/decisions.ts).
 */
export async function runProcessFailure(ctx: WorkflowContext): Promise<void> {
  const processName = ctx.notification.payload.process_name ?? '';
  if (processName !== RECOVERABLE_PROCESS) {
    ctx.log.warn(`Skipping recovery for process: ${processName}.`);
    throw new SkipRecovery('Skipping execution of process recovery workflow.');
  }
  const tasks = buildFlow({
    workflow: 'process failure',
    option: 'process_failure_recovery_tasks',
    lists: ctx.config.taskflow_driver_recovery_flows.process_failure_recovery_tasks,
    registry: PROCESS_TASKS,
    notificationUuid: ctx.notification.uuid,
  });
  await runFlow(ctx, tasks, { processName, hostName: ctx.notification.hostname });
}
