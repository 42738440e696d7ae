// The notification state machine (Masakari engine/manager.py), keyed by
// Notification name and driven by the runtime's Controller on the leader.
//
//   new ──(segment disabled)──────────────────────────────▶ ignored  [message 'Recovery aboart: ...']
//   new ──(pure decision: bad VM event, host_status, STARTED)▶ ignored | finished
//   new ──(resourceVersion-checked)──▶ running ──▶ finished | ignored | error
//   error ──(periodic, once)──▶ running ──▶ finished | ignored | failed
//   new older than retry_notification_new_status_interval ──(periodic, once)──▶ running ──▶ … | failed
//   new | running | error older than notifications_expired_interval ──▶ failed (a running run is cancelled)
//   new | running | last-chance error whose generated_time is stale or too far ahead, at first look ──▶ failed
//
// reconcile() only decides, and never blocks on a workflow: it claims a run
// (src/engine/run/claim.ts) and hands it to the run executor
// (src/engine/run/executor.ts), whose end enqueues the key again; a later
// look is asked for by returning { requeueAfterMs }. The periodic tasks are
// in src/engine/periodic/, the workflows behind the RecoveryDriver.
// Crash safety: status.phase is `running` with status.runs and
// status.engine.owner (a fencing token) for as long as a run is in flight;
// a new leader that finds `running` without a run of its own takes the run
// over with a resourceVersion-checked write of its token (any older owner's
// next write then fails its guard) and re-enters the workflow with the same
// run number, whose journal says which steps are done.

import { randomUUID } from 'node:crypto';
import { isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import type { Notification } from '../model/types.ts';
import { deleteYieldedNotification, readByUuidInto, sealedIntakeStanding } from '../store/index.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { admitted, phaseOf } from './intake/admitted-notification.ts';
import type { AdmittedNotification } from './intake/admitted-notification.ts';
import { BmcFence } from './gates/bmc-fence.ts';
import { FENCING_RECHECK_MS, FencingWait } from './gates/fencing-wait.ts';
import { BRAKE_RECHECK_MS, RecoveryBrake } from './gates/recovery-brake.ts';
import { SourceHostMutex } from './run/source-host-mutex.ts';
import { processUnfinished } from './periodic/notification-tasks.ts';
import { checkExpired, failIfStale } from './periodic/expiry.ts';
import type { NotificationTaskScope } from './periodic/notification-tasks.ts';
import { planOf, segmentOf, sourceHostOf } from './deps/lookups.ts';
import type { ProcessorDeps } from './deps/processor-deps.ts';
import type { LeadershipTerm } from './deps/leadership-term.ts';
import { claimRun, finishWithoutRun } from './run/claim.ts';
import type { RunMode } from './run/claim.ts';
import { HandedOver } from './run/cancellation.ts';
import { RunExecutor } from './run/executor.ts';
import { NotOwnerError } from './status/writer.ts';

/** How often a notification whose host or segment is not (yet) in the cache is looked at again. */
const MISSING_REFERENCE_RECHECK_MS = 15_000;
/** How often a sealed notification whose duplicate claim is not decided yet is looked at again. */
const SEALED_CLAIM_RECHECK_MS = 1_000;

export class NotificationProcessor {
  private readonly deps: ProcessorDeps;
  private readonly sourceHostMutex = new SourceHostMutex();
  private readonly fencingWait: FencingWait;
  private readonly bmcFence: BmcFence;
  private readonly brake: RecoveryBrake;
  private readonly runs: RunExecutor;
  /** Keys the periodic task picked for their single last attempt (error retry, stuck new). */
  private readonly lastChance = new Set<string>();
  /** Who waits for the end of a last attempt (processUnfinished runs them one at a time). */
  private readonly attemptWaiters = new Map<string, Array<() => void>>();
  private term: LeadershipTerm | undefined;
  private readonly tasks: NotificationTaskScope;
  /** Sealed notifications whose duplicate claim was found to stand behind them (sealedIntakeStanding). */
  private readonly sealConfirmed = new Set<string>();

  constructor(deps: ProcessorDeps) {
    this.deps = { ...deps, log: deps.log.child({ component: 'engine' }) };
    this.fencingWait = new FencingWait(this.deps);
    this.bmcFence = new BmcFence(this.deps, () => this.term);
    this.runs = new RunExecutor(this.deps, () => this.term);
    this.brake = new RecoveryBrake(this.deps, () => this.runs.inFlight());
    this.tasks = {
      d: this.deps,
      term: () => this.term,
      runs: this.runs,
      lastChance: this.lastChance,
      fencingWait: this.fencingWait,
      bmcFence: this.bmcFence,
      brake: this.brake,
      attemptSettled: (key) => this.attemptSettled(key),
    };
  }

  /**
   * Called when this process becomes leader; `signal` aborts when it stops
   * leading. `isGracefulStop` tells, when that happens, whether it is this
   * process shutting down (still holding the Lease) rather than a lost Lease.
   * `holdsLease` is asked right before every Nova side effect of a run
   * (src/runtime/lease-fence.ts): false cancels the run instead of sending the call.
   */
  startLeading(signal: AbortSignal, o: { isGracefulStop?: () => boolean; holdsLease?: () => boolean } = {}): void {
    this.term = {
      token: `${this.deps.identity}#${randomUUID().slice(0, 8)}`,
      signal,
      isGracefulStop: o.isGracefulStop ?? (() => false),
      holdsLease: o.holdsLease ?? (() => true),
    };
    this.deps.log.info({ owner: this.term.token }, 'engine leading: resuming and processing notifications');
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
    await this.runs.cancelAll(() => new HandedOver(why, o.releaseLocks ?? false));
    this.sourceHostMutex.clear();
    this.lastChance.clear();
    this.fencingWait.clear();
    this.bmcFence.clear();
    this.brake.clear();
    for (const waiters of this.attemptWaiters.values()) for (const resolve of waiters) resolve();
    this.attemptWaiters.clear();
  }

  /** Resolves once every run in flight has ended (tests, graceful stop). */
  whenIdle(): Promise<void> {
    return this.runs.whenIdle();
  }

  isRunning(name: string): boolean {
    return this.runs.isRunning(name);
  }

  /** Masakari's _process_unfinished_notifications (src/engine/periodic/notification-tasks.ts); resolves when its last attempt is over. */
  processUnfinished(): Promise<void> {
    return processUnfinished(this.tasks);
  }

  /** Masakari's _check_expired_notifications (src/engine/periodic/expiry.ts). */
  checkExpired(): Promise<void> {
    return checkExpired(this.tasks);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    try {
      return await this.decide(key);
    } finally {
      this.settleAttempt(key);
    }
  }

  /** Resolves once `key` has no last attempt pending and no run in flight. */
  private attemptSettled(key: string): Promise<void> {
    if (this.attemptOver(key)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.attemptWaiters.get(key) ?? [];
      waiters.push(resolve);
      this.attemptWaiters.set(key, waiters);
    });
  }

  private attemptOver(key: string): boolean {
    return !this.lastChance.has(key) && !this.runs.isRunning(key);
  }

  /** Called after every decision on `key` (a run's end enqueues one): wakes whoever waits for its attempt. */
  private settleAttempt(key: string): void {
    const waiters = this.attemptWaiters.get(key);
    if (!waiters || !this.attemptOver(key)) return;
    this.attemptWaiters.delete(key);
    for (const resolve of waiters) resolve();
  }

  private async decide(key: string): Promise<ReconcileResult> {
    const term = this.term;
    if (!term || term.signal.aborted) return {};
    const cached = this.deps.notifications.get(key);
    if (!cached || cached.metadata.deletionTimestamp) return this.gone(key, cached);
    // Created by kubectl: the store's reconciler assigns uuid and source host first; its update event brings us back.
    const n = admitted(cached);
    if (!n || this.runs.isRunning(key)) return {};
    const phase = phaseOf(n);
    // Freshness before anything else: a stale or replayed notification ends `failed` without a claim read, a run,
    // a fencing wait or a Nova call (src/domain/freshness.ts).
    const startable = phase === 'new' || phase === 'running' || (phase === 'error' && this.lastChance.has(key));
    if (startable && (await failIfStale(this.tasks, n))) return {};
    if (phase === 'new' && n.status.admittedBySeal) {
      const held = await this.sealedIntake(n);
      if (held) return held;
    }
    if (phase === 'new') return this.begin(n, term, 'new');
    if (phase === 'error' && this.lastChance.has(key)) return this.begin(n, term, 'retry');
    if (phase !== 'running') {
      // Ended (a fence failing until the notification expired, say): nothing left to fence or to count as held.
      if (phase !== 'error') this.bmcFence.forget(key);
      return {};
    }
    const wait = this.runs.resumeDelay(key);
    return wait > 0 ? { requeueAfterMs: wait } : this.begin(n, term, 'resume');
  }

  /**
   * The cache holds unfinished notifications only: gone from it may mean
   * finished (often by the run itself, which then ends on its own). Only a
   * real delete cancels a run.
   */
  private async gone(key: string, cached: Notification | undefined): Promise<ReconcileResult> {
    this.lastChance.delete(key);
    this.sealConfirmed.delete(key);
    this.fencingWait.forget(key);
    this.bmcFence.forget(key);
    this.brake.forget(key);
    this.runs.forget(key);
    if (this.runs.isRunning(key) && (cached || (await this.deletedOnServer(key)))) {
      void this.runs.cancel(key, new NotOwnerError(`${key}: notification was deleted`));
    }
    return {};
  }

  /**
   * A notification only its seal admits (src/store/admission/seal.ts) was created
   * alongside its duplicate claim: it runs once the claim stands behind it. One
   * that lost its claim's race is deleted, as its creator does
   * (src/store/admission/notification-intake.ts); undefined: go on.
   */
  private async sealedIntake(n: AdmittedNotification): Promise<ReconcileResult | undefined> {
    const key = n.metadata.name;
    if (this.sealConfirmed.has(key)) return undefined;
    const window = this.deps.config.DEFAULT.duplicate_notification_detection_interval;
    const standing = await sealedIntakeStanding(this.deps.kube, this.deps.namespace, n, window, this.deps.clock.now());
    if (standing === 'accepted') {
      this.sealConfirmed.add(key);
      return undefined;
    }
    if (standing === 'undecided') return { requeueAfterMs: SEALED_CLAIM_RECHECK_MS };
    this.deps.log.info(
      { notification: n.status.uuid },
      'a duplicate that lost its claim to an earlier notification; deleting it, as its creator does',
    );
    await deleteYieldedNotification(this.deps.kube, this.deps.namespace, n);
    return {};
  }

  /** Starts (new, retry) or takes over (resume) a run, or parks the key behind its host's running recovery. */
  private async begin(n: AdmittedNotification, term: LeadershipTerm, mode: RunMode): Promise<ReconcileResult> {
    const key = n.metadata.name;
    const hostUuid = n.status.sourceHostUuid;
    if (!this.sourceHostMutex.tryAcquire(hostUuid, key)) {
      this.deps.log.info(
        { notification: n.status.uuid, holder: this.sourceHostMutex.holder(hostUuid) },
        'waiting: another notification of the same host is being processed',
      );
      return {};
    }
    let handedToExecutor = false;
    try {
      let plan = planOf(this.deps, n);
      if (plan.kind === 'error' && mode === 'new' && !this.lastChance.has(key)) {
        // Masakari leaves a notification whose host cannot be loaded `new`; the periodic task then gives
        // it its one attempt. Until then, look again in case our cache was just behind.
        this.deps.log.warn(
          { notification: n.status.uuid },
          `${plan.reason} Notification left new until the periodic task retries it.`,
        );
        return { requeueAfterMs: MISSING_REFERENCE_RECHECK_MS };
      }
      if (plan.kind === 'final' && mode !== 'resume') {
        this.lastChance.delete(key);
        await finishWithoutRun(this.deps, n, plan);
        return {};
      }
      // Brakes on mass failure, before the fencing gate: a recovery that will not start asks nobody for proof
      // or approval of fencing. A resumed run passed them already; being held is not an attempt.
      const released =
        plan.kind === 'workflow' && mode !== 'resume' ? await this.brake.check(n, plan.workflow === 'host') : undefined;
      if (released?.held) {
        this.lastChance.delete(key);
        return { requeueAfterMs: BRAKE_RECHECK_MS };
      }
      // Fencing: a resumed run passed it already. Waiting for it is not an attempt: the run that follows is the
      // notification's first, and an error in it still earns the retry. A host with a BMC is powered off through
      // it first (src/engine/gates/bmc-fence.ts), whatever requireFencing says, and that proof is the one
      // requireFencing waits for; a host without one waits for the requireFencing precondition's proofs.
      if (plan.kind === 'workflow' && plan.workflow === 'host' && mode !== 'resume') {
        const bmc = this.bmcFence.gate(n);
        if (bmc.kind === 'held') {
          this.lastChance.delete(key);
          return { requeueAfterMs: bmc.requeueAfterMs };
        }
        if (bmc.kind === 'none' && (await this.fencingWait.holds(n))) {
          this.lastChance.delete(key);
          return { requeueAfterMs: FENCING_RECHECK_MS };
        }
      }
      const finalAttempt = mode === 'retry' || (mode === 'new' && this.lastChance.has(key));
      // A cache that missed the host or segment (a watch behind after an API server restart) must not be
      // what fails a notification: before the error plan is run, ask the API server itself.
      if (plan.kind === 'error' && (await this.reloadReferences(n))) plan = planOf(this.deps, n);
      const stored = await claimRun(this.deps, n, term.token, mode, finalAttempt, released?.release);
      if (!stored) return {};
      this.bmcFence.claimed(key);
      this.lastChance.delete(key);
      handedToExecutor = true;
      this.runs.start({ n: stored, term, resumed: mode === 'resume', plan, onEnd: () => this.runEnded(hostUuid, key) });
      return {};
    } catch (err) {
      if (!isConflict(err)) throw err;
      // Someone wrote the notification since our cache saw it: decide again on the newer version.
      this.deps.log.debug({ notification: key }, 'notification changed underneath; re-evaluating');
      await this.refresh(key);
      this.deps.enqueue(key);
      return {};
    } finally {
      this.brake.settle(key);
      if (!handedToExecutor) this.releaseHost(hostUuid, key);
    }
  }

  /**
   * Reads the notification's source host and segment from the API server (by
   * their uuid label) into the caches; true when it found one the cache did
   * not have. Called only before a missing reference would fail a
   * notification, so it costs at most two small lists per such notification.
   */
  private async reloadReferences(n: AdmittedNotification): Promise<boolean> {
    const { kube, namespace, hosts, segments } = this.deps;
    const host =
      !sourceHostOf(this.deps, n) &&
      (await readByUuidInto(kube, namespace, RESOURCES.hosts, n.status.sourceHostUuid, hosts));
    const segment =
      !segmentOf(this.deps, n) &&
      (await readByUuidInto(kube, namespace, RESOURCES.segments, n.status.failoverSegmentUuid, segments));
    if (host || segment) {
      this.deps.log.info({ notification: n.status.uuid }, 'the cache was missing its host or segment: re-read');
    }
    return host || segment;
  }

  private runEnded(hostUuid: string, key: string): void {
    this.releaseHost(hostUuid, key);
    if (!this.term) return;
    this.deps.enqueue(key);
    this.wakeHeld();
  }

  /** Looks at every notification held by the brakes again: a run ended (the engine's host watch enqueues heldKeys). */
  wakeHeld(): void {
    if (!this.term) return;
    for (const key of this.brake.heldKeys()) this.deps.enqueue(key);
  }

  /** The notifications the brakes on mass failure hold now. */
  heldKeys(): string[] {
    return this.brake.heldKeys();
  }

  private releaseHost(hostUuid: string, key: string): void {
    for (const waiting of this.sourceHostMutex.release(hostUuid, key)) this.deps.enqueue(waiting);
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
}
