// The notification state machine (Masakari engine/manager.py), keyed by
// Notification name and driven by the runtime's Controller on the leader.
//
//   new ──(segment disabled)──────────────────────────────▶ ignored  [message 'Recovery aboart: ...']
//   new ──(pure decision: bad VM event, host_status, STARTED)▶ ignored | finished
//   new ──(resourceVersion-checked)──▶ running ──▶ finished | ignored | error
//   error ──(periodic, once)──▶ running ──▶ finished | ignored | failed
//   new older than retry_notification_new_status_interval ──(periodic, once)──▶ running ──▶ … | failed
//   new | running | error older than notifications_expired_interval ──▶ failed (a running run is cancelled)
//
// Decisions happen in reconcile(), which never blocks on a workflow: a run
// is started as a background execution and the key is enqueued again when
// it ends. Crash safety: status.phase is `running` with status.runs and
// status.engine.owner (a fencing token) for as long as a run is in flight;
// a new leader that finds `running` without an execution of its own takes
// the run over with a resourceVersion-checked write of its token (any older
// owner's next write then fails its guard) and re-enters the workflow with
// the same run number, whose journal says which steps are done.

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../k8s/client.ts';
import { isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, Notification, NotificationStatusBlock } from '../model/types.ts';
import type { NovaClient } from '../openstack/types.ts';
import type { Informer, ReconcileResult } from '../runtime/types.ts';
import type { StartFallbackRun, WorkflowContext } from './workflows/context.ts';
import { runInstanceFailure } from './workflows/instance-failure.ts';
import { runProcessFailure } from './workflows/process-failure.ts';
import { planNotification } from './decisions.ts';
import type { Plan, Workflow } from './decisions.ts';
import { outcomeOf } from './outcomes.ts';
import type { Outcome } from './outcomes.ts';
import { HaHostFlags } from './host-flags.ts';
import { INDEX } from '../model/indexes.ts';
import { isRunnableNotification } from '../domain/admitted.ts';
import { HostGate } from './host-gate.ts';
import { createRunJournal } from './journal.ts';
import type { IdSource } from './journal.ts';
import { lockKey, sweepLeftoverLocks, unreleasedLocks } from './locks.ts';
import { countFinalStatus } from './metrics.ts';
import { statusPatch } from './status-patch.ts';
import { fenceNova } from './nova-fence.ts';
import { engineOf, JournalWriteError, NotificationStatusWriter, NotOwnerError, ownsRun } from './status-writer.ts';
import type { EngineBookkeeping, StatusGuard } from './status-writer.ts';
import { syncNotificationConditions } from '../store/conditions.ts';
import { EVENT_REASONS, finalStatusReason, SERVICE_DISABLING_TASKS } from './event-reasons.ts';
import type { Clock } from '../time/clock.ts';
import { parseGeneratedTime, rfc3339Seconds } from '../time/format.ts';

/** Index of the segments informer: status.uuid → FailoverSegment. */

/** How often a notification whose host or segment is not (yet) in the cache is looked at again. */
const MISSING_REFERENCE_RECHECK_MS = 15_000;

/** Delay before a run whose journal could not be written is taken over again. */
const RESUME_AFTER_WRITE_FAILURE_MS = 5_000;

export type HostWorkflow = (ctx: WorkflowContext, startFallbackRun: StartFallbackRun) => Promise<void>;

/** Kubernetes Events the engine emits; the component adapts the runtime's EventRecorder. */
export interface EngineEvents {
  onNotification(n: Notification, type: 'Normal' | 'Warning', reason: string, message: string): void;
  onHost(h: HaHost, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface ProcessorDeps {
  kube: KubeClient;
  namespace: string;
  config: Config;
  nova?: NovaClient;
  log: Logger;
  clock: Clock;
  identity: string;
  notifications: Informer<Notification>;
  hosts: Informer<HaHost>;
  segments: Informer<FailoverSegment>;
  events: EngineEvents;
  /** The vmoves id allocator (src/store/ids.ts). */
  vmoveIds: IdSource;
  /** The host-failure workflow (src/engine/workflows/host-failure.ts runHostFailure). */
  hostWorkflow: HostWorkflow;
  enqueue(key: string): void;
  enqueueAfter(key: string, ms: number): void;
  /**
   * Fencing gate for segments with spec.requireFencing (OpenKeel extension):
   * is the failed host proven fenced? Wired to src/remediation/fencing.ts by
   * the engine component; absent means no gate.
   */
  fencing?: FencingGate;
}

export type FencingVerdict = { proven: true; proof: string } | { proven: false; missing: string };
export type FencingGate = (n: Notification, hostName: string) => Promise<FencingVerdict>;

/** How often a notification waiting for proof of fencing is looked at again. */
const FENCING_RECHECK_MS = 5_000;

/** Abort reason when the expiry task cancels a run. */
export class NotificationExpired extends Error {
  constructor(uuid: string) {
    super(`Notification ${uuid} is expired.`);
    this.name = 'NotificationExpired';
  }
}

/** Abort reason when leadership is lost or the engine stops: the run is handed over, not ended. */
export class HandedOver extends Error {
  constructor(
    why: string,
    /** Graceful stop while still holding the Lease: release the run's server locks before letting go. */
    public readonly releaseLocks = false,
  ) {
    super(why);
    this.name = 'HandedOver';
  }
}

/** How long a graceful stop may spend unlocking the servers of a cancelled run. */
const RELEASE_LOCKS_TIMEOUT_MS = 15_000;

interface Execution {
  abort: AbortController;
  done: Promise<void>;
  hostUuid: string;
}

const phaseOf = (n: Notification): string => n.status?.phase ?? 'new';

export class NotificationProcessor {
  private readonly gate = new HostGate();
  private readonly executions = new Map<string, Execution>();
  /** Keys the periodic task picked for their single last attempt (error retry, stuck new). */
  private readonly lastChance = new Set<string>();
  /**
   * Last fencing-wait message per notification held at the requireFencing
   * gate, so a long wait is reported once, not every recheck; an entry also
   * tells the periodic task that the notification is waiting, not stuck.
   */
  private readonly fencingNotes = new Map<string, string>();
  private term:
    { token: string; signal: AbortSignal; isGracefulStop: () => boolean; holdsLease: () => boolean } | undefined;
  private readonly log: Logger;

  constructor(private readonly deps: ProcessorDeps) {
    this.log = deps.log.child({ component: 'engine' });
  }

  /**
   * Called when this process becomes leader; `signal` aborts when it stops
   * leading. `isGracefulStop` tells, when that happens, whether it is this
   * process shutting down (still holding the Lease) rather than a lost Lease.
   * `holdsLease` is asked right before every Nova side effect of a run
   * (nova-fence.ts): false cancels the run instead of sending the call.
   */
  startLeading(signal: AbortSignal, o: { isGracefulStop?: () => boolean; holdsLease?: () => boolean } = {}): void {
    this.term = {
      token: `${this.deps.identity}#${randomUUID().slice(0, 8)}`,
      signal,
      isGracefulStop: o.isGracefulStop ?? (() => false),
      holdsLease: o.holdsLease ?? (() => true),
    };
    this.log.info({ owner: this.term.token }, 'engine leading: resuming and processing notifications');
    for (const n of this.deps.notifications.list()) if (n.metadata.name) this.deps.enqueue(n.metadata.name);
  }

  /**
   * Cancels every run in flight (they resume on the next leader) and waits
   * for them to stop. `releaseLocks` is for a graceful stop, when this
   * process still holds the Lease: each cancelled run unlocks the servers it
   * locked first, so none stays locked if no other engine takes over. After a
   * lost Lease it must not: the new leader may already have locked them again.
   */
  async stopLeading(why: string, o: { releaseLocks?: boolean } = {}): Promise<void> {
    this.term = undefined;
    const running = [...this.executions.values()];
    for (const e of running) e.abort.abort(new HandedOver(why, o.releaseLocks ?? false));
    await Promise.allSettled(running.map((e) => e.done));
    this.gate.clear();
    this.lastChance.clear();
    this.fencingNotes.clear();
  }

  /** Resolves once every run in flight has ended (tests, graceful stop). */
  async whenIdle(): Promise<void> {
    while (this.executions.size > 0) await Promise.allSettled([...this.executions.values()].map((e) => e.done));
  }

  isRunning(name: string): boolean {
    return this.executions.has(name);
  }

  // ------------------------------------------------------------------ reconcile

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const term = this.term;
    if (!term || term.signal.aborted) return;
    const n = this.deps.notifications.get(key);
    if (!n || n.metadata.deletionTimestamp) {
      this.lastChance.delete(key);
      this.fencingNotes.delete(key);
      // The cache holds unfinished notifications only: gone from it may mean finished (often by
      // the run itself, which then ends on its own). Only a real delete cancels a run.
      const exec = this.executions.get(key);
      if (exec && (n || (await this.deletedOnServer(key)))) {
        exec.abort.abort(new NotOwnerError(`${key}: notification was deleted`));
      }
      return;
    }
    // Created by kubectl: the store's reconciler assigns uuid and source host first; its update event brings us back.
    if (!isRunnableNotification(n)) return;
    if (this.executions.has(key)) return;
    const phase = phaseOf(n);
    if (phase === 'new') return this.begin(n, term.token, 'new');
    if (phase === 'error' && this.lastChance.has(key)) return this.begin(n, term.token, 'retry');
    if (phase === 'running') return this.begin(n, term.token, 'resume');
  }

  /** Starts (new, retry) or takes over (resume) a run, or parks the key behind its host's running recovery. */
  private async begin(n: Notification, token: string, mode: 'new' | 'retry' | 'resume'): Promise<void> {
    const key = n.metadata.name ?? '';
    const hostUuid = n.status?.sourceHostUuid ?? '';
    if (!this.gate.tryAcquire(hostUuid, key)) {
      this.log.info(
        { notification: n.status?.uuid, holder: this.gate.holder(hostUuid) },
        'waiting: another notification of the same host is being processed',
      );
      return;
    }
    let handedToExecution = false;
    try {
      const plan = this.plan(n);
      if (plan.kind === 'error' && mode === 'new' && !this.lastChance.has(key)) {
        // Masakari leaves a notification whose host cannot be loaded `new`; the periodic task then gives
        // it its one attempt. Until then, look again in case our cache was just behind.
        this.log.warn(
          { notification: n.status?.uuid },
          `${plan.reason} Notification left new until the periodic task retries it.`,
        );
        this.deps.enqueueAfter(key, MISSING_REFERENCE_RECHECK_MS);
        return;
      }
      if (plan.kind === 'final' && mode !== 'resume') {
        this.lastChance.delete(key);
        await this.finishWithoutRun(n, plan);
        return;
      }
      if (plan.kind === 'workflow' && plan.workflow === 'host' && mode !== 'resume') {
        // requireFencing: never evacuate a host that is not proven fenced. The
        // notification stays `new` (visible, retried, expired as usual) until
        // the proof appears; a resumed run passed this gate already.
        const waiting = await this.awaitFencing(n);
        if (waiting) {
          // Waiting for proof is not an attempt: the run that follows is the
          // notification's first, and an error in it still earns the retry.
          this.lastChance.delete(key);
          this.deps.enqueueAfter(key, FENCING_RECHECK_MS);
          return;
        }
      }
      const stored = await this.claimRun(n, token, mode);
      if (!stored) return;
      this.lastChance.delete(key);
      handedToExecution = true;
      this.spawn(stored, token, mode === 'resume', plan, hostUuid);
    } catch (err) {
      if (isConflict(err)) {
        // Someone wrote the notification since our cache saw it: decide again on the newer version.
        this.log.debug({ notification: key }, 'notification changed underneath; re-evaluating');
        await this.refresh(key);
        this.deps.enqueue(key);
        return;
      }
      throw err;
    } finally {
      if (!handedToExecution) this.releaseHost(hostUuid, key);
    }
  }

  private plan(n: Notification): Plan | { kind: 'error'; reason: string } {
    const segUuid = n.status?.failoverSegmentUuid ?? '';
    const segment = this.deps.segments.byIndex(INDEX.uuid, segUuid)[0];
    const host = this.deps.hosts.byIndex(INDEX.uuid, n.status?.sourceHostUuid ?? '')[0];
    if (!segment || !host) {
      return {
        kind: 'error',
        reason: !host
          ? `Host ${n.status?.sourceHostUuid} could not be found.`
          : `Failover segment ${segUuid} could not be found.`,
      };
    }
    return planNotification({
      uuid: n.status?.uuid ?? '',
      type: n.spec.type,
      sourceHostUuid: n.status?.sourceHostUuid ?? '',
      payload: n.spec.payload ?? {},
      segmentEnabled: segment.spec.enabled ?? true,
    });
  }

  /** True while the source host of a requireFencing segment is not proven fenced (logged and evented once per reason). */
  private async awaitFencing(n: Notification): Promise<boolean> {
    const segment = this.deps.segments.byIndex(INDEX.uuid, n.status?.failoverSegmentUuid ?? '')[0];
    if (!segment?.spec.requireFencing || !this.deps.fencing) return false;
    let verdict: FencingVerdict;
    try {
      verdict = await this.deps.fencing(n, n.spec.hostname);
    } catch (err) {
      verdict = { proven: false, missing: `the fencing proof could not be read: ${(err as Error).message}` };
    }
    const uuid = n.status?.uuid;
    if (verdict.proven) {
      this.fencingNotes.delete(n.metadata.name ?? '');
      this.log.info({ notification: uuid, host: n.spec.hostname, proof: verdict.proof }, 'host proven fenced');
      return false;
    }
    const note = `Waiting for proof that host ${n.spec.hostname} is fenced before evacuating: ${verdict.missing}`;
    if (this.fencingNotes.get(n.metadata.name ?? '') !== note) {
      this.fencingNotes.set(n.metadata.name ?? '', note);
      this.log.warn({ notification: uuid, host: n.spec.hostname }, note);
      this.emit(n, 'Warning', EVENT_REASONS.waitingForFencing, note);
    }
    return true;
  }

  /** A decision that needs no workflow: one resourceVersion-checked write straight to the final status. */
  private async finishWithoutRun(n: Notification, plan: Extract<Plan, { kind: 'final' }>): Promise<void> {
    const stored = await this.casStatus(n, (s) => {
      s.phase = plan.status;
      if (plan.message !== undefined) s.message = plan.message;
      s.updatedAt = rfc3339Seconds(this.deps.clock.now());
    });
    const uuid = stored.status?.uuid;
    const level = plan.status === 'ignored' ? 'warn' : 'info';
    this.log[level]({ notification: uuid, type: n.spec.type, status: plan.status }, plan.reason);
    countFinalStatus(n.spec.type, plan.status);
    this.emit(stored, 'Normal', finalStatusReason(plan.status), plan.reason);
  }

  /**
   * The guarded transition into `running` (Masakari's "stored status is no
   * longer new → skip" guard, made atomic): new/error → running with a new
   * run number, or a take-over of a running run. Returns undefined when the
   * notification is not in the expected phase any more.
   */
  private async claimRun(
    n: Notification,
    token: string,
    mode: 'new' | 'retry' | 'resume',
  ): Promise<Notification | undefined> {
    const expected = mode === 'new' ? 'new' : mode === 'retry' ? 'error' : 'running';
    if (phaseOf(n) !== expected) return undefined;
    const key = n.metadata.name ?? '';
    const finalAttempt = mode === 'retry' || (mode === 'new' && this.lastChance.has(key));
    const now = this.deps.clock.now();
    const stored = await this.casStatus(n, (s, engine) => {
      if (mode !== 'resume') {
        s.phase = 'running';
        s.runs = (s.runs ?? 0) + 1;
        s.updatedAt = rfc3339Seconds(now);
        engine.finalAttempt = finalAttempt;
        engine.firstStartedAt ??= now.toISOString();
      }
      engine.owner = token;
    });
    const run = (stored.status?.runs ?? 1) - 1;
    const ctx = { notification: stored.status?.uuid, type: n.spec.type, run, owner: token };
    if (mode === 'resume') this.log.info(ctx, 'resuming an interrupted run');
    else if (mode === 'retry') this.log.info(ctx, 'periodic retry of a notification in error (its last attempt)');
    else this.log.info({ ...ctx, lastAttempt: finalAttempt }, 'notification processing started');
    this.emit(
      stored,
      'Normal',
      mode === 'resume' ? EVENT_REASONS.recoveryResumed : EVENT_REASONS.recoveryStarted,
      `Recovery run ${run} started by ${this.deps.identity}`,
    );
    return stored;
  }

  // ------------------------------------------------------------------ execution

  private spawn(
    n: Notification,
    token: string,
    resumed: boolean,
    plan: Plan | { kind: 'error'; reason: string },
    hostUuid: string,
  ): void {
    const key = n.metadata.name ?? '';
    const abort = new AbortController();
    const term = this.term?.signal;
    const graceful = this.term?.isGracefulStop ?? (() => false);
    const onTermEnd = (): void =>
      abort.abort(graceful() ? new HandedOver('engine stopping', true) : new HandedOver('leadership lost'));
    if (term?.aborted) onTermEnd();
    else term?.addEventListener('abort', onTermEnd, { once: true });
    const exec: Execution = { abort, hostUuid, done: Promise.resolve() };
    const holdsLease = this.term?.holdsLease ?? (() => false);
    const nova =
      this.deps.nova &&
      fenceNova(this.deps.nova, holdsLease, (err) => {
        if (!abort.signal.aborted) {
          this.log.warn({ notification: n.status?.uuid }, `${err.message}; cancelling the run`);
          abort.abort(new HandedOver('engine Lease no longer held'));
        }
      });
    exec.done = this.execute(n, token, resumed, plan, abort.signal, nova)
      .catch((err) => this.log.error({ err, notification: n.status?.uuid }, 'recovery execution crashed'))
      .finally(() => {
        term?.removeEventListener('abort', onTermEnd);
        this.executions.delete(key);
        this.releaseHost(hostUuid, key);
        if (this.term) this.deps.enqueue(key);
      });
    this.executions.set(key, exec);
  }

  private async execute(
    n: Notification,
    token: string,
    resumed: boolean,
    plan: Plan | { kind: 'error'; reason: string },
    signal: AbortSignal,
    nova: NovaClient | undefined,
  ): Promise<void> {
    const uuid = n.status?.uuid ?? '';
    const run = (n.status?.runs ?? 1) - 1;
    const log = this.log.child({ notification: uuid, type: n.spec.type, run });
    const writer = this.writer(n, ownsRun(token), signal, log);
    const requestId = `req-${randomUUID()}`;
    let workflow: Workflow | undefined;
    let outcome: Outcome;
    try {
      // A resumed run (or a retry) needs its whole journal, pages included, before the workflow reads it.
      await writer.load();
      if (resumed) await this.sweepLocks(writer, log, requestId, signal, nova);
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
        outcome = await this.runWorkflow(n, plan, run, writer, requestId, signal, log, nova);
      }
    } catch (err) {
      if (signal.aborted || err instanceof NotOwnerError)
        return this.cancelled(n, token, writer, signal, log, requestId, nova);
      if (err instanceof JournalWriteError) {
        log.error({ err }, 'journal write failed; the run will be taken over again');
        this.deps.enqueueAfter(n.metadata.name ?? '', RESUME_AFTER_WRITE_FAILURE_MS);
        return;
      }
      outcome = outcomeOf(workflow ?? 'host', uuid, err);
    }
    if (signal.aborted || writer.fatal) {
      if (writer.fatal instanceof JournalWriteError && !signal.aborted) {
        log.error({ err: writer.fatal }, 'journal write failed during the run; it will be taken over again');
        this.deps.enqueueAfter(n.metadata.name ?? '', RESUME_AFTER_WRITE_FAILURE_MS);
        return;
      }
      return this.cancelled(n, token, writer, signal, log, requestId, nova);
    }
    await this.sweepLocks(writer, log, requestId, signal, nova);
    await this.finish(n, writer, outcome, log);
  }

  private async runWorkflow(
    n: Notification,
    plan: Extract<Plan, { kind: 'workflow' }>,
    run: number,
    writer: NotificationStatusWriter,
    requestId: string,
    signal: AbortSignal,
    log: Logger,
    nova: NovaClient,
  ): Promise<Outcome> {
    const uuid = n.status?.uuid ?? '';
    const flags = new HaHostFlags({
      kube: this.deps.kube,
      namespace: this.deps.namespace,
      hosts: this.deps.hosts,
      clock: this.deps.clock,
      log,
      signal,
    });
    const host = this.deps.hosts.byIndex(INDEX.uuid, n.status?.sourceHostUuid ?? '')[0];
    const hostName = host?.spec.name ?? n.spec.hostname;
    if (plan.maintenance !== 'none') {
      // Every (re)processing sets maintenance before the workflow, whatever the outcome (Masakari).
      await flags.setOnMaintenance(hostName, plan.maintenance === 'on-and-unreserve');
      const h = this.deps.hosts.byIndex(INDEX.uuid, n.status?.sourceHostUuid ?? '')[0];
      if (h)
        this.deps.events.onHost(
          h,
          'Normal',
          EVENT_REASONS.hostOnMaintenance,
          `Set host ${hostName} on maintenance (notification ${uuid}).`,
        );
    }
    const segment = this.deps.segments.byIndex(INDEX.uuid, n.status?.failoverSegmentUuid ?? '')[0];
    const makeContext = (r: number): WorkflowContext => ({
      notification: {
        uuid,
        type: n.spec.type,
        hostname: hostName,
        payload: n.spec.payload ?? {},
        generatedTime: n.spec.generatedTime,
        segmentUuid: n.status?.failoverSegmentUuid ?? '',
        recoveryMethod: segment?.spec.recoveryMethod ?? 'auto',
      },
      run: r,
      nova,
      config: this.deps.config,
      clock: this.deps.clock,
      log: log.child({ run: r }),
      signal,
      requestId,
      ...createRunJournal(writer, r, this.deps.vmoveIds, this.deps.clock),
      hosts: flags,
    });
    const startFallbackRun: StartFallbackRun = async () => {
      const stored = await writer.mutate((s) => {
        s.runs = (s.runs ?? 0) + 1;
      });
      const next = (stored.status?.runs ?? 1) - 1;
      log.warn({ run: next }, 'starting a priority fallback run');
      return makeContext(next);
    };
    try {
      const ctx = makeContext(run);
      if (plan.workflow === 'instance') await runInstanceFailure(ctx);
      else if (plan.workflow === 'process') await runProcessFailure(ctx);
      else await this.deps.hostWorkflow(ctx, startFallbackRun);
      return outcomeOf(plan.workflow, uuid, undefined);
    } catch (err) {
      if (signal.aborted || err instanceof NotOwnerError || err instanceof JournalWriteError) throw err;
      return outcomeOf(plan.workflow, uuid, err);
    }
  }

  /** Writes the final status of a run (error on the last attempt becomes failed, Masakari §3.7). */
  private async finish(
    n: Notification,
    writer: NotificationStatusWriter,
    outcome: Outcome,
    log: Logger,
  ): Promise<void> {
    const engine = engineOf(structuredClone(writer.current().status ?? {}));
    const failed = outcome.status === 'error' && engine.finalAttempt === true;
    const status = failed ? 'failed' : outcome.status;
    const now = this.deps.clock.now();
    let stored: Notification;
    try {
      stored = await writer.mutate((s, e) => {
        s.phase = status;
        s.updatedAt = rfc3339Seconds(now);
        if (outcome.message !== undefined) s.message = outcome.message;
        if (outcome.status === 'error')
          e.lastError = outcome.detail ? `${outcome.reason} (${outcome.detail})` : outcome.reason;
      });
    } catch (err) {
      if (err instanceof NotOwnerError) {
        log.warn({ err }, 'final status not written: the run is no longer ours');
        return;
      }
      log.error({ err }, 'could not write the final status; the run will be taken over again');
      this.deps.enqueueAfter(n.metadata.name ?? '', RESUME_AFTER_WRITE_FAILURE_MS);
      return;
    }
    const uuid = n.status?.uuid;
    const fields = { status, reason: outcome.reason, ...(outcome.detail ? { detail: outcome.detail } : {}) };
    if (outcome.status === 'error')
      log.error(fields, `Failed to process notification '${uuid}'. Reason: ${outcome.reason}`);
    else log.info(fields, `notification ${status}: ${outcome.reason}`);
    if (failed)
      log.warn(`Periodic task 'process_unfinished_notifications': Notification ${uuid} exits with status: failed.`);
    const started = Date.parse(engine.firstStartedAt ?? '');
    countFinalStatus(n.spec.type, status, Number.isNaN(started) ? undefined : (now.getTime() - started) / 1000);
    const message = outcome.detail ? `${outcome.reason} (${outcome.detail})` : outcome.reason;
    this.emitServiceDisabled(stored);
    this.emit(
      stored,
      status === 'error' || status === 'failed' ? 'Warning' : 'Normal',
      finalStatusReason(status),
      message,
    );
  }

  /**
   * The run was cancelled. Handed over: the status stays `running` and the
   * next leader resumes and sweeps; on a graceful stop the servers are
   * unlocked now as well. Expired: the expiry task already wrote `failed`;
   * release the locks the run held now.
   */
  private async cancelled(
    n: Notification,
    token: string,
    writer: NotificationStatusWriter,
    signal: AbortSignal,
    log: Logger,
    requestId: string,
    nova: NovaClient | undefined,
  ): Promise<void> {
    const reason: unknown = signal.reason;
    if (reason instanceof HandedOver && reason.releaseLocks) {
      const deadline = AbortSignal.timeout(RELEASE_LOCKS_TIMEOUT_MS);
      const releaser = this.writer(writer, ownsRun(token), deadline, log);
      await this.refreshWriter(releaser, n);
      await this.sweepLocks(releaser, log, requestId, deadline, nova).catch((err) =>
        log.warn({ err }, 'could not release locks at shutdown'),
      );
      log.info('run handed over at shutdown; the servers it had locked were unlocked');
      return;
    }
    if (!(reason instanceof NotificationExpired)) {
      log.info(
        { reason: reason instanceof Error ? reason.message : String(reason) },
        'run cancelled; it resumes on the next leader',
      );
      return;
    }
    const term = this.term?.signal;
    if (!term) return;
    const sweeper = this.writer(
      writer,
      (x) => (phaseOf(x) === 'failed' ? undefined : `notification is '${phaseOf(x)}'`),
      term,
      log,
    );
    await this.refreshWriter(sweeper, n);
    await this.sweepLocks(sweeper, log, requestId, term, nova);
  }

  private async refreshWriter(w: NotificationStatusWriter, n: Notification): Promise<void> {
    const latest = this.deps.notifications.get(n.metadata.name ?? '');
    if (latest) w.reset(latest);
  }

  private async sweepLocks(
    writer: NotificationStatusWriter,
    log: Logger,
    requestId: string,
    signal: AbortSignal,
    nova: NovaClient | undefined,
  ): Promise<void> {
    await writer.load();
    const current = writer.current();
    if (!nova || unreleasedLocks(current).length === 0) return;
    const result = await sweepLeftoverLocks(
      current,
      nova,
      async (server) => {
        await writer.mutate((_s, e) => {
          const seq = (e.effectSeq ?? 0) + 1;
          e.effectSeq = seq;
          const effects = (e.effects ??= {});
          const data = { ...effects[lockKey(server)]?.data, unlockedBy: 'engine-sweep' };
          effects[lockKey(server)] = { state: 'done', at: this.deps.clock.now().toISOString(), seq, data };
        });
      },
      log,
      { requestId, signal },
    );
    if (result.unlocked.length > 0) {
      this.deps.events.onNotification(
        writer.current(),
        'Normal',
        EVENT_REASONS.serversUnlocked,
        `Unlocked servers left locked by an interrupted run: ${result.unlocked.join(', ')}`,
      );
    }
    if (result.failed.length > 0) {
      this.deps.events.onNotification(
        writer.current(),
        'Warning',
        EVENT_REASONS.unlockFailed,
        `Could not unlock servers (retried at the next sweep): ${result.failed.map((f) => `${f.server}: ${f.error}`).join('; ')}`,
      );
    }
  }

  // ------------------------------------------------------------------ periodic tasks

  /**
   * Masakari's _process_unfinished_notifications: every `error` gets one
   * retry, every `new` older than retry_notification_new_status_interval one
   * attempt; an error on that attempt ends `failed`. Newest first.
   */
  processUnfinished(): void {
    if (!this.term) return;
    const now = this.deps.clock.now().getTime();
    const newAge = this.deps.config.DEFAULT.retry_notification_new_status_interval * 1000;
    const candidates = this.deps.notifications
      .list()
      .filter(
        (n) =>
          isRunnableNotification(n) && !n.metadata.deletionTimestamp && !this.executions.has(n.metadata.name ?? ''),
      )
      .filter((n) => {
        const phase = phaseOf(n);
        if (phase === 'error') return true;
        if (phase !== 'new') return false;
        // Held at the fencing gate and looked at every few seconds: not stuck.
        if (this.fencingNotes.has(n.metadata.name ?? '')) return false;
        const generated = parseGeneratedTime(n.spec.generatedTime);
        return !Number.isNaN(generated) && now - generated > newAge;
      })
      .sort(newestNotificationFirst);
    for (const n of candidates) {
      const key = n.metadata.name ?? '';
      this.lastChance.add(key);
      this.log.info(
        { notification: n.status?.uuid, status: phaseOf(n) },
        phaseOf(n) === 'error'
          ? 'periodic task: retrying a notification in error once'
          : 'periodic task: processing a notification stuck in new',
      );
      this.deps.enqueue(key);
    }
  }

  /**
   * Masakari's _check_expired_notifications: new/running/error notifications
   * whose generated_time is older than notifications_expired_interval become
   * `failed`. Unlike upstream, a run still in flight is cancelled and the
   * servers it locked are unlocked.
   */
  async checkExpired(): Promise<void> {
    if (!this.term) return;
    const now = this.deps.clock.now().getTime();
    const maxAge = this.deps.config.DEFAULT.notifications_expired_interval * 1000;
    for (const n of this.deps.notifications.list()) {
      const phase = phaseOf(n);
      if (!isRunnableNotification(n) || !['new', 'running', 'error'].includes(phase)) continue;
      const generated = parseGeneratedTime(n.spec.generatedTime);
      if (Number.isNaN(generated) || now - generated <= maxAge) continue;
      await this.expire(n).catch((err) =>
        this.log.warn({ err, notification: n.status?.uuid }, 'could not expire notification; next pass retries'),
      );
    }
  }

  private async expire(n: Notification): Promise<void> {
    const key = n.metadata.name ?? '';
    const uuid = n.status?.uuid ?? '';
    const guard: StatusGuard = (x) =>
      ['new', 'running', 'error'].includes(phaseOf(x)) ? undefined : `notification is '${phaseOf(x)}'`;
    const term = this.term?.signal;
    if (!term) return;
    const writer = this.writer(n, guard, term, this.log);
    let stored: Notification;
    try {
      stored = await writer.mutate((s, e) => {
        s.phase = 'failed';
        s.updatedAt = rfc3339Seconds(this.deps.clock.now());
        e.lastError = `Notification ${uuid} is expired.`;
      });
    } catch (err) {
      if (err instanceof NotOwnerError) return;
      throw err;
    }
    this.log.warn(
      { notification: uuid, previous: phaseOf(n) },
      `Periodic task 'check_expired_notifications': Notification ${uuid} is expired.`,
    );
    countFinalStatus(n.spec.type, 'failed');
    this.emit(stored, 'Warning', EVENT_REASONS.recoveryExpired, `Notification ${uuid} is expired.`);
    this.lastChance.delete(key);
    const exec = this.executions.get(key);
    if (exec) {
      exec.abort.abort(new NotificationExpired(uuid));
      await exec.done;
    } else if (phaseOf(n) === 'running') {
      // Interrupted earlier and never resumed: its locks are still ours to release.
      const sweeper = this.writer(
        writer,
        (x) => (phaseOf(x) === 'failed' ? undefined : `notification is '${phaseOf(x)}'`),
        term,
        this.log,
      );
      await this.sweepLocks(
        sweeper,
        this.log.child({ notification: uuid }),
        `req-${randomUUID()}`,
        term,
        this.fencedNova(),
      );
    }
  }

  // ------------------------------------------------------------------ helpers

  /** Nova for work outside a run (the expiry sweep): side effects only while the Lease is held. */
  private fencedNova(): NovaClient | undefined {
    const holdsLease = this.term?.holdsLease ?? (() => false);
    return this.deps.nova && fenceNova(this.deps.nova, holdsLease, (err) => this.log.warn(err.message));
  }

  /** A writer for a notification as stored (from the cache), or taking over from another writer of it. */
  private writer(
    from: Notification | NotificationStatusWriter,
    guard: StatusGuard,
    signal: AbortSignal,
    log: Logger,
  ): NotificationStatusWriter {
    const handover = from instanceof NotificationStatusWriter;
    return new NotificationStatusWriter({
      kube: this.deps.kube,
      namespace: this.deps.namespace,
      initial: handover ? from.storedObject() : from,
      ...(handover ? { pages: from.journalPages() } : {}),
      guard,
      clock: this.deps.clock,
      log,
      signal,
      onWritten: (x) => this.deps.notifications.upsertLocal(x),
    });
  }

  /** One resourceVersion-checked status patch from the cached object; throws the 409 to the caller. */
  private async casStatus(
    n: Notification,
    mutate: (s: NotificationStatusBlock, e: EngineBookkeeping) => void,
  ): Promise<Notification> {
    const status = structuredClone(n.status ?? {});
    mutate(status, engineOf(status));
    syncNotificationConditions(status, this.deps.clock.now(), n.metadata.generation);
    const patch = statusPatch(
      n.status as Record<string, unknown> | undefined,
      status as Record<string, unknown>,
      n.metadata.resourceVersion,
    );
    const stored = await this.deps.kube.jsonPatch<Notification>(
      RESOURCES.notifications,
      this.deps.namespace,
      n.metadata.name ?? '',
      patch,
      { fieldManager: FIELD_MANAGERS.engine, status: true },
    );
    this.deps.notifications.upsertLocal(stored);
    return stored;
  }

  /** True when the notification is gone or being deleted on the API server (not merely finished). */
  private async deletedOnServer(key: string): Promise<boolean> {
    try {
      const n = await this.deps.kube.get<Notification>(RESOURCES.notifications, this.deps.namespace, key);
      return !!n.metadata.deletionTimestamp;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  }

  private async refresh(key: string): Promise<void> {
    try {
      this.deps.notifications.upsertLocal(
        await this.deps.kube.get<Notification>(RESOURCES.notifications, this.deps.namespace, key),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** ServiceDisabled when the run that just ended disabled the host's compute service (its journal says so). */
  private emitServiceDisabled(n: Notification): void {
    const run = (n.status?.runs ?? 1) - 1;
    const disabled = n.status?.recoveryWorkflowDetails?.find(
      (e) => SERVICE_DISABLING_TASKS.has(e.name) && e.state === 'SUCCESS' && (e.run ?? 0) === run,
    );
    if (!disabled) return;
    this.emit(n, 'Normal', EVENT_REASONS.serviceDisabled, `Disabled the compute service of host ${n.spec.hostname}.`);
  }

  /** A phase Event on the Notification and, when its source host is known, on the HaHost too. */
  private emit(n: Notification, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.deps.events.onNotification(n, type, reason, message);
    const host = this.deps.hosts.byIndex(INDEX.uuid, n.status?.sourceHostUuid ?? '')[0];
    if (host)
      this.deps.events.onHost(host, type, reason, `Notification ${n.status?.uuid} (${n.spec.type}): ${message}`);
  }

  private releaseHost(hostUuid: string, key: string): void {
    for (const waiting of this.gate.release(hostUuid, key)) this.deps.enqueue(waiting);
  }
}

/** Masakari's default order for the periodic task: created_at desc, id desc. */
function newestNotificationFirst(a: Notification, b: Notification): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return tb - ta;
  return (b.status?.id ?? 0) - (a.status?.id ?? 0);
}
