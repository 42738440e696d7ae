// Masakari's outcome table: how the way a workflow ended maps to the
// notification's status (engine/manager.py _handle_notification_type_*), and
// the driver's message wrapping (engine/drivers/taskflow/driver.py).

import { IgnoreRecovery, RecoveryFailed, SkipRecovery } from '../workflows/context.ts';
import { FlowBuildError } from '../workflows/tasks.ts';
import type { Workflow } from '../intake/decisions.ts';

export interface Outcome {
  status: 'finished' | 'ignored' | 'error';
  /** Masakari's message for the outcome (what upstream logs as "Reason: ..."). */
  reason: string;
  /** The underlying error's own text when it was wrapped, for logs and events. */
  detail?: string;
  /** Notification.message to write (only the segment-disabled decision has one). */
  message?: string;
}

/**
 * The text Masakari's driver gives errors it does not pass through. The
 * process workflow's says "instance failure flow": a copy-paste slip upstream
 * (B8), kept so logs match what operators search for.
 */
export function executeFailureMessage(workflow: Workflow, uuid: string): string {
  const flow = workflow === 'host' ? 'host failure' : 'instance failure';
  return `Failed to execute ${flow} flow for notification '${uuid}'.`;
}

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/**
 * Upstream, an exception that is not a MasakariException escaped the handler
 * and left the notification `running` until expiry. Here every failure ends
 * in `error`, so it gets its periodic retry and a visible final state.
 */
export function outcomeOf(workflow: Workflow, uuid: string, err: unknown): Outcome {
  if (err === undefined) return { status: 'finished', reason: 'Recovery workflow completed.' };
  if (err instanceof SkipRecovery) return { status: 'finished', reason: err.message };
  if (err instanceof IgnoreRecovery && workflow === 'instance') return { status: 'ignored', reason: err.message };
  if (err instanceof RecoveryFailed) return { status: 'error', reason: err.message };
  if (err instanceof FlowBuildError) return { status: 'error', reason: err.message, detail: err.detail };
  return { status: 'error', reason: executeFailureMessage(workflow, uuid), detail: describe(err) };
}

/**
 * A run that ends with servers it locked still locked never ends `finished`
 * or `ignored`: it ends `error`, naming them, so the periodic task retries it
 * (its run's lock sweep unlocks them) and the journal that records the locks
 * is kept. Masakari's unlock_server raises (masakari/compute/nova.py), which
 * fails its host-failure flow the same way.
 */
export function withServersLeftLocked(outcome: Outcome, servers: readonly string[]): Outcome {
  if (servers.length === 0) return outcome;
  const left = `Failed to unlock server(s) ${servers.join(', ')} locked by this recovery.`;
  if (outcome.status === 'error') {
    return { ...outcome, detail: outcome.detail ? `${outcome.detail}; ${left}` : left };
  }
  return { status: 'error', reason: left };
}
