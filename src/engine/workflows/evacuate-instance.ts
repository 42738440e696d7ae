// One instance's evacuation: Masakari's `_evacuate_and_confirm`
// (masakari/engine/drivers/taskflow/host_failure.py), made crash-safe and exactly-once.
//
// Upstream behaviour kept: lock the server unless someone already locked it;
// the reset-state rules and the stop-after decision per vm_state/task_state;
// vmove pending → ongoing (start_time) → succeeded | failed ("Failed reason:
// timeout." or the error text); end_time always; stopped instances stay
// stopped, error instances end in error again; unlock only what we locked.
//
// Deliberate differences:
// - B3: everything, including the first GET and the lock, runs inside the
//   error handling, so a failure there fails the move instead of leaving it
//   pending. Masakari's two initial GETs collapse into one.
// - B4: a failing stop-after-evacuation reports Nova's error text.
// - B11: "has the server left the failed host" compares the compute SERVICE
//   host (OS-EXT-SRV-ATTR:host, the namespace of source_host) instead of the
//   hypervisor node name, and also waits for task_state to clear, so a rebuild
//   still in progress is never confirmed. dest_host records the service host
//   too (falling back to the node name only when Nova hides the host), so
//   source_host and dest_host are comparable.
// - Waiting is polling with backoff (first look after 100 ms, verify_interval
//   as the cap) bounded by wait_period_after_evacuation / _after_power_off;
//   once the attempt has seen one evacuation through, the first look is timed
//   just before the fastest observed evacuation (evacuation-polling.ts).
// - Exactly once. Before the reset-state or evacuate call we journal
//   `evacuate:<uuid>` (intended) with the source host, the reserved host
//   attempt, the ORIGINAL states (so a resumed run still knows an instance
//   was active before we reset it to error) and the evacuation migrations
//   Nova already had for the server (listed together with the first GET).
//   Before re-issuing an evacuate that was intended earlier we ask Nova what
//   happened (prior-evacuation.ts): the server already on another host → confirm it; task_state
//   rebuilding or an evacuation migration from the source that is not among
//   those listed before the intent → wait for it; such a migration that
//   failed → the move fails (same attempt) or the next attempt may evacuate
//   again. Which migration is ours is decided by Nova's own records, never by
//   comparing this process's clock with Nova's created_at: a skewed clock
//   would miss a failed migration (and evacuate again) or take an older one
//   for ours. Only when none holds is evacuate sent
//   again. A server that is no longer on the failed host is never evacuated.
//   The same questions are asked right after an evacuate that got no answer
//   or a 409 (acceptedDespite): a lost response is not taken for a refusal,
//   nor is Nova's refusal because a deposed leader's evacuate got there first.
// - The move goes ongoing (start_time) together with those intents, just
//   before the lock, rather than right before the evacuate call: one durable
//   write instead of three (see run()). A failure before the evacuate call
//   (lock, reset-state) clears start_time again, so the failed move reads as
//   Masakari's does.
// - Locks: `lock:<uuid>` is journalled (intended) BEFORE the lock call; after
//   the unlock we mark it done and then record `unlock:<uuid>` done (the
//   engine core's convention, src/engine/nova/server-locks.ts: a lock is released when a
//   newer unlock record exists). A run killed in between leaves a record that
//   the engine core's sweep or the resumed run uses to unlock.

import type { NovaMigration, NovaServer } from '../../openstack/types.ts';
import type { VMoveRecord } from '../../model/types.ts';
import type { WorkflowContext } from './context.ts';
import {
  errorText,
  evacuateKey,
  evacuationOutcome,
  InstanceEvacuateFailed,
  migrationKey,
  planEvacuation,
  serviceHost,
  SHUTDOWN,
  stateAtEvacuation,
  vmoveFailureText,
} from './evacuation-rules.ts';
import type { EvacuateIntent, EvacuationResult } from './evacuation-rules.ts';
import { settleSchedule } from './evacuation-polling.ts';
import { acceptedDespite, evacuationMigrations, inspectPriorEvacuation } from './prior-evacuation.ts';
import type { NovaCall } from './prior-evacuation.ts';
import { serverLockKey, serverUnlockKey, unlockWithRetry } from '../nova/server-locks.ts';
import { PollTimeout, pollUntil } from '../../time/poll.ts';
import { rfc3339Micro } from '../../time/format.ts';

/** Where this attempt sends instances: Nova's scheduler ('auto') or one reserved host. */
export interface EvacuationTarget {
  /** 'auto', or the reserved host's name: identifies the attempt within a run. */
  attempt: string;
  /** Target host for the evacuate call; undefined lets Nova's scheduler pick. */
  host: string | undefined;
}

export interface EvacuationHooks {
  /**
   * Counts evacuations by result: the engine component passes countEvacuation
   * from src/engine/telemetry/metrics.ts (masakari_evacuations_total).
   */
  onEvacuation?: (result: EvacuationResult) => void;
}

export class EvacuationProcedure {
  private readonly call: NovaCall;
  /** Fastest evacuation this attempt has watched from call to confirmation (tunes the first poll). */
  private fastestMs: number | undefined;

  constructor(
    private readonly ctx: WorkflowContext,
    private readonly target: EvacuationTarget,
    private readonly hooks: EvacuationHooks,
  ) {
    this.call = { requestId: ctx.requestId, signal: ctx.signal };
  }

  /**
   * Whether this attempt still has to work on the move: not when it already
   * succeeded, nor when this very attempt already failed it (a resumed run
   * must not retry what it failed before the crash). A failed move carrying
   * this attempt's intent was failed by this attempt, because a retry puts the
   * move back to pending before it journals its own intent.
   */
  needsWork(move: VMoveRecord): boolean {
    if (move.status === 'succeeded') return false;
    if (move.status !== 'failed') return true;
    return !this.intendedByThisAttempt(move);
  }

  /**
   * Whether this attempt already announced the move ("Evacuation of instance
   * started"): its intent for this run and attempt is journalled, and the
   * announcement rides along with that first write. A run resumed after a
   * lost lease or a crash then picks the evacuation up without a second
   * announcement, so progress_details holds one "started" line per instance.
   */
  announced(move: VMoveRecord): boolean {
    return this.intendedByThisAttempt(move);
  }

  /** Whether the move's journalled evacuate intent is this run's and this attempt's. */
  private intendedByThisAttempt(move: VMoveRecord): boolean {
    const intent = this.ctx.effects.get(evacuateKey(move.instanceUuid))?.data as EvacuateIntent | undefined;
    return intent !== undefined && intent.run === this.ctx.run && intent.attempt === this.target.attempt;
  }

  /**
   * Runs the whole procedure for one move; resolves with its result, rejects
   * only when the run is cancelled (the move is then left for the resumed run).
   *
   * Journal writes are grouped so that one instance costs two sequential
   * status writes, not eight: everything that must be durable before the
   * first side effect (the lock intent, the evacuate intent, the move going
   * ongoing) goes out as one batch, and so does everything after the unlock
   * (the move's final state, the evacuate and lock records). The engine
   * core's status writer merges mutations issued together into one write.
   */
  async run(move: VMoveRecord): Promise<EvacuationResult> {
    const { ctx } = this;
    const uuid = move.instanceUuid;
    const sourceHost = move.sourceHost ?? ctx.notification.hostname;
    let ownLock = false;
    let intent: EvacuateIntent | undefined;
    // Masakari sets start_time right before the evacuate call: a move that fails on the lock or the
    // reset-state call ends failed without one. Ours is written earlier (batched with the intents), so
    // it is cleared again when the failure came before the evacuation started.
    let evacuationStarted = false;
    let result: { status: EvacuationResult; destHost?: string | null; message?: string; startTime?: null };
    try {
      if (move.status === 'failed') {
        // A retry with the next reserved host: back to pending first, so a crash before this attempt's
        // intent is journalled is not mistaken for this attempt's failure (see needsWork).
        await ctx.vmoves.update(move.uuid, {
          status: 'pending',
          startTime: null,
          endTime: null,
          message: null,
          destHost: null,
        });
      }
      const prior = ctx.effects.get(evacuateKey(uuid));
      const priorIntent = prior?.data as EvacuateIntent | undefined;
      const sameAttempt =
        prior?.state === 'intended' &&
        priorIntent !== undefined &&
        priorIntent.run === ctx.run &&
        priorIntent.attempt === this.target.attempt;
      const [server, migrations] = await Promise.all([
        ctx.nova.getServer(uuid, this.call),
        evacuationMigrations(ctx, this.call, uuid, sourceHost),
      ]);
      const seen = inspectPriorEvacuation(server, sourceHost, priorIntent, migrations);
      const planned = sameAttempt ? priorIntent : this.newIntent(server, sourceHost, priorIntent, migrations);
      intent = planned;
      const lock = this.lockDecision(server);
      ownLock = lock.ours;
      await Promise.all([
        lock.call
          ? ctx.effects.intend(serverLockKey(uuid), { run: ctx.run, at: ctx.clock.now().toISOString() })
          : undefined,
        sameAttempt ? undefined : ctx.effects.intend(evacuateKey(uuid), { ...planned }),
        this.markOngoing(move, sameAttempt),
      ]);
      if (lock.call) await ctx.nova.lockServer(uuid, this.call);

      let confirmed: NovaServer;
      if (seen === 'moved' || seen === 'in-progress') {
        evacuationStarted = true;
        ctx.log.info(
          { instance: uuid, seen },
          'Evacuation already under way or done in Nova; confirming instead of evacuating',
        );
        confirmed = await this.confirm(uuid, sourceHost, stateAtEvacuation(planned), true);
      } else if (seen === 'failed' && sameAttempt) {
        evacuationStarted = true;
        throw new InstanceEvacuateFailed(uuid);
      } else {
        if (
          planned.needsReset &&
          !(server['OS-EXT-STS:vm_state'] === 'error' && server['OS-EXT-STS:task_state'] === null)
        ) {
          await ctx.nova.resetState(uuid, 'error', this.call);
        }
        evacuationStarted = true;
        try {
          await ctx.nova.evacuate(uuid, this.target.host, this.call);
        } catch (err) {
          if (!(await acceptedDespite(ctx, this.call, err, uuid, sourceHost, planned))) throw err;
        }
        const sent = ctx.clock.now().getTime();
        confirmed = await this.confirm(uuid, sourceHost, stateAtEvacuation(planned), false, this.fastestMs);
        const took = ctx.clock.now().getTime() - sent;
        this.fastestMs = this.fastestMs === undefined ? took : Math.min(this.fastestMs, took);
      }
      confirmed = await this.restorePowerState(uuid, planned, confirmed);
      result = {
        status: 'succeeded',
        destHost: serviceHost(confirmed) ?? confirmed['OS-EXT-SRV-ATTR:hypervisor_hostname'],
      };
    } catch (err) {
      // A cancelled run does not unlock here: whatever cancelled it sweeps the journalled lock
      // (run/cancellation.ts) or the engine that takes the run over does, before re-entering.
      if (ctx.signal.aborted) throw err;
      const message = err instanceof PollTimeout ? 'Failed reason: timeout.' : vmoveFailureText(err);
      ctx.log.warn({ instance: uuid, err: errorText(err) }, `Evacuation of instance '${uuid}' failed: ${message}`);
      result = { status: 'failed', message, ...(evacuationStarted ? {} : { startTime: null }) };
    }

    const unlocked = ownLock ? await this.unlock(uuid) : false;
    const at = ctx.clock.now().toISOString();
    const { status, ...rest } = result;
    await Promise.all([
      ctx.vmoves.update(move.uuid, { status, ...rest, endTime: rfc3339Micro(ctx.clock.now()) }),
      intent ? ctx.effects.done(evacuateKey(uuid), { ...intent, result: status }) : undefined,
      // Lock record first, then the newer unlock record: the engine core's sweep reads their order.
      unlocked ? ctx.effects.done(serverLockKey(uuid), { run: ctx.run, at }) : undefined,
      unlocked ? ctx.effects.done(serverUnlockKey(uuid), { run: ctx.run, at }) : undefined,
    ]);
    this.hooks.onEvacuation?.(status);
    return status;
  }

  /**
   * Whether the server is (or is to be) locked by us: a lock journalled by an
   * interrupted attempt and not released since (by us or the engine core's
   * sweep) is still ours; a lock someone else set is left alone.
   */
  private lockDecision(server: NovaServer): { ours: boolean; call: boolean } {
    const lock = this.ctx.effects.get(serverLockKey(server.id));
    const unlock = this.ctx.effects.get(serverUnlockKey(server.id));
    const journalled = lock?.state === 'intended' && !(unlock?.state === 'done' && unlock.at >= lock.at);
    if (server.locked) return { ours: journalled, call: false };
    return { ours: true, call: true };
  }

  /**
   * Unlocks with bounded retries on the run's signal (unlockWithRetry); false
   * when every attempt failed: the journal then still says locked, and the
   * engine core's sweep tries again and ends the run `error` if it fails too.
   */
  private async unlock(uuid: string): Promise<boolean> {
    const { ctx } = this;
    try {
      await unlockWithRetry(ctx.nova, uuid, ctx.clock, this.call);
      return true;
    } catch (err) {
      ctx.log.warn({ instance: uuid, err: errorText(err) }, `Failed to unlock instance ${uuid} after evacuation`);
      return false;
    }
  }

  /** The intent of a new attempt; an earlier attempt may have reset the server to error, so keep the states it saw first. */
  private newIntent(
    server: NovaServer,
    sourceHost: string,
    prior: EvacuateIntent | undefined,
    migrations: NovaMigration[],
  ): EvacuateIntent {
    const originalVmState = prior?.originalVmState ?? server['OS-EXT-STS:vm_state'];
    const originalTaskState = prior ? prior.originalTaskState : server['OS-EXT-STS:task_state'];
    const originalPowerState = prior?.originalPowerState ?? server['OS-EXT-STS:power_state'];
    return {
      run: this.ctx.run,
      attempt: this.target.attempt,
      target: this.target.host ?? null,
      sourceHost,
      at: this.ctx.clock.now().toISOString(),
      priorMigrations: migrations.map(migrationKey),
      originalVmState,
      originalTaskState,
      originalPowerState,
      ...planEvacuation(originalVmState, originalTaskState, originalPowerState),
    };
  }

  private async markOngoing(move: VMoveRecord, sameAttempt: boolean): Promise<void> {
    const current = this.ctx.vmoves.list().find((m) => m.uuid === move.uuid) ?? move;
    if (sameAttempt && current.status === 'ongoing') return;
    await this.ctx.vmoves.update(move.uuid, {
      status: 'ongoing',
      startTime: rfc3339Micro(this.ctx.clock.now()),
      endTime: null,
      destHost: null,
      message: null,
    });
  }

  private confirm(
    uuid: string,
    sourceHost: string,
    oldVmState: string,
    lenient: boolean,
    expectedMs?: number,
  ): Promise<NovaServer> {
    const { ctx } = this;
    const { verify_interval, wait_period_after_evacuation } = ctx.config.DEFAULT;
    return pollUntil(
      `instance ${uuid} evacuation`,
      async () => {
        const server = await ctx.nova.getServer(uuid, this.call);
        const outcome = evacuationOutcome(server, sourceHost, oldVmState, lenient);
        if (outcome === 'failed') throw new InstanceEvacuateFailed(uuid);
        return outcome === 'done' ? server : undefined;
      },
      settleSchedule(verify_interval, wait_period_after_evacuation, expectedMs),
      ctx.clock,
      ctx.signal,
    ).catch((err: unknown) => {
      if (err instanceof PollTimeout) ctx.log.warn(`Timeout for instance '${uuid}' evacuation.`);
      throw err;
    });
  }

  /** Stopped and error instances come back as they were (Masakari's stop after evacuation). */
  private async restorePowerState(uuid: string, intent: EvacuateIntent, server: NovaServer): Promise<NovaServer> {
    const { ctx } = this;
    if (intent.originalVmState === 'active' || !intent.stopAfter) return server;
    const vmState = server['OS-EXT-STS:vm_state'];
    const alreadyDown =
      vmState === 'stopped' ||
      (intent.originalVmState === 'error' && vmState === 'error' && server['OS-EXT-STS:power_state'] === SHUTDOWN);
    let current = server;
    if (!alreadyDown) {
      await ctx.nova.stopServer(uuid, this.call);
      const { verify_interval, wait_period_after_power_off } = ctx.config.DEFAULT;
      current = await pollUntil(
        `instance ${uuid} to stop`,
        async () => {
          const s = await ctx.nova.getServer(uuid, this.call);
          return s['OS-EXT-STS:vm_state'] === 'stopped' ? s : undefined;
        },
        settleSchedule(verify_interval, wait_period_after_power_off),
        ctx.clock,
        ctx.signal,
      ).catch((err: unknown) => {
        if (err instanceof PollTimeout)
          ctx.log.warn(`Instance '${uuid}' is successfully evacuated but timeout to stop.`);
        throw err;
      });
    }
    if (intent.originalVmState === 'error' && current['OS-EXT-STS:vm_state'] !== 'error') {
      await ctx.nova.resetState(uuid, 'error', this.call);
    }
    return current;
  }
}
