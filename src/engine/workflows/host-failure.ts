// The host-failure workflow: Masakari's TaskflowDriver.execute_host_failure
// with the auto and reserved-host flows (masakari/engine/drivers/taskflow/driver.py,
// host_failure.py). The engine core has already put the failed host on maintenance;
// it calls runHostFailure and maps the outcome: resolve → finished,
// SkipRecovery → finished, RecoveryFailed (incl. ReservedHostsUnavailable) →
// error.
//
// Flows. Each flow runs its configured pre, main and post task lists
// ([taskflow_driver_recovery_flows] host_auto_failure_recovery_tasks /
// host_rh_failure_recovery_tasks). In the reserved-host flow the main list
// runs once per reserved host (newest first) until one attempt succeeds, as
// taskflow's ParameterizedForEach retry does; when every reserved host has
// failed, the last failure is raised. A SkipRecovery (no instances) ends the
// reserved-host loop at once: later hosts could only skip again.
//
// Recovery methods. auto and reserved_host run their flow. auto_priority runs
// auto, then reserved_host on any failure but a skip; rh_priority runs
// reserved_host (no reserved hosts counts as a failure), then auto. A fallback
// starts a NEW run through startFallbackRun() — new progress set, new vmoves —
// so only the fallback's own moves decide its outcome (fixes B1).
//
// Resumption. The engine core re-enters runHostFailure with the same run
// after a crash. The run's journal says what already happened: `flow:<run>`
// which flow (and whether it is a fallback), task states (a task that ended
// SUCCESS is not run again), `reserved-hosts:<run>` the reserved hosts chosen,
// `reserved-host:<name>` which of them this run took or gave up on, the vmoves
// and `evacuate:`/`lock:` per instance (see evacuate-instance.ts), and
// `fallback-from:<run>` that the run's primary flow failed and its fallback
// run is (being) started. The effects are shared by every run of the
// notification, so a fallback run that crashed before writing its own `flow:`
// record still finds the `fallback-from:` record of the run that started it.
//
// Taskflow states. A task is RUNNING while it executes and SUCCESS after. On a
// failure or a skip every task of the run that executed ends REVERTED with
// progress 1.0, as taskflow reverts them on a failure — except in the
// reserved-host flow, whose main tasks run under a ParameterizedForEach retry:
// a failure or skip there reverts only the main tasks (before they run again
// with the next host, and once more when the hosts are exhausted), and the pre
// tasks keep SUCCESS. taskflow resolves an exhausted retry with its REVERT
// strategy, which (engine option defer_reverts off, as Masakari runs it)
// reverts only the retry's own sub-flow; masakari-engine 22.0.0 shows exactly
// that (test/e2e/reference-engine.test.ts, scenario reserved-host-down).

import { isTransient } from '../../k8s/client.ts';
import type { RecoveryMethod } from '../../model/types.ts';
import { BMC_POWER_OFF_TASK } from '../../model/recovery-tasks.ts';
import type { StartFallbackRun, WorkflowContext } from './context.ts';
import { RecoveryFailed, ReservedHostsUnavailable, SkipRecovery } from './context.ts';
import type { EvacuationHooks } from './evacuate-instance.ts';
import { errorText } from './evacuation-rules.ts';
import type { HostTask } from './host-failure-tasks.ts';
import { reservedHostKey, resolveHostTasks } from './host-failure-tasks.ts';

export type HostFlow = 'auto' | 'reserved_host';

/** Optional hooks; the engine core passes its evacuation counter here. */
export type HostFailureOptions = EvacuationHooks;

interface FlowRecord {
  flow: HostFlow;
  fallback: boolean;
}

interface ReservedHostRecord {
  run: number;
  result?: 'succeeded' | 'failed';
  error?: string;
}

export const flowKey = (run: number): string => `flow:${run}`;
export const reservedHostsKey = (run: number): string => `reserved-hosts:${run}`;
/** Written by a run whose primary flow failed, before it starts its fallback run. */
export const fallbackKey = (run: number): string => `fallback-from:${run}`;

export async function runHostFailure(
  ctx: WorkflowContext,
  startFallbackRun: StartFallbackRun,
  options: HostFailureOptions = {},
): Promise<void> {
  const method = ctx.notification.recoveryMethod;
  const recorded = ctx.effects.get(flowKey(ctx.run))?.data as FlowRecord | undefined;
  if (recorded?.fallback) return runFlowOrThrow(ctx, recorded.flow, options);
  const startedBy =
    ctx.run > 0 ? (ctx.effects.get(fallbackKey(ctx.run - 1))?.data as FlowRecord | undefined) : undefined;
  if (!recorded && startedBy) {
    // The previous run failed and started this one as its priority fallback.
    await recordFlow(ctx, startedBy.flow, true);
    return runFlowOrThrow(ctx, startedBy.flow, options);
  }

  const primary: HostFlow =
    recorded?.flow ?? (method === 'auto' || method === 'auto_priority' ? 'auto' : 'reserved_host');
  if (!recorded) await recordFlow(ctx, primary, false);
  const fallback: HostFlow = primary === 'auto' ? 'reserved_host' : 'auto';
  // A resumed run whose primary flow already failed goes straight to its fallback.
  if (!ctx.effects.get(fallbackKey(ctx.run))) {
    try {
      await runFlow(ctx, primary, options);
      return;
    } catch (err) {
      // An API server outage is not the flow failing: retry the same flow rather than fall back.
      if (ctx.signal.aborted || err instanceof SkipRecovery || !isPriorityMethod(method) || isTransient(err))
        throw asOutcome(ctx, err);
      ctx.log.warn({ err: errorText(err) }, fallbackWarning(ctx.notification.hostname, primary));
      await ctx.effects.done(fallbackKey(ctx.run), { flow: fallback, fallback: true });
    }
  }
  const next = await startFallbackRun();
  await recordFlow(next, fallback, true);
  await runFlowOrThrow(next, fallback, options);
}

function isPriorityMethod(method: RecoveryMethod): boolean {
  return method === 'auto_priority' || method === 'rh_priority';
}

/** Masakari's fallback warnings (driver.py), word for word. */
function fallbackWarning(host: string, failed: HostFlow): string {
  return failed === 'auto'
    ? `Failed to evacuate all instances from failed_host: '${host}' using 'auto' workflow, retrying using 'reserved_host' workflow.`
    : `Failed to evacuate all instances from failed_host '${host}' using 'reserved_host' workflow, retrying using 'auto' workflow`;
}

async function recordFlow(ctx: WorkflowContext, flow: HostFlow, fallback: boolean): Promise<void> {
  const record: FlowRecord = { flow, fallback };
  await ctx.effects.done(flowKey(ctx.run), { ...record });
}

async function runFlowOrThrow(ctx: WorkflowContext, flow: HostFlow, options: HostFailureOptions): Promise<void> {
  try {
    await runFlow(ctx, flow, options);
  } catch (err) {
    throw asOutcome(ctx, err);
  }
}

/**
 * Masakari's driver passes its own outcomes through and wraps anything else
 * (a Nova error, a missing compute service) in a generic failure. A
 * cancellation is not an outcome: it propagates untouched so the run resumes.
 */
function asOutcome(ctx: WorkflowContext, err: unknown): unknown {
  if (ctx.signal.aborted) return ctx.signal.reason ?? err;
  if (err instanceof SkipRecovery || err instanceof RecoveryFailed) return err;
  if (isTransient(err)) {
    // Our own store was out of reach (an API server restart outlasted the
    // client's bounded retries): nothing is wrong with the host or Nova, and
    // the run ends in `error` so the periodic retry resumes it from its journal.
    ctx.log.warn(
      { err: errorText(err) },
      'Host failure flow stopped: the Kubernetes API server was unavailable; the periodic retry resumes it',
    );
  } else {
    ctx.log.error({ err: errorText(err) }, 'Host failure flow failed with an unexpected error');
  }
  return new RecoveryFailed(`Failed to execute host failure flow for notification '${ctx.notification.uuid}'.`, {
    cause: err,
  });
}

/**
 * Failures the reserved-host retry has already resolved by reverting its main
 * sub-flow only; the flow's other tasks keep their state.
 */
const revertedByRetry = new WeakSet<object>();

async function runFlow(ctx: WorkflowContext, flow: HostFlow, options: HostFailureOptions): Promise<void> {
  try {
    if (flow === 'auto') await runAutoFlow(ctx, options);
    else await runReservedHostFlow(ctx, options);
  } catch (err) {
    const resolved = typeof err === 'object' && err !== null && revertedByRetry.has(err);
    // The BMC power-off before the run (src/engine/gates/bmc-fence.ts) is not the flow's to revert.
    if (!ctx.signal.aborted && !resolved) await revert(ctx, (name) => name !== BMC_POWER_OFF_TASK);
    throw err;
  }
}

async function runAutoFlow(ctx: WorkflowContext, options: HostFailureOptions): Promise<void> {
  const lists = ctx.config.taskflow_driver_recovery_flows.host_auto_failure_recovery_tasks;
  const option = 'host_auto_failure_recovery_tasks';
  const tasks = [
    ...resolveHostTasks(option, lists.pre),
    ...resolveHostTasks(option, lists.main),
    ...resolveHostTasks(option, lists.post),
  ];
  ctx.log.info({ flow: 'auto', run: ctx.run }, `Recovering host '${ctx.notification.hostname}' with the auto flow`);
  for (const task of tasks) await runTask(ctx, task, { hooks: options });
}

async function runReservedHostFlow(ctx: WorkflowContext, options: HostFailureOptions): Promise<void> {
  const reservedHosts = await chooseReservedHosts(ctx);
  const lists = ctx.config.taskflow_driver_recovery_flows.host_rh_failure_recovery_tasks;
  const option = 'host_rh_failure_recovery_tasks';
  const pre = resolveHostTasks(option, lists.pre);
  const main = resolveHostTasks(option, lists.main);
  const post = resolveHostTasks(option, lists.post);
  const mainNames = new Set(main.map((t) => t.className));
  ctx.log.info(
    { flow: 'reserved_host', run: ctx.run, reservedHosts },
    `Recovering host '${ctx.notification.hostname}' with the reserved_host flow`,
  );

  for (const task of pre) await runTask(ctx, task, { hooks: options });
  let lastFailure: unknown;
  let succeeded = false;
  for (const reservedHost of reservedHosts) {
    const record = ctx.effects.get(reservedHostKey(reservedHost));
    const data = record?.data as ReservedHostRecord | undefined;
    if (record?.state === 'done' && data?.run === ctx.run && data.result === 'failed') {
      lastFailure = new RecoveryFailed(data.error ?? `Reserved host '${reservedHost}' failed`);
      continue;
    }
    try {
      for (const task of main) await runTask(ctx, task, { hooks: options, reservedHost });
      await ctx.effects.done(reservedHostKey(reservedHost), { run: ctx.run, result: 'succeeded' });
      succeeded = true;
      break;
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (err instanceof SkipRecovery) {
        // Later hosts could only skip again: end the retry at once, as exhausted.
        await revert(ctx, (name) => mainNames.has(name));
        revertedByRetry.add(err);
        throw err;
      }
      lastFailure = err;
      ctx.log.warn(
        { reservedHost, err: errorText(err) },
        `Recovery using reserved host '${reservedHost}' failed; trying the next reserved host`,
      );
      // Revert first: a crash in between re-runs this attempt, which finds its moves already failed.
      await revert(ctx, (name) => mainNames.has(name));
      await ctx.effects.done(reservedHostKey(reservedHost), { run: ctx.run, result: 'failed', error: errorText(err) });
    }
  }
  if (!succeeded) {
    // Every attempt's main tasks were reverted above; the pre tasks stay SUCCESS.
    const failure = lastFailure ?? new ReservedHostsUnavailable();
    if (typeof failure === 'object' && failure !== null) revertedByRetry.add(failure);
    throw failure;
  }
  for (const task of post) await runTask(ctx, task, { hooks: options });
}

/** The run's reserved hosts, chosen once (newest first) and journalled so a resumed run keeps them. */
async function chooseReservedHosts(ctx: WorkflowContext): Promise<string[]> {
  const recorded = ctx.effects.get(reservedHostsKey(ctx.run))?.data as { hosts?: string[] } | undefined;
  if (recorded?.hosts) return recorded.hosts;
  const hosts = ctx.hosts.reservedHosts(ctx.notification.segmentUuid);
  if (hosts.length === 0) throw new ReservedHostsUnavailable();
  await ctx.effects.done(reservedHostsKey(ctx.run), { run: ctx.run, hosts: [...hosts] });
  return hosts;
}

async function runTask(
  ctx: WorkflowContext,
  task: HostTask,
  inputs: Parameters<HostTask['execute']>[1],
): Promise<void> {
  const name = task.className;
  if (name === null) return task.execute(ctx, inputs);
  if (ctx.progress.entries().some((e) => e.name === name && e.state === 'SUCCESS')) return;
  await ctx.progress.start(name);
  await task.execute(ctx, inputs);
  await ctx.progress.finish(name, 'SUCCESS');
}

/** Taskflow reverts every executed task of a failed flow (or retried sub-flow): REVERTED, progress 1.0. */
async function revert(ctx: WorkflowContext, include: (name: string) => boolean): Promise<void> {
  const executed = new Set(
    ctx.progress
      .entries()
      .filter((e) => include(e.name) && ['RUNNING', 'SUCCESS', 'FAILURE'].includes(e.state))
      .map((e) => e.name),
  );
  for (const name of executed) await ctx.progress.finish(name, 'REVERTED');
}
