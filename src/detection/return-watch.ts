// Step 5 of a look (detector.ts): the return to service of hosts a finished
// recovery left on maintenance (docs/operations.md "Return to service"). Kept
// apart from failure detection because it remembers different things across
// looks (nova-compute heartbeats per recovery, which LeaveDisabled recoveries
// were already noted) and may call a BMC, while detection only counts grace
// periods; the decision rules themselves live in src/fencing/return-to-service.ts.
import type { Logger } from 'pino';
import type { HaService } from '../domain/ha-service.ts';
import type { NodeReadiness } from '../fencing/node-directory.ts';
import type { BmcFactory } from '../fencing/return-to-service.ts';
import {
  hostPower,
  leftDisabledNote,
  notBackBecause,
  restoreHost,
  RETURN_REASONS,
  returnPolicyOf,
} from '../fencing/return-to-service.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { NovaClient, NovaService } from '../openstack/types.ts';
import type { EventInput } from '../runtime/events.ts';
import { LeaseNotHeld } from '../runtime/lease-fence.ts';
import { hostEvent } from './events.ts';
import { Heartbeats } from './heartbeat.ts';
import type { DetectionMetrics } from './metrics.ts';

/** What the return watch is given: the part of DetectorDeps it shares with the detector. */
export interface ReturnWatchDeps {
  /** Undefined when no OpenStack is configured: every look is blind. */
  nova: NovaClient | undefined;
  /** The HaService of the namespace: the REST intake and host update. */
  service: HaService;
  nodeReadiness(host: string): NodeReadiness | undefined;
  bmcFor?: BmcFactory;
  events: { record(e: EventInput): void };
  metrics: DetectionMetrics;
  log: Logger;
}

/** A host a finished recovery left on maintenance, in a segment with detection or a returnToService policy. */
export interface ReturnCandidate {
  host: HaHost;
  segment: FailoverSegment;
  recovery: Notification;
}

export class ReturnWatch {
  private readonly heartbeats = new Heartbeats();
  /** Recoveries (notification uuids) whose LeaveDisabled Event was recorded: one per recovery. */
  private readonly leftNoted = new Set<string>();

  constructor(private readonly deps: ReturnWatchDeps) {}

  /** Forgets what it remembered of hosts and recoveries that are no longer candidates. */
  retain(candidates: readonly ReturnCandidate[]): void {
    this.heartbeats.retain(new Set(candidates.map((c) => c.host.spec.name)));
    const recoveries = new Set(candidates.map((c) => c.recovery.status?.uuid ?? c.recovery.metadata.name ?? ''));
    for (const uuid of [...this.leftNoted]) if (!recoveries.has(uuid)) this.leftNoted.delete(uuid);
  }

  /** True when the host was returned to service now. */
  async returnIfBack(c: ReturnCandidate, compute: NovaService | undefined, signal: AbortSignal): Promise<boolean> {
    const d = this.deps;
    const name = c.host.spec.name;
    const recovery = c.recovery.status?.uuid ?? c.recovery.metadata.name ?? '';
    const policy = returnPolicyOf(c.segment.spec);
    // Left disabled and said so: nothing more to look at (nor a BMC to ask every look) for this recovery.
    if (policy === 'LeaveDisabled' && this.leftNoted.has(recovery)) return false;
    const readiness = d.nodeReadiness(name);
    const evidence = {
      compute,
      reporting: compute ? this.heartbeats.reporting(name, recovery, compute) : false,
      ...(readiness !== undefined ? { nodeReady: readiness === 'True' } : {}),
    };
    // The BMC is asked last, and only when everything else says the host is back.
    if (notBackBecause(name, evidence)) return false;
    const power = await hostPower(c.host, d.bmcFor, signal);
    const why = notBackBecause(name, { ...evidence, ...(power !== undefined ? { power } : {}) });
    if (why) {
      d.log.info({ host: name }, `recovered host ${name} is not back yet: ${why}`);
      return false;
    }
    const seen = `host ${name} is back after recovery ${recovery} (${power !== undefined ? 'BMC power On, ' : ''}nova-compute reporting${evidence.nodeReady ? ', Node Ready' : ''})`;
    if (policy === 'LeaveDisabled') {
      this.leftNoted.add(recovery);
      d.metrics.returned('left_disabled');
      this.hostEvent(
        c.host,
        'Normal',
        RETURN_REASONS.leftDisabled,
        'LeaveDisabled',
        `${seen}; ${leftDisabledNote(name)}`,
      );
      return false;
    }
    const record = d.service.repo.getHostByName(name);
    if (!record || !d.nova || !compute) return false;
    try {
      const outcome = await restoreHost({ nova: d.nova, service: d.service, signal }, record, compute);
      if (!outcome.done) {
        d.metrics.returned('deferred');
        this.hostEvent(
          c.host,
          'Warning',
          outcome.reason,
          'ReturnToService',
          `${seen}, but not returned to service yet: ${outcome.message}`,
        );
        return false;
      }
      this.heartbeats.forget(name);
      d.metrics.returned('restored');
      const note = `${seen}: returned to service (${outcome.steps.join(', ') || 'nothing left to change'}), segment returnToService policy Restore`;
      d.log.info({ host: name }, note);
      this.hostEvent(c.host, 'Normal', RETURN_REASONS.returned, 'ReturnToService', note);
      return true;
    } catch (err) {
      if (signal.aborted) throw err;
      // Deposed (a stall past the Lease): nothing was sent, the fence logged it, the Lease holder returns the host.
      if (err instanceof LeaseNotHeld) return false;
      d.metrics.returned('failed');
      d.log.warn(
        { err, host: name },
        `host ${name} is back, but could not be returned to service; trying again at the next look`,
      );
      return false;
    }
  }

  private hostEvent(h: HaHost, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    this.deps.events.record(hostEvent(h, type, reason, action, note));
  }
}
