// The active form of the fencing gate (OpenKeel extension): a COMPUTE_HOST
// notification whose source HaHost has spec.fencing is never evacuated
// before the engine has powered that host off through its BMC in this
// recovery and the BMC has said Off. In order, before the run is claimed:
//   1. power off (Redfish ForceOff, IPMI chassis power off);
//   2. read the power state until Off, for powerOffTimeoutSeconds at most;
//   3. record the proof (status.fencing, condition FencingVerified=True, the
//      BmcPowerOffTask line in recovery_workflow_details), in one write;
//   4. mark Nova's compute service forced_down (os-services PUT, 2.53), so
//      Nova allows the evacuation at once instead of after service_down_time:
//      Nova's documented order, fence then force down;
// then the gate opens and the workflow runs. Whatever requireFencing says: a
// host with a BMC is always fenced, and in a requireFencing segment this
// proof counts as the proof the gate waits for.
//
// Each attempt runs in the background (reconcile never waits on a BMC); its
// end enqueues the notification. A failed attempt (a BmcError of any kind,
// the power still not Off at the deadline, a status write or forced_down that
// failed) never opens the gate: the notification stays `new` (expired as any
// other), retried with backoff (FENCE_BACKOFF), and shows why: condition
// FencingVerified=False with the reason below and the message, a
// BmcPowerOffTask progress line per attempt (REST GET at 1.1), an Event per
// distinct reason, masakari_fencing_attempts_total and the gauge
// masakari_fencing_held_notifications (alert MasakariFencingFailed).
//
// Crash safety: a restarted engine has no memory of an attempt. A proof in
// status.fencing whose power-off was sent after the notification was created
// is ours; the BMC is read again and Off confirms it (nobody powered the host
// back on since). Anything else sends the power-off again: ForceOff of a host
// that is off is harmless, an evacuation on an unconfirmed power-off is not.

import type { Bmc, BmcFailureKind, PowerState } from '../../fencing/bmc/bmc.ts';
import { BmcError } from '../../fencing/bmc/bmc.ts';
import { FENCING_DEFAULTS } from '../../fencing/bmc/factory.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { CONFLICT_BACKOFF, backoffDelays, retryOnConflict } from '../../k8s/retry-on-conflict.ts';
import type { Backoff } from '../../k8s/retry-on-conflict.ts';
import { CONDITIONS } from '../../model/constants.ts';
import { BMC_POWER_OFF_TASK } from '../../model/recovery-tasks.ts';
import type { FencingRecord, HaHost, Notification, NotificationStatusBlock } from '../../model/types.ts';
import { setCondition } from '../../runtime/conditions.ts';
import { pythonStrDatetime } from '../../time/format.ts';
import { admitted, phaseOf } from '../intake/admitted-notification.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { EVENT_REASONS } from '../telemetry/event-reasons.ts';
import { pythonFloat } from '../run/journal.ts';
import { countFencingAttempt, setFencingHeld } from '../telemetry/metrics.ts';
import { emitPhaseEvent } from '../telemetry/phase-events.ts';
import { fencedNova } from '../../runtime/lease-fence.ts';
import { sourceHostOf } from '../deps/lookups.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import type { LeadershipTerm } from '../deps/leadership-term.ts';
import { casStatus } from '../run/claim.ts';

/** How often a notification whose fence is in flight is looked at (the attempt's end enqueues it anyway). */
export const FENCE_RECHECK_MS = 5_000;
/** Between two reads of the power state while waiting for Off. */
export const POWER_POLL_MS = 1_000;
/** Between failed attempts: 5 s doubling to 5 min, then every 5 min until the notification expires. */
export const FENCE_BACKOFF: Readonly<Backoff> = Object.freeze({
  steps: 8,
  delayMs: 5_000,
  factor: 2,
  jitter: 0.1,
  capMs: 300_000,
});
/** Progress lines kept on the BmcPowerOffTask record (the first and the latest). */
const MAX_LINES = 20;

export const BMC_FENCE_REASONS = {
  verified: 'BmcPoweredOff',
  unreachable: 'BmcUnreachable',
  timeout: 'BmcTimeout',
  refused: 'BmcRefused',
  error: 'BmcError',
  forceDown: 'ForceDownFailed',
} as const;

const REASON_OF: Record<BmcFailureKind, string> = {
  unreachable: BMC_FENCE_REASONS.unreachable,
  timeout: BMC_FENCE_REASONS.timeout,
  refused: BMC_FENCE_REASONS.refused,
  error: BMC_FENCE_REASONS.error,
};

/** What the processor does with a notification at the BMC gate. */
export type BmcGate =
  /** The host has no BMC configured: the requireFencing precondition decides. */
  | { kind: 'none' }
  /** Fenced in this recovery and forced down: go on; the proof stands for requireFencing too. */
  | { kind: 'fenced' }
  | { kind: 'held'; requeueAfterMs: number };

interface Failure {
  count: number;
  retryAt: number;
  driver: string;
  reason: string;
  /** The reason and message last evented. */
  note: string;
}

class ForceDownError extends Error {}
class LeaseLost extends Error {}

/** A FencingRecord of this recovery: the power-off was sent after the notification was created. */
export function isOwnProof(n: Notification, record: FencingRecord | undefined): record is FencingRecord {
  const created = Date.parse(n.metadata.creationTimestamp ?? '');
  const sent = Date.parse(record?.poweredOffAt ?? '');
  return record?.powerState === 'Off' && Number.isFinite(created) && Number.isFinite(sent) && sent >= created;
}

export class BmcFence {
  private readonly inFlight = new Map<string, AbortController>();
  private readonly failures = new Map<string, Failure>();
  /** Fenced and forced down by this process since the notification's last claim. */
  private readonly fenced = new Set<string>();

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly term: () => LeadershipTerm | undefined,
  ) {}

  /** The gate, for a host recovery about to be claimed (new or its retry; a resumed run passed it). */
  gate(n: AdmittedNotification): BmcGate {
    const host = sourceHostOf(this.deps, n);
    const key = n.metadata.name;
    if (n.spec.type !== 'COMPUTE_HOST' || !host?.spec.fencing) {
      // spec.fencing removed by a person while a fence was failing: the other guards decide from now on.
      if (this.inFlight.has(key) || this.failures.has(key)) this.forget(key);
      return { kind: 'none' };
    }
    if (this.fenced.has(key)) return { kind: 'fenced' };
    if (this.inFlight.has(key)) return { kind: 'held', requeueAfterMs: FENCE_RECHECK_MS };
    const failure = this.failures.get(key);
    const wait = failure ? failure.retryAt - this.deps.clock.now().getTime() : 0;
    if (wait > 0) return { kind: 'held', requeueAfterMs: wait };
    const term = this.term();
    if (!term || term.signal.aborted) return { kind: 'held', requeueAfterMs: FENCE_RECHECK_MS };
    const ac = new AbortController();
    const onTermEnd = () => ac.abort(term.signal.reason);
    term.signal.addEventListener('abort', onTermEnd, { once: true });
    this.inFlight.set(key, ac);
    void this.attempt(n, host, ac.signal).finally(() => {
      term.signal.removeEventListener('abort', onTermEnd);
      if (this.inFlight.get(key) === ac) this.inFlight.delete(key);
      if (!ac.signal.aborted) this.deps.enqueue(key);
    });
    return { kind: 'held', requeueAfterMs: FENCE_RECHECK_MS };
  }

  /** A run was claimed: a later retry of this notification confirms the power state again. */
  claimed(key: string): void {
    this.fenced.delete(key);
    this.unhold(key);
  }

  /** Held by a failed fence, or fencing now: not stuck (the periodic task leaves it alone). */
  isHolding(key: string): boolean {
    return this.inFlight.has(key) || this.failures.has(key);
  }

  forget(key: string): void {
    this.inFlight.get(key)?.abort(new Error(`${key}: notification gone`));
    this.inFlight.delete(key);
    this.fenced.delete(key);
    this.unhold(key);
  }

  clear(): void {
    for (const ac of this.inFlight.values()) ac.abort(new Error('leadership ended'));
    this.inFlight.clear();
    this.fenced.clear();
    this.failures.clear();
    this.publish();
  }

  private async attempt(n: AdmittedNotification, host: HaHost, signal: AbortSignal): Promise<void> {
    const key = n.metadata.name;
    const driver = host.spec.fencing?.driver ?? 'unknown';
    const fields = { notification: n.status.uuid, host: host.spec.name, driver };
    let bmc: Bmc | undefined;
    try {
      if (!this.deps.bmcFor) throw new BmcError('error', 'this engine has no BMC drivers wired');
      bmc = await this.deps.bmcFor(host);
      const record = await this.powerOff(n, host, bmc, signal);
      countFencingAttempt(driver, 'success');
      const line = `Host ${host.spec.name} powered off through ${record.bmc}: ${record.poweredOffAt === record.confirmedAt ? 'Off' : `power-off sent at ${record.poweredOffAt}, Off`} confirmed at ${record.confirmedAt}`;
      await this.write(key, (s) => {
        s.fencing = record;
        s.conditions = setCondition(
          s.conditions,
          { type: CONDITIONS.fencingVerified, status: 'True', reason: BMC_FENCE_REASONS.verified, message: line },
          this.deps.clock.now(),
        );
        this.taskLine(s, line, 'SUCCESS');
      });
      this.deps.log.info({ ...fields, fencing: record }, 'host powered off through its BMC');
      await this.forceDown(n, host, signal);
      if (signal.aborted) return;
      this.fenced.add(key);
      this.unhold(key);
      emitPhaseEvent(this.deps, n, 'Normal', EVENT_REASONS.hostFenced, `${line}; compute service forced down.`);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof LeaseLost) {
        this.deps.log.warn(fields, err.message);
        return;
      }
      await this.failed(n, host, driver, bmc, err);
    }
  }

  /** Power-off and confirmation, or the confirmation alone of a proof recorded earlier in this recovery. */
  private async powerOff(n: AdmittedNotification, host: HaHost, bmc: Bmc, signal: AbortSignal): Promise<FencingRecord> {
    const { clock } = this.deps;
    const recorded = n.status.fencing;
    if (isOwnProof(n, recorded) && recorded.bmc === bmc.describe && (await bmc.powerState(signal)) === 'Off') {
      return recorded;
    }
    const f = host.spec.fencing;
    const limitMs = (f?.powerOffTimeoutSeconds ?? FENCING_DEFAULTS.powerOffTimeoutSeconds) * 1000;
    // A power-off is a side effect like a Nova call: only the Lease holder sends it (src/runtime/lease-fence.ts).
    if (!(this.term()?.holdsLease() ?? false)) {
      throw signal.aborted
        ? signal.reason
        : new LeaseLost('not powering off: this engine no longer holds the engine Lease');
    }
    const sent = clock.now();
    await bmc.powerOff(signal);
    let state: PowerState;
    for (;;) {
      state = await bmc.powerState(signal);
      if (state === 'Off') break;
      if (clock.now().getTime() - sent.getTime() >= limitMs) {
        throw new BmcError(
          'timeout',
          `${bmc.describe} still reports PowerState ${state} ${Math.round(limitMs / 1000)}s after the power-off (powerOffTimeoutSeconds)`,
        );
      }
      await clock.sleep(POWER_POLL_MS, signal);
    }
    return {
      driver: bmc.driver,
      bmc: bmc.describe,
      poweredOffAt: sent.toISOString(),
      confirmedAt: clock.now().toISOString(),
      powerState: 'Off',
    };
  }

  /** forced_down=true on the host's nova-compute service: Nova's own way to say the host is known dead. */
  private async forceDown(n: AdmittedNotification, host: HaHost, signal: AbortSignal): Promise<void> {
    const nova = fencedNova(this.deps, this.term(), this.deps.log);
    if (!nova) {
      this.deps.log.warn({ notification: n.status.uuid }, 'no Nova client: compute service not forced down');
      return;
    }
    try {
      const services = await nova.listServices({ host: host.spec.name, binary: 'nova-compute' }, { signal });
      for (const svc of services) {
        if (!svc.forced_down) await nova.updateService(String(svc.id), { forced_down: true }, { signal });
      }
      if (services.length === 0) {
        this.deps.log.warn({ host: host.spec.name }, 'no nova-compute service to force down; the workflow reports it');
      }
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ForceDownError(
        `host ${host.spec.name} is powered off, but its compute service could not be forced down: ${(err as Error).message}`,
      );
    }
  }

  private async failed(n: AdmittedNotification, host: HaHost, driver: string, bmc: Bmc | undefined, err: unknown) {
    const key = n.metadata.name;
    const forceDown = err instanceof ForceDownError;
    const kind: BmcFailureKind = err instanceof BmcError ? err.kind : 'error';
    const reason = forceDown ? BMC_FENCE_REASONS.forceDown : REASON_OF[kind];
    countFencingAttempt(driver, forceDown ? 'force_down_failed' : kind);
    const previous = this.failures.get(key);
    const count = (previous?.count ?? 0) + 1;
    const delays = backoffDelays(FENCE_BACKOFF);
    const delayMs = delays[count - 1] ?? FENCE_BACKOFF.capMs;
    const what = forceDown
      ? ''
      : `Fencing host ${host.spec.name} through ${bmc?.describe ?? driver} failed (${kind}): `;
    const message = `${what}${(err as Error).message}`;
    const note = `${reason}: ${message}`;
    const failure = { count, retryAt: this.deps.clock.now().getTime() + delayMs, driver, reason, note };
    this.failures.set(key, failure);
    this.publish();
    const line = `Attempt ${count}: ${message}; no evacuation before the host is confirmed off, next attempt in ${Math.round(delayMs / 1000)}s`;
    if (previous?.note !== note) {
      this.deps.log.warn({ notification: n.status.uuid, host: host.spec.name, reason }, message);
      emitPhaseEvent(
        this.deps,
        n,
        'Warning',
        EVENT_REASONS.fencingFailed,
        `${message}. Held new, retried with backoff.`,
      );
    }
    try {
      await this.write(key, (s) => {
        s.conditions = setCondition(
          s.conditions,
          { type: CONDITIONS.fencingVerified, status: 'False', reason, message },
          this.deps.clock.now(),
        );
        this.taskLine(s, line, 'RUNNING');
      });
    } catch (writeErr) {
      this.deps.log.warn({ notification: n.status.uuid, err: writeErr }, 'could not record the failed fence');
    }
  }

  /** The BmcPowerOffTask record of the coming run, one line per attempt (the first and the latest kept). */
  private taskLine(s: NotificationStatusBlock, message: string, state: 'RUNNING' | 'SUCCESS'): void {
    const run = s.runs ?? 0;
    const details = (s.recoveryWorkflowDetails ??= []);
    let e = details.find((x) => x.name === BMC_POWER_OFF_TASK && (x.run ?? 0) === run);
    if (!e) {
      e = { name: BMC_POWER_OFF_TASK, progress: 0.0, progressDetails: [], state: 'RUNNING', run };
      details.push(e);
    }
    e.state = state;
    e.progress = state === 'SUCCESS' ? 1.0 : 0.0;
    e.progressDetails.push({
      timestamp: pythonStrDatetime(this.deps.clock.now()),
      progress: pythonFloat(e.progress),
      message,
    });
    if (e.progressDetails.length > MAX_LINES) e.progressDetails.splice(1, e.progressDetails.length - MAX_LINES);
  }

  /** A status write on the newest version of a notification still waiting to start (new, or in error for its retry). */
  private async write(key: string, mutate: (s: NotificationStatusBlock) => void): Promise<void> {
    await retryOnConflict(CONFLICT_BACKOFF, async (attempt) => {
      let cached = this.deps.notifications.get(key);
      if (attempt > 1 || !cached) {
        cached = await this.deps.kube.get<Notification>(RESOURCES.notifications, this.deps.namespace, key);
        this.deps.notifications.upsertLocal(cached);
      }
      const n = admitted(cached);
      const phase = n ? phaseOf(n) : undefined;
      if (!n || (phase !== 'new' && phase !== 'error')) return;
      await casStatus(this.deps, n, mutate);
    });
  }

  private unhold(key: string): void {
    if (this.failures.delete(key)) this.publish();
  }

  private publish(): void {
    setFencingHeld(this.failures.values());
  }
}
