import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { boolFromString, buildFlow, FlowBuildError, noOpTask } from './tasks.ts';
import type { RecoveryTask } from './tasks.ts';

const task = (className: string): RecoveryTask<null> => ({ className, recorded: true, execute: async () => {} });
const registry = { a_task: task('ATask'), b_task: task('BTask'), no_op: noOpTask<null>() };
const spec = (lists: { pre?: string[]; main?: string[]; post?: string[] }) => ({
  workflow: 'instance failure',
  option: 'instance_failure_recovery_tasks',
  lists: lists as { pre: string[]; main: string[]; post: string[] },
  registry,
  notificationUuid: 'u',
});

test('pre, main and post are concatenated in that order', () => {
  const flow = buildFlow(spec({ pre: ['b_task'], main: ['no_op'], post: ['a_task'] }));
  assert.equal(
    flow.map((t) => t.className),
    ['BTask', 'Noop', 'ATask'],
  );
});

test('a missing list, an unknown name and a duplicate are build errors naming the option', () => {
  const missing = (() => {
    try {
      buildFlow(spec({ pre: [], main: [] }));
    } catch (e) {
      return e;
    }
  })() as FlowBuildError;
  assert.instance(missing, FlowBuildError);
  assert.is(
    missing.detail,
    "[taskflow_driver_recovery_flows] instance_failure_recovery_tasks: missing the 'post' task list",
  );
  assert.throws(
    () => buildFlow(spec({ pre: ['nope'], main: [], post: [] })),
    (e: FlowBuildError) => e.detail.includes("unknown recovery task 'nope' (known: a_task, b_task, no_op)"),
  );
  assert.throws(
    () => buildFlow(spec({ pre: ['a_task'], main: ['a_task'], post: [] })),
    (e: FlowBuildError) => e.detail.includes('listed twice'),
  );
});

test("oslo's bool_from_string truth set", () => {
  for (const v of ['1', 't', 'TRUE', 'on', 'Y', 'yes', ' yes ']) assert.ok(boolFromString(v), v);
  for (const v of [undefined, '', '0', 'false', 'no', 'enabled', '2']) assert.not.ok(boolFromString(v), String(v));
});

test.run();
