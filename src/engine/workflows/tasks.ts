// Recovery task registry and the linear flow runner shared by the instance
// and process workflows (Masakari's taskflow driver, reduced to what it does
// for these flows).
//
// A flow is `[taskflow_driver_recovery_flows] <option>` = {pre, main, post}:
// the three lists are concatenated in that order and each name is looked up
// in the workflow's registry (Masakari's stevedore namespace
// `masakari.task_flow.tasks`). Taskflow semantics kept here:
// - a task is marked RUNNING when it starts and SUCCESS when it returns;
// - when a task fails, every task executed so far, including the failed one,
//   ends REVERTED (progress 1.0) while its message list keeps the failure text;
// - `no_op` is not a MasakariTask, so it never appears in the details.
// Added for crash safety: tasks already SUCCESS in the current run's journal
// are skipped when a run is resumed after an engine restart.

import type { TaskLists } from '../../config/config.ts';
import { MASAKARI_TASK_NAMES } from '../../model/recovery-tasks.ts';
import type { WorkflowContext } from './context.ts';

/** The progress reporter a task sees: Masakari's `update_details(msg, progress=0.0)`. */
export type UpdateDetails = (message: string, progress?: number) => Promise<void>;

export interface RecoveryTask<I> {
  /** Masakari's task class name: the `name` shown in recovery_workflow_details. */
  className: string;
  /** False for tasks that are not MasakariTasks (no_op): nothing is recorded for them. */
  recorded: boolean;
  execute(ctx: WorkflowContext, input: I, update: UpdateDetails): Promise<void>;
}

export type TaskRegistry<I> = Readonly<Record<string, RecoveryTask<I>>>;

/** `no_op`: Masakari's placeholder task for custom flows. */
export function noOpTask<I>(): RecoveryTask<I> {
  return {
    className: 'Noop',
    recorded: false,
    execute: async (ctx) => {
      ctx.log.info('Custom task executed successfully..!!');
    },
  };
}

/**
 * A flow that could not be built from the configured task lists. `message`
 * is Masakari's wording ("Failed to create ... flow for notification ..."),
 * `detail` says exactly which option and task name is wrong.
 */
export class FlowBuildError extends Error {
  constructor(
    message: string,
    public readonly detail: string,
  ) {
    super(message);
    this.name = 'FlowBuildError';
  }
}

export interface FlowSpec<I> {
  /** e.g. 'instance failure'; used in error texts. */
  workflow: string;
  /** e.g. 'instance_failure_recovery_tasks'. */
  option: string;
  lists: TaskLists;
  registry: TaskRegistry<I>;
  notificationUuid: string;
}

/** Resolves the configured names to tasks, in pre → main → post order, or throws FlowBuildError. */
export function buildFlow<I>(spec: FlowSpec<I>): RecoveryTask<I>[] {
  const fail = (detail: string): never => {
    throw new FlowBuildError(
      `Failed to create ${spec.workflow} flow for notification '${spec.notificationUuid}'.`,
      `[taskflow_driver_recovery_flows] ${spec.option}: ${detail}`,
    );
  };
  const tasks: RecoveryTask<I>[] = [];
  const seen = new Set<string>();
  for (const part of ['pre', 'main', 'post'] as const) {
    const names = (spec.lists as Partial<TaskLists>)[part];
    if (!Array.isArray(names)) fail(`missing the '${part}' task list`);
    for (const name of names as string[]) {
      const task = spec.registry[name];
      if (!task) {
        const home = MASAKARI_TASK_NAMES[name];
        fail(
          home
            ? `task '${name}' belongs to the ${home} workflow and cannot run in the ${spec.workflow} workflow`
            : `unknown recovery task '${name}' (known: ${Object.keys(spec.registry).join(', ')})`,
        );
      }
      if (seen.has(name)) fail(`task '${name}' is listed twice (taskflow rejects duplicate atom names)`);
      seen.add(name);
      tasks.push(task as RecoveryTask<I>);
    }
  }
  return tasks;
}

/**
 * Runs the tasks in order, recording taskflow's states through ctx.progress.
 * Throws whatever the failing task threw, after the revert bookkeeping. On
 * cancellation (ctx.signal aborted) nothing more is recorded: the run is
 * resumed elsewhere and its journal must stay as it was.
 */
export async function runFlow<I>(ctx: WorkflowContext, tasks: RecoveryTask<I>[], input: I): Promise<void> {
  const alreadyDone = new Set(
    ctx.progress
      .entries()
      .filter((e) => e.state === 'SUCCESS')
      .map((e) => e.name),
  );
  const executed: RecoveryTask<I>[] = [];
  for (const task of tasks) {
    ctx.signal.throwIfAborted();
    if (task.recorded && alreadyDone.has(task.className)) {
      ctx.log.info({ task: task.className }, 'task already succeeded in this run before a restart; not repeating it');
      executed.push(task);
      continue;
    }
    const update: UpdateDetails = (message, progress = 0.0) =>
      task.recorded ? ctx.progress.update(task.className, message, progress) : Promise.resolve();
    if (task.recorded) await ctx.progress.start(task.className);
    executed.push(task);
    try {
      await task.execute(ctx, input, update);
    } catch (err) {
      if (!ctx.signal.aborted) {
        for (const t of executed.reverse()) if (t.recorded) await ctx.progress.finish(t.className, 'REVERTED');
      }
      throw err;
    }
    if (task.recorded) await ctx.progress.finish(task.className, 'SUCCESS');
  }
}

/** oslo's strutils.bool_from_string(value, strict=False) as Masakari uses it for metadata flags. */
export function boolFromString(value: string | undefined): boolean {
  if (value === undefined) return false;
  return ['1', 't', 'true', 'on', 'y', 'yes'].includes(value.trim().toLowerCase());
}
