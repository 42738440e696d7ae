// The host-failure tasks, named and worded as Masakari's
// (masakari/engine/drivers/taskflow/host_failure.py). Each task
// writes the same progress messages at the same progress values, so
// recovery_workflow_details reads as upstream. The config names in
// [taskflow_driver_recovery_flows] map to these tasks through HOST_TASKS.
//
// Differences from upstream (each explained where it happens):
// - DisableComputeServiceTask skips the PUT when the service is already
//   disabled with our reason, and instead of sleeping 180 s it polls until Nova
//   reports the service down or forced down (B13a). wait_period_after_service_update
//   bounds that wait; if Nova still reports the service up by then, the task
//   FAILS rather than proceeding as Masakari does after its sleep: a compute
//   service that keeps reporting in means the host (or at least nova-compute)
//   is alive, Nova would refuse every evacuation with ComputeServiceInUse
//   anyway, and failing before we lock or reset any instance leaves them
//   untouched. The notification goes to error and is retried as usual.
// - PrepareHAEnabledInstancesTask reads every page of servers (B12) and keeps
//   HA-enabled instances first in the evacuation order (B2). It never lists
//   servers again once the run has recorded its moves: instances that already
//   moved would be missing from a new list. OpenKeel's selectors (tagged
//   flavors, images and aggregates, name exclusion, a priority order; all off
//   by default) are applied by this task and nowhere else (the rules are in
//   instance-selection.ts).
// - EvacuateInstancesTask decides success from the moves of the current run
//   only (B1) and counts a move that never left pending as a failure (B3).

import type { NovaService } from '../../openstack/types.ts';
import type { WorkflowContext } from './context.ts';
import { RecoveryFailed, SkipRecovery } from './context.ts';
import type { EvacuationHooks, EvacuationTarget } from './evacuate-instance.ts';
import { EvacuationProcedure } from './evacuate-instance.ts';
import { serviceDownSchedule } from './evacuation-polling.ts';
import { NovaConflict } from '../../openstack/types.ts';
import { selectInstances, taggedAggregateOf } from './instance-selection.ts';
import { acquireReservedHostMutex } from './reserved-host-mutex.ts';
import { PollTimeout, pollUntil } from '../../time/poll.ts';

/** What the flow passes to every task (taskflow's store). */
export interface HostTaskInputs {
  /** Reserved host of the current attempt (reserved_host flow only). */
  reservedHost?: string;
  hooks: EvacuationHooks;
}

export interface HostTask {
  /** Masakari task class name shown in recovery_workflow_details; null for no_op (never shown). */
  className: string | null;
  execute(ctx: WorkflowContext, inputs: HostTaskInputs): Promise<void>;
}

const call = (ctx: WorkflowContext) => ({ requestId: ctx.requestId, signal: ctx.signal });

/** The nova-compute service of a host (Masakari's find_compute_service / enable_disable_service lookup). */
export async function findComputeService(ctx: WorkflowContext, host: string): Promise<NovaService> {
  const services = await ctx.nova.listServices({ host, binary: 'nova-compute' }, call(ctx));
  const service = services.find((s) => s.host === host && s.binary === 'nova-compute');
  if (!service) throw new RecoveryFailed(`Compute service with name ${host} could not be found.`);
  return service;
}

function isDown(service: NovaService): boolean {
  return service.state === 'down' || service.forced_down === true;
}

export const disableComputeServiceTask: HostTask = {
  className: 'DisableComputeServiceTask',
  async execute(ctx) {
    const task = 'DisableComputeServiceTask';
    const host = ctx.notification.hostname;
    await ctx.progress.update(task, `Disabling compute service on host: '${host}'`, 0.0);
    const reason = ctx.config.host_failure.service_disable_reason;
    let service = await findComputeService(ctx, host);
    if (service.status === 'disabled' && (service.disabled_reason ?? '') === reason) {
      ctx.log.info({ host }, `Compute service on host '${host}' is already disabled by Masakari; not updating it.`);
    } else {
      service = await ctx.nova.updateService(
        service.id,
        reason ? { status: 'disabled', disabled_reason: reason } : { status: 'disabled' },
        call(ctx),
      );
    }
    if (!isDown(service)) {
      const wait = ctx.config.DEFAULT.wait_period_after_service_update;
      ctx.log.info({ host }, `Waiting up to ${wait} sec until nova recognizes the node '${host}' down.`);
      try {
        await pollUntil(
          `nova-compute on ${host} to be reported down`,
          async () => (isDown(await findComputeService(ctx, host)) ? true : undefined),
          serviceDownSchedule(ctx.config.DEFAULT.verify_interval, wait),
          ctx.clock,
          ctx.signal,
        );
      } catch (err) {
        if (!(err instanceof PollTimeout)) throw err;
        const msg = `Compute service on host '${host}' is still reported up by Nova after ${wait} seconds; not evacuating.`;
        await ctx.progress.update(task, msg, 1.0);
        throw new RecoveryFailed(msg);
      }
    }
    await ctx.progress.update(task, `Disabled compute service on host: '${host}'`, 1.0);
  },
};

export const prepareHAEnabledInstancesTask: HostTask = {
  className: 'PrepareHAEnabledInstancesTask',
  async execute(ctx) {
    const task = 'PrepareHAEnabledInstancesTask';
    const host = ctx.notification.hostname;
    await ctx.progress.update(task, 'Preparing instances for evacuation', 0.0);
    const recorded = ctx.vmoves.list();
    if (recorded.length > 0) {
      // A resumed run, or the next reserved host of this run: the recorded moves are the truth.
      const remaining = recorded.filter((m) => m.status !== 'succeeded').map((m) => m.instanceUuid);
      await ctx.progress.update(task, `Instances to be evacuated are: '${remaining.join(',')}'`, 1.0);
      return;
    }
    if (ctx.config.host_failure.tagged_aggregates) {
      const tag = ctx.config.host_failure.evacuable_tag;
      const aggregate = await taggedAggregateOf(ctx, host);
      if (aggregate === undefined) {
        const msg = `Skipped host '${host}' recovery as it is in no aggregate with metadata '${tag}' set true (tagged_aggregates)`;
        await ctx.progress.update(task, msg, 1.0);
        ctx.log.info(msg);
        throw new SkipRecovery(msg);
      }
      await ctx.progress.update(task, `Host '${host}' is in aggregate '${aggregate}' tagged '${tag}'`, 0.1);
    }
    const servers = await ctx.nova.listServersOnHost(host, call(ctx));
    await ctx.progress.update(task, `Total instances running on failed host '${host}' is ${servers.length}`, 0.3);
    const selected = await selectInstances(ctx, servers);
    if (selected.length === 0) {
      const msg = `Skipped host '${host}' recovery as no instances needs to be evacuated`;
      await ctx.progress.update(task, msg, 1.0);
      ctx.log.info(msg);
      throw new SkipRecovery(msg);
    }
    await ctx.vmoves.addPending(selected.map((s) => ({ instanceUuid: s.id, instanceName: s.name, sourceHost: host })));
    await ctx.progress.update(task, `Instances to be evacuated are: '${selected.map((s) => s.id).join(',')}'`, 1.0);
  },
};

export const reservedHostKey = (host: string): string => `reserved-host:${host}`;

/** Prepares a reserved host to receive the instances (Masakari's `_do_evacuate` with a reserved_host). */
async function takeReservedHost(ctx: WorkflowContext, reservedHost: string): Promise<void> {
  const task = 'EvacuateInstancesTask';
  const failedHost = ctx.notification.hostname;
  await ctx.progress.update(task, `Enabling reserved host: '${reservedHost}'`, 0.1);
  // Journalled before the first change to the host, so a resumed run knows which host it was using.
  await ctx.effects.intend(reservedHostKey(reservedHost), { run: ctx.run, at: ctx.clock.now().toISOString() });
  if (ctx.config.host_failure.add_reserved_host_to_aggregate) {
    for (const aggregate of await ctx.nova.listAggregates(call(ctx))) {
      if (!aggregate.hosts.includes(failedHost)) continue;
      try {
        await ctx.progress.update(task, `Add host ${reservedHost} to aggregate ${aggregate.name}`, 0.2);
        await ctx.nova.addHostToAggregate(aggregate.id, reservedHost, call(ctx));
        await ctx.progress.update(task, `Added host ${reservedHost} to aggregate ${aggregate.name}`, 0.3);
      } catch (err) {
        if (!(err instanceof NovaConflict)) throw err;
        const msg = `Host '${reservedHost}' already has been added to aggregate '${aggregate.name}'.`;
        await ctx.progress.update(task, msg, 1.0);
        ctx.log.info(msg);
      }
    }
  }
  const service = await findComputeService(ctx, reservedHost);
  if (service.status !== 'enabled') await ctx.nova.updateService(service.id, { status: 'enabled' }, call(ctx));
  await ctx.hosts.setReserved(reservedHost, false);
}

export const evacuateInstancesTask: HostTask = {
  className: 'EvacuateInstancesTask',
  async execute(ctx, inputs) {
    const task = 'EvacuateInstancesTask';
    const host = ctx.notification.hostname;
    const target: EvacuationTarget = inputs.reservedHost
      ? { attempt: inputs.reservedHost, host: inputs.reservedHost }
      : { attempt: 'auto', host: undefined };
    const procedure = new EvacuationProcedure(ctx, target, inputs.hooks);
    const todo = ctx.vmoves.list().filter((m) => procedure.needsWork(m));
    await ctx.progress.update(
      task,
      `Start evacuation of instances from failed host '${host}', instance uuids are: '${todo.map((m) => m.instanceUuid).join(',')}'`,
      0.0,
    );
    const release = inputs.reservedHost
      ? acquireReservedHostMutex(inputs.reservedHost, ctx.notification.uuid)
      : undefined;
    try {
      if (inputs.reservedHost) await takeReservedHost(ctx, inputs.reservedHost);
      await forEachBounded(todo, ctx.config.DEFAULT.host_failure_recovery_threads, ctx.signal, async (move) => {
        // Not awaited first: the message rides along with the procedure's first journal write. Its
        // outcome is held (a handler is attached at once) and looked at after the procedure: a rejection
        // without a handler while Nova is still evacuating would end the process.
        const announced = procedure.announced(move)
          ? settled(Promise.resolve())
          : settled(ctx.progress.update(task, `Evacuation of instance started: '${move.instanceUuid}'`, 0.5));
        const evacuated = await settled(procedure.run(move).then(() => undefined));
        const written = await announced;
        if (!evacuated.ok) throw evacuated.error;
        if (!written.ok) throw written.error;
      });
    } finally {
      release?.();
    }
    await tallyMoves(ctx, host);
  },
};

/** A promise's outcome as a value, with its rejection handled from the start. */
function settled(p: Promise<void>): Promise<{ ok: true } | { ok: false; error: unknown }> {
  return p.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** Success or failure of the attempt, from this run's moves only (fixes B1). */
async function tallyMoves(ctx: WorkflowContext, host: string): Promise<void> {
  const task = 'EvacuateInstancesTask';
  const moves = ctx.vmoves.list();
  const succeeded = moves.filter((m) => m.status === 'succeeded').map((m) => m.instanceUuid);
  if (succeeded.length > 0) {
    succeeded.sort();
    await ctx.progress.update(
      task,
      `Successfully evacuate instances '${succeeded.join(',')}' from host '${host}'`,
      0.7,
    );
  }
  // Masakari lists failed and pending ids in its vmove query order, created_at desc then id desc:
  // the newest move first, i.e. the reverse of the order the moves were recorded in.
  const newestFirst = [...moves].reverse();
  const failed = newestFirst.filter((m) => m.status === 'failed').map((m) => m.instanceUuid);
  if (failed.length > 0) {
    const msg = `Failed to evacuate instances '${failed.join(',')}' from host '${host}'`;
    await ctx.progress.update(task, msg, 0.7);
    throw new RecoveryFailed(msg);
  }
  const unfinished = newestFirst.filter((m) => m.status !== 'succeeded').map((m) => m.instanceUuid);
  if (unfinished.length > 0) {
    const msg = `Instances '${unfinished.join(',')}' were not evacuated from host '${host}': vmove status is still pending`;
    await ctx.progress.update(task, msg, 0.7);
    throw new RecoveryFailed(msg);
  }
  await ctx.progress.update(task, 'Evacuation process completed!', 1.0);
}

/**
 * Runs work over items with at most `limit` in flight (Masakari's GreenPool of
 * host_failure_recovery_threads). Every started item is awaited; when the run
 * is cancelled the first cancellation is rethrown after the others settle.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      signal.throwIfAborted();
      const item = items[next++] as T;
      await work(item);
    }
  };
  const results = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, () => worker()),
  );
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
}

const noOpTask: HostTask = {
  className: null,
  async execute(ctx) {
    ctx.log.info('Custom task executed successfully..!!');
  },
};

/** Entry-point names of masakari.task_flow.tasks usable in the host flows. */
export const HOST_TASKS: Readonly<Record<string, HostTask>> = {
  disable_compute_service_task: disableComputeServiceTask,
  prepare_HA_enabled_instances_task: prepareHAEnabledInstancesTask,
  evacuate_instances_task: evacuateInstancesTask,
  no_op: noOpTask,
};

/** Resolves configured task names before anything runs, so a typo fails before any side effect. */
export function resolveHostTasks(option: string, names: readonly string[]): HostTask[] {
  return names.map((name) => {
    const task = Object.hasOwn(HOST_TASKS, name) ? HOST_TASKS[name] : undefined;
    if (!task) {
      throw new RecoveryFailed(
        `Unknown task '${name}' in [taskflow_driver_recovery_flows] ${option}; known tasks: ${Object.keys(HOST_TASKS).join(', ')}`,
      );
    }
    return task;
  });
}
