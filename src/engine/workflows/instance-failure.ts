// Instance failure workflow (Masakari instance_failure.py): stop the failed
// instance, start it again, confirm it is ACTIVE. Driven by
// [taskflow_driver_recovery_flows] instance_failure_recovery_tasks.
// Progress texts and values are Masakari's, character for character.

import { NovaConflict } from '../../openstack/types.ts';
import { confirmWithin } from './evacuation-polling.ts';
import { IgnoreRecovery, RecoveryFailed, SkipRecovery } from './context.ts';
import type { WorkflowContext } from './context.ts';
import { boolFromString, buildFlow, noOpTask, runFlow } from './tasks.ts';
import type { RecoveryTask, TaskRegistry } from './tasks.ts';

export interface InstanceInput {
  instanceUuid: string;
}

const vmState = (s: { 'OS-EXT-STS:vm_state': string }): string => s['OS-EXT-STS:vm_state'];

/** Effect key recorded before os-start, so a resumed run knows the start was already sent. */
export const startEffectKey = (run: number, instanceUuid: string): string => `start:${run}:${instanceUuid}`;

export const StopInstanceTask: RecoveryTask<InstanceInput> = {
  className: 'StopInstanceTask',
  recorded: true,
  async execute(ctx, { instanceUuid }, update) {
    const opts = { requestId: ctx.requestId, signal: ctx.signal };
    let instance = await ctx.nova.getServer(instanceUuid, opts);
    const conf = ctx.config.instance_failure;
    // Not HA-enabled and not told to process every instance: nothing to do.
    if (!conf.process_all_instances && !boolFromString(instance.metadata?.[conf.ha_enabled_instance_metadata_key])) {
      const msg = `Skipping recovery for instance: ${instanceUuid} as it is not Ha_Enabled`;
      ctx.log.info(msg);
      await update(msg, 1.0);
      throw new SkipRecovery('Skipping execution of instance recovery workflow.');
    }
    let state = vmState(instance);
    if (state === 'paused' || state === 'rescued') {
      const msg = `Recovery of instance '${instanceUuid}' is ignored as it is in '${state}' state.`;
      ctx.log.warn(msg);
      await update(msg, 1.0);
      throw new IgnoreRecovery(msg);
    }
    if (state !== 'stopped') {
      // Nova refuses os-stop on a resized (unconfirmed) instance; Masakari resets it to active first.
      if (state === 'resized') await ctx.nova.resetState(instance.id, 'active', opts);
      await update(`Stopping instance: ${instanceUuid}`);
      try {
        await ctx.nova.stopServer(instance.id, opts);
      } catch (err) {
        if (!(err instanceof NovaConflict)) throw err;
        await update(`Conflict when stopping instance: ${instanceUuid}`);
        instance = await ctx.nova.getServer(instanceUuid, opts);
        state = vmState(instance);
        if (state !== 'stopped') throw err;
      }
    }
    await confirmWithin(
      ctx,
      `instance ${instanceUuid} to stop`,
      async () => vmState(await ctx.nova.getServer(instanceUuid, opts)) === 'stopped',
      ctx.config.DEFAULT.wait_period_after_power_off,
      `Failed to stop instance ${instance.id}`,
      update,
    );
    await update(`Stopped instance: '${instanceUuid}'`, 1.0);
  },
};

export const StartInstanceTask: RecoveryTask<InstanceInput> = {
  className: 'StartInstanceTask',
  recorded: true,
  async execute(ctx, { instanceUuid }, update) {
    const opts = { requestId: ctx.requestId, signal: ctx.signal };
    await update(`Starting instance: '${instanceUuid}'`);
    const instance = await ctx.nova.getServer(instanceUuid, opts);
    const state = vmState(instance);
    const key = startEffectKey(ctx.run, instanceUuid);
    // Resumed after a crash between os-start and the journal write: the start
    // was sent, so "not stopped" now means it is starting or started.
    const alreadySent = ctx.effects.get(key) !== undefined && state !== 'stopped';
    if (state === 'stopped' || alreadySent) {
      if (!alreadySent) {
        await ctx.effects.intend(key);
        await ctx.nova.startServer(instance.id, opts);
        await ctx.effects.done(key);
      }
      await update(`Instance started: '${instanceUuid}'`, 1.0);
      return;
    }
    const msg = `Invalid state for Instance ${instanceUuid}. Expected state: 'STOPPED', Actual state: '${state}'`;
    await update(msg, 1.0);
    throw new RecoveryFailed(msg);
  },
};

export const ConfirmInstanceActiveTask: RecoveryTask<InstanceInput> = {
  className: 'ConfirmInstanceActiveTask',
  recorded: true,
  async execute(ctx, { instanceUuid }, update) {
    const opts = { requestId: ctx.requestId, signal: ctx.signal };
    await update(`Confirming instance '${instanceUuid}' vm_state is ACTIVE`);
    await confirmWithin(
      ctx,
      `instance ${instanceUuid} to become active`,
      async () => vmState(await ctx.nova.getServer(instanceUuid, opts)) === 'active',
      ctx.config.DEFAULT.wait_period_after_power_on,
      `Failed to start instance ${instanceUuid}`,
      update,
    );
    await update(`Confirmed instance '${instanceUuid}' vm_state is ACTIVE`, 1.0);
  },
};

export const INSTANCE_TASKS: TaskRegistry<InstanceInput> = {
  stop_instance_task: StopInstanceTask,
  start_instance_task: StartInstanceTask,
  confirm_instance_active_task: ConfirmInstanceActiveTask,
  no_op: noOpTask<InstanceInput>(),
};

/**
 * Runs the instance recovery flow for payload.instance_uuid. Throws
 * SkipRecovery (not HA-enabled), IgnoreRecovery (paused/rescued),
 * RecoveryFailed (a task's own failure), FlowBuildError (bad task lists), or
 * whatever else went wrong (Nova errors); the outcome table in
 * src/engine/run/outcomes.ts maps each to a notification status.
 */
export async function runInstanceFailure(ctx: WorkflowContext): Promise<void> {
  const tasks = buildFlow({
    workflow: 'instance failure',
    option: 'instance_failure_recovery_tasks',
    lists: ctx.config.taskflow_driver_recovery_flows.instance_failure_recovery_tasks,
    registry: INSTANCE_TASKS,
    notificationUuid: ctx.notification.uuid,
  });
  await runFlow(ctx, tasks, { instanceUuid: ctx.notification.payload.instance_uuid ?? '' });
}
