// Brakes on mass failure (OpenKeel extension): whether a recovery should
// start at all. Masakari evacuates whatever it is told about, so a broken
// monitor that reports every host of a segment down has it evacuate the whole
// segment. Here a recovery that would take its segment beyond
// FailoverSegment spec.recoveryLimits, or the engine beyond
// operator.max_concurrent_recoveries, stays `new` (the Masakari API shows it
// exactly as Masakari would) and is held, visibly: the condition RecoveryHeld
// on the Notification, one Event per reason (not per recheck), the gauge
// masakari_recovery_held_notifications and the alert MasakariRecoveryHeld. It
// starts when the segment is back under its limits (a host's on_maintenance
// cleared, a recovery ended: the processor enqueues the held keys; and a
// recheck every BRAKE_RECHECK_MS), or when a person sets the annotation
// masakari.openkeel.io/recovery-released-by on it.
//
// Anchors: Medik8s NodeHealthCheck maxUnhealthy/minHealthy (no remediation
// while more nodes than that are unhealthy) and Red Hat InstanceHA's THRESHOLD
// and MAX_HOSTS_PER_CYCLE (openstack-k8s-operators/infra-operator,
// templates/instanceha/bin/instanceha.py).
//
// What counts, per segment (docs/operations.md, "Brakes on mass failure"):
//   unhealthy   hosts admitted to host recovery and not back: the source host
//               of a COMPUTE_HOST notification running or in error (awaiting
//               its retry), or a host on maintenance that a recovery set (the
//               engine's latch: effective on_maintenance true while spec says
//               false; a person's `--on_maintenance False` or any later spec
//               write ends it). A held notification does not count.
//   recovering  source hosts of the segment's running COMPUTE_HOST recoveries.
// A notification starts only if admitting its host keeps each count within
// its limit. The segment limits apply to host failures only (instance and
// process recoveries evacuate nothing); the global cap to every recovery run.

import type { HaHost, RecoveryLimits } from '../../model/types.ts';
import { CONDITIONS } from '../../model/constants.ts';
import { REMEDIATION_ANNOTATIONS } from '../../model/remediation-constants.ts';
import { effectiveFlags } from '../../domain/host-flags.ts';
import { scaledLimit } from '../../domain/recovery-limits.ts';
import { getCondition, setCondition } from '../../runtime/conditions.ts';
import type { ConditionInput } from '../../runtime/conditions.ts';
import { admitted, phaseOf } from '../intake/admitted-notification.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { EVENT_REASONS } from '../telemetry/event-reasons.ts';
import { setHeldNotifications } from '../telemetry/metrics.ts';
import { emitPhaseEvent } from '../telemetry/phase-events.ts';
import { segmentOf } from '../deps/lookups.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import { casStatus } from '../run/claim.ts';

/** How often a held notification is looked at again (besides the wake-ups on host and run changes). */
export const BRAKE_RECHECK_MS = 15_000;

export const BRAKE_REASONS = {
  unhealthy: 'SegmentUnhealthyLimit',
  recovering: 'SegmentRecoveringLimit',
  global: 'GlobalRecoveryCap',
} as const;
export type BrakeReason = (typeof BRAKE_REASONS)[keyof typeof BRAKE_REASONS];

/** What the brakes count of one segment. */
export interface SegmentLoad {
  /** Admitted hosts of the segment. */
  hosts: number;
  /** Uuids of the hosts admitted to host recovery and not back. */
  unhealthy: ReadonlySet<string>;
  /** Uuids of the hosts whose host recovery is running. */
  recovering: ReadonlySet<string>;
}

export interface BrakeInput {
  /** The source host of the notification to start. */
  hostUuid: string;
  /** A host-failure recovery: the segment's limits apply. */
  hostRecovery: boolean;
  limits: RecoveryLimits | undefined;
  load: SegmentLoad;
  /** Recovery runs in flight, every segment and type. */
  runs: number;
  /** operator.max_concurrent_recoveries; 0: no cap. */
  cap: number;
}

export type BrakeVerdict = { hold: false } | { hold: true; reason: BrakeReason; message: string };

const hostsWord = (n: number): string => `${n} host${n === 1 ? '' : 's'}`;

/** The limit as written and what it comes to, e.g. `1` or `"40%" (2 of 5 hosts)`. */
function describeLimit(raw: number | string, bound: number, total: number): string {
  return typeof raw === 'number' ? String(raw) : `"${raw}" (${bound} of ${hostsWord(total)}, rounded down)`;
}

/**
 * The pure decision: may a recovery of `hostUuid` start now? Checked in the
 * order unhealthy limit, recovering limit, global cap; the first that would be
 * exceeded is the reason. A host already counted adds nothing.
 */
export function brakeVerdict(x: BrakeInput): BrakeVerdict {
  const release = `it starts when the segment is back under the limit, or when someone sets the annotation ${REMEDIATION_ANNOTATIONS.recoveryReleasedBy} on this notification`;
  if (x.hostRecovery) {
    const checks = [
      {
        raw: x.limits?.maxUnhealthyHosts,
        field: 'maxUnhealthyHosts',
        set: x.load.unhealthy,
        reason: BRAKE_REASONS.unhealthy,
        what: 'in host recovery or on maintenance from one',
      },
      {
        raw: x.limits?.maxRecoveringHosts,
        field: 'maxRecoveringHosts',
        set: x.load.recovering,
        reason: BRAKE_REASONS.recovering,
        what: 'with a host recovery running',
      },
    ] as const;
    for (const c of checks) {
      if (c.raw === undefined) continue;
      const bound = scaledLimit(c.raw, x.load.hosts);
      const after = c.set.size + (c.set.has(x.hostUuid) ? 0 : 1);
      if (after <= bound) continue;
      return {
        hold: true,
        reason: c.reason,
        message: `Held by the segment's recoveryLimits.${c.field} ${describeLimit(c.raw, bound, x.load.hosts)}: ${hostsWord(c.set.size)} of ${x.load.hosts} ${c.set.size === 1 ? 'is' : 'are'} ${c.what}, and recovering this host would make ${after}; ${release}.`,
      };
    }
  }
  if (x.cap > 0 && x.runs + 1 > x.cap) {
    return {
      hold: true,
      reason: BRAKE_REASONS.global,
      message: `Held by operator.max_concurrent_recoveries ${x.cap}: ${x.runs} recovery run${x.runs === 1 ? '' : 's'} in flight; it starts when one ends, or when someone sets the annotation ${REMEDIATION_ANNOTATIONS.recoveryReleasedBy} on this notification.`,
    };
  }
  return { hold: false };
}

/** A host on maintenance that the engine latched (a recovery set it), not a person's: spec says otherwise. */
export function onMaintenanceFromRecovery(h: HaHost): boolean {
  return effectiveFlags(h).onMaintenance && h.spec.onMaintenance !== true;
}

/** A start that passed the brakes and has not reached the cache as `running` yet. */
interface Reservation {
  segmentUuid: string;
  /** Set for a host recovery: it counts in its segment. */
  hostUuid?: string;
}

/**
 * Counts one segment from the engine's caches and the starts in progress
 * (`reserved`): the notifications are the unfinished ones.
 */
export function segmentLoad(
  segmentUuid: string,
  notifications: Iterable<AdmittedNotification>,
  hosts: Iterable<HaHost>,
  reserved: Iterable<Reservation>,
): SegmentLoad {
  let total = 0;
  const unhealthy = new Set<string>();
  const recovering = new Set<string>();
  for (const h of hosts) {
    if (h.status?.segmentUuid !== segmentUuid || !h.status.uuid || h.metadata.deletionTimestamp) continue;
    total++;
    if (onMaintenanceFromRecovery(h)) unhealthy.add(h.status.uuid);
  }
  for (const n of notifications) {
    if (n.spec.type !== 'COMPUTE_HOST' || n.status.failoverSegmentUuid !== segmentUuid) continue;
    const phase = phaseOf(n);
    // A COMPUTE_HOST notification running or in error ran the host workflow (the other plans end without a run).
    if (phase === 'running' || phase === 'error') unhealthy.add(n.status.sourceHostUuid);
    if (phase === 'running') recovering.add(n.status.sourceHostUuid);
  }
  for (const r of reserved) {
    if (r.segmentUuid !== segmentUuid || !r.hostUuid) continue;
    unhealthy.add(r.hostUuid);
    recovering.add(r.hostUuid);
  }
  return { hosts: total, unhealthy, recovering };
}

/** What the processor does with a notification at the brakes. */
export type BrakeOutcome =
  | { held: true }
  /** `release`: the RecoveryHeld condition to store with the run's claim (it was held before). */
  | { held: false; release?: ConditionInput };

/** Who released a notification through the annotation, or undefined. */
export const releasedBy = (n: AdmittedNotification): string | undefined =>
  n.metadata.annotations?.[REMEDIATION_ANNOTATIONS.recoveryReleasedBy]?.trim() || undefined;

export class RecoveryBrake {
  /** Notifications held now: their segment and reason (the metric) and the reason last evented. */
  private readonly held = new Map<string, { segmentUuid: string; reason: BrakeReason }>();
  /** Held notifications whose release was evented (once: a fencing wait after the brakes rechecks them). */
  private readonly released = new Set<string>();
  /** Starts between the brakes and the run claim, so two workers cannot both take the last slot. */
  private readonly reserved = new Map<string, Reservation>();

  /** `runsInFlight`: the run executor's count (the global cap counts without scanning every notification). */
  constructor(
    private readonly deps: ProcessorDeps,
    private readonly runsInFlight: () => number,
  ) {}

  /**
   * Decides whether `n` may start its `workflow` now. A start that passes is
   * reserved until settle(key), so it counts before the claim reaches the
   * cache; one that is held gets its condition (written only when it changes)
   * and, once per reason, an Event.
   */
  async check(n: AdmittedNotification, hostRecovery: boolean): Promise<BrakeOutcome> {
    const key = n.metadata.name;
    const segment = segmentOf(this.deps, n);
    const limits = segment?.spec.recoveryLimits;
    const cap = this.deps.config.operator.max_concurrent_recoveries;
    const braked = (hostRecovery && limits !== undefined) || cap > 0;
    let verdict: BrakeVerdict = braked ? brakeVerdict(this.input(n, hostRecovery, limits, cap)) : { hold: false };
    // A release is only as good as the policy that lets only approvers write it (as fencing-approved-by).
    let who: string | undefined;
    const annotated = verdict.hold ? releasedBy(n) : undefined;
    if (verdict.hold && annotated) {
      const unguarded = await this.deps.approvalGuard?.unguardedReason();
      if (unguarded) {
        const ignored = ` The annotation ${REMEDIATION_ANNOTATIONS.recoveryReleasedBy} ("${annotated}") is not honoured: ${unguarded}.`;
        verdict = { ...verdict, message: verdict.message + ignored };
      } else {
        who = annotated;
        verdict = { hold: false };
      }
    }
    if (!verdict.hold) {
      this.reserved.set(key, {
        segmentUuid: n.status.failoverSegmentUuid,
        ...(hostRecovery ? { hostUuid: n.status.sourceHostUuid } : {}),
      });
      const wasHeld = getCondition(n.status.conditions, CONDITIONS.recoveryHeld)?.status === 'True';
      this.unhold(key);
      if (!wasHeld) return { held: false };
      const message = who
        ? `Released by "${who}" through the annotation ${REMEDIATION_ANNOTATIONS.recoveryReleasedBy}.`
        : 'The segment is back under its recovery limits.';
      if (!this.released.has(key)) {
        this.released.add(key);
        this.deps.log.info({ notification: n.status.uuid, releasedBy: who }, `recovery released: ${message}`);
        emitPhaseEvent(this.deps, n, 'Normal', EVENT_REASONS.recoveryReleased, message);
      }
      return {
        held: false,
        release: {
          type: CONDITIONS.recoveryHeld,
          status: 'False',
          reason: who ? 'ReleasedByApprover' : 'UnderLimit',
          message,
        },
      };
    }
    this.released.delete(key);
    const previous = this.held.get(key);
    this.held.set(key, { segmentUuid: n.status.failoverSegmentUuid, reason: verdict.reason });
    this.publish();
    if (previous?.reason !== verdict.reason) {
      const fields = { notification: n.status.uuid, host: n.spec.hostname, reason: verdict.reason };
      this.deps.log.warn(fields, verdict.message);
      emitPhaseEvent(this.deps, n, 'Warning', EVENT_REASONS.recoveryHeld, verdict.message);
    }
    const want = { type: CONDITIONS.recoveryHeld, status: 'True' as const, reason: verdict.reason };
    const has = getCondition(n.status.conditions, CONDITIONS.recoveryHeld);
    if (has?.status !== want.status || has.reason !== want.reason || has.message !== verdict.message) {
      await casStatus(this.deps, n, (s) => {
        s.conditions = setCondition(s.conditions, { ...want, message: verdict.message }, this.deps.clock.now());
      });
    }
    return { held: true };
  }

  /** The decision on `key` is over: its reservation ends (a claimed run now counts from the cache). */
  settle(key: string): void {
    this.reserved.delete(key);
  }

  /** Held and rechecked: not stuck (the periodic task leaves it alone, as one waiting for fencing). */
  isHolding(key: string): boolean {
    return this.held.has(key);
  }

  /** The keys held now, to look at again when a host or run changed. */
  heldKeys(): string[] {
    return [...this.held.keys()];
  }

  forget(key: string): void {
    this.reserved.delete(key);
    this.released.delete(key);
    this.unhold(key);
  }

  clear(): void {
    this.reserved.clear();
    this.released.clear();
    this.held.clear();
    this.publish();
  }

  private unhold(key: string): void {
    if (this.held.delete(key)) this.publish();
  }

  private publish(): void {
    setHeldNotifications(this.held.values());
  }

  private input(
    n: AdmittedNotification,
    hostRecovery: boolean,
    limits: RecoveryLimits | undefined,
    cap: number,
  ): BrakeInput {
    const { notifications, hosts } = this.deps;
    const runs = this.runsInFlight() + this.reserved.size;
    // Only a host recovery of a segment with limits reads the segment's notifications and hosts.
    const load: SegmentLoad =
      hostRecovery && limits
        ? segmentLoad(
            n.status.failoverSegmentUuid,
            notifications
              .list()
              .map(admitted)
              .filter((x): x is AdmittedNotification => x !== undefined),
            hosts.list(),
            this.reserved.values(),
          )
        : { hosts: 0, unhealthy: new Set(), recovering: new Set() };
    return { hostUuid: n.status.sourceHostUuid, hostRecovery, limits, load, runs, cap };
  }
}
