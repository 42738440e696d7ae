// Runs a claimed recovery run to its end: loads its journal, releases the
// locks an interrupted run left, runs the workflow, sweeps, writes the final
// status — or, when the run is cancelled, does what its cancellation asks
// (src/engine/run/cancellation.ts).
//
// The executor is no scheduler: when a key is looked at is the work queue's
// business alone (a run that ends enqueues its key). It must still remember
// the runs in flight, because a run outlives the reconcile that started it:
// an evacuation takes minutes and the workers must stay free to decide other
// notifications meanwhile (Masakari runs each one in its own greenthread).
// The work queue guarantees one reconcile per key at a time, not one run per
// key, so this registry is what keeps a second run of a key from starting,
// and what the expiry task, a delete and the end of leadership use to cancel
// a run from outside it.

import { randomUUID } from 'node:crypto';
import type { NovaClient } from '../../openstack/types.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import type { MissingReference, Plan, Workflow } from '../intake/decisions.ts';
import { fenceNova } from '../../runtime/lease-fence.ts';
import { outcomeOf, withServersLeftLocked } from './outcomes.ts';
import type { Outcome } from './outcomes.ts';
import { statusWriterFor } from '../status/writer-for.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import type { LeadershipTerm } from '../deps/leadership-term.ts';
import { afterCancel, HandedOver } from './cancellation.ts';
import { finishRun } from './finish.ts';
import { sweepRunServerLocks } from './server-lock-sweep.ts';
import { runWorkflow } from './workflow.ts';
import { JournalWriteError, NotOwnerError, ownsRun } from '../status/writer.ts';

/** Delay before a run whose journal or final status could not be written is taken over again. */
export const RESUME_AFTER_WRITE_FAILURE_MS = 5_000;

export interface RunRequest {
  /** The notification as claimed (status `running`, owner = term.token). */
  n: AdmittedNotification;
  term: LeadershipTerm;
  /** Taken over from an earlier owner: locks it left are released before the workflow re-enters. */
  resumed: boolean;
  plan: Plan | MissingReference;
  /** Called once the run has ended, however it ended. */
  onEnd(): void;
}

interface Run {
  abort: AbortController;
  done: Promise<void>;
}

export class RunExecutor {
  private readonly runs = new Map<string, Run>();
  /** Runs that stopped on a failed write: not taken over again before this time (clock ms). */
  private readonly resumeNotBefore = new Map<string, number>();

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly currentTerm: () => LeadershipTerm | undefined,
  ) {}

  start(r: RunRequest): void {
    const key = r.n.metadata.name;
    const { term } = r;
    const abort = new AbortController();
    const onTermEnd = (): void =>
      abort.abort(term.isGracefulStop() ? new HandedOver('engine stopping', true) : new HandedOver('leadership lost'));
    if (term.signal.aborted) onTermEnd();
    else term.signal.addEventListener('abort', onTermEnd, { once: true });
    const nova =
      this.deps.nova &&
      fenceNova(this.deps.nova, term.holdsLease, (err) => {
        if (!abort.signal.aborted) {
          this.deps.log.warn({ notification: r.n.status.uuid }, `${err.message}; cancelling the run`);
          abort.abort(new HandedOver('engine Lease no longer held'));
        }
      });
    this.resumeNotBefore.delete(key);
    const done = this.execute(r, abort.signal, nova)
      .catch((err) => this.deps.log.error({ err, notification: r.n.status.uuid }, 'recovery execution crashed'))
      .finally(() => {
        term.signal.removeEventListener('abort', onTermEnd);
        this.runs.delete(key);
        r.onEnd();
      });
    this.runs.set(key, { abort, done });
  }

  isRunning(key: string): boolean {
    return this.runs.has(key);
  }

  /** Runs in flight in this process (the leader's: every run of the cluster but one not yet taken over). */
  inFlight(): number {
    return this.runs.size;
  }

  /** Aborts the run of `key` with `reason`; resolves once it has stopped (at once when none runs). */
  async cancel(key: string, reason: Error): Promise<void> {
    const run = this.runs.get(key);
    if (!run) return;
    run.abort.abort(reason);
    await run.done;
  }

  /** Aborts every run in flight with `reason` and waits for them to stop. */
  async cancelAll(reason: () => Error): Promise<void> {
    const running = [...this.runs.values()];
    for (const run of running) run.abort.abort(reason());
    await Promise.allSettled(running.map((run) => run.done));
    this.resumeNotBefore.clear();
  }

  /** Resolves once every run in flight has ended (tests, graceful stop). */
  async whenIdle(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()].map((run) => run.done));
  }

  /** How long to wait before taking the interrupted run of `key` over again (0: now). */
  resumeDelay(key: string): number {
    const at = this.resumeNotBefore.get(key);
    const wait = at === undefined ? 0 : at - this.deps.clock.now().getTime();
    if (wait <= 0) this.resumeNotBefore.delete(key);
    return Math.max(wait, 0);
  }

  forget(key: string): void {
    this.resumeNotBefore.delete(key);
  }

  private resumeLater(key: string): void {
    this.resumeNotBefore.set(key, this.deps.clock.now().getTime() + RESUME_AFTER_WRITE_FAILURE_MS);
  }

  private async execute(r: RunRequest, signal: AbortSignal, nova: NovaClient | undefined): Promise<void> {
    const { n, plan } = r;
    const key = n.metadata.name;
    const uuid = n.status.uuid;
    const run = (n.status.runs ?? 1) - 1;
    const log = this.deps.log.child({ notification: uuid, type: n.spec.type, run });
    // The workflow stops as soon as its journal is lost: refused (another engine took the run over, the
    // notification left running or was deleted) or unwritable. It must not go on calling Nova for a run it
    // no longer records, and its flows then end as cancelled (the reason below), not as failed by an
    // unexpected error. The writer itself keeps the outer signal: the cancellation may still write.
    const journalLost = new AbortController();
    const runSignal = AbortSignal.any([signal, journalLost.signal]);
    const writer = statusWriterFor(this.deps, n, ownsRun(r.term.token), signal, log, (err) => journalLost.abort(err));
    const requestId = `req-${randomUUID()}`;
    const scope = { log, requestId, signal, nova };
    const cancelled = (): Promise<void> =>
      afterCancel(this.deps, this.currentTerm(), { n, token: r.term.token, writer, ...scope });
    let workflow: Workflow | undefined;
    let outcome: Outcome;
    try {
      // A resumed run (or a retry) needs its whole journal, pages included, before the workflow reads it.
      await writer.load();
      if (r.resumed) await sweepRunServerLocks(this.deps, writer, scope);
      if (plan.kind === 'error') {
        outcome = { status: 'error', reason: plan.reason };
      } else if (plan.kind === 'final') {
        // Only reachable on resume: e.g. the segment was disabled while the run was interrupted.
        outcome = { status: plan.status, reason: plan.reason, ...(plan.message ? { message: plan.message } : {}) };
      } else if (!nova) {
        workflow = plan.workflow;
        outcome = {
          status: 'error',
          reason: `No Nova client is configured (no OpenStack credentials and no simulator): cannot run the ${plan.workflow} failure workflow.`,
        };
      } else {
        workflow = plan.workflow;
        outcome = await runWorkflow(this.deps, { n, plan, run, writer, requestId, signal: runSignal, log, nova });
      }
    } catch (err) {
      if (signal.aborted || err instanceof NotOwnerError) return cancelled();
      if (err instanceof JournalWriteError) {
        log.error({ err }, 'journal write failed; the run will be taken over again');
        return this.resumeLater(key);
      }
      outcome = outcomeOf(workflow ?? 'host', uuid, err);
    }
    if (signal.aborted || writer.fatal) {
      if (writer.fatal instanceof JournalWriteError && !signal.aborted) {
        log.error({ err: writer.fatal }, 'journal write failed during the run; it will be taken over again');
        return this.resumeLater(key);
      }
      return cancelled();
    }
    const leftLocked = await sweepRunServerLocks(this.deps, writer, scope);
    const final = withServersLeftLocked(outcome, leftLocked);
    if (!(await finishRun(this.deps, n, writer, final, log))) this.resumeLater(key);
  }
}
