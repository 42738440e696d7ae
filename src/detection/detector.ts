// One look of the built-in detection (docs/operations.md "Built-in detection"
// and "Return to service"), run by the leader every [detection] poll_interval:
//
//   1. the watched hosts: every admitted host of a segment with
//      spec.detection.enabled (and the segment enabled), not on maintenance;
//      the return candidates: hosts a finished recovery left on maintenance,
//      in segments with detection or a returnToService policy;
//   2. one GET /os-services?binary=nova-compute for all of them, and the
//      Ready condition of their Nodes from the watched Node cache;
//   3. a blind look (Nova unreachable, most hosts down at once) raises
//      nothing, returns nothing, forgets every grace period and says so;
//   4. a host down past its segment's grace period is filed as a COMPUTE_HOST
//      notification through HaService.createNotification, the intake of
//      POST /v1/notifications, with masakari-monitors' hostmonitor payload;
//   5. a return candidate that is back is returned to service or left
//      disabled, as its segment's policy says (return-watch.ts, the rules in
//      src/fencing/return-to-service.ts).
import { DuplicateNotification, HostNotFoundByName, HostOnMaintenance, MasakariError } from '../domain/errors.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import { finishedRecovery, onMaintenanceByRecovery } from '../fencing/return-to-service.ts';
import { LABELS } from '../model/constants.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { NovaService } from '../openstack/types.ts';
import type { Clock } from '../time/clock.ts';
import { rfc3339Seconds } from '../time/format.ts';
import { DownTracker } from './down-tracker.ts';
import type { Due } from './down-tracker.ts';
import { hostEvent, segmentEvent } from './events.ts';
import type { WatchedHost } from './observe.ts';
import { look } from './observe.ts';
import { ReturnWatch } from './return-watch.ts';
import type { ReturnCandidate, ReturnWatchDeps } from './return-watch.ts';

/** What masakari-monitors' hostmonitor sends for a host pacemaker lost (masakarimonitors/hostmonitor/host_handler). */
export const DETECTION_PAYLOAD: Readonly<Record<string, string>> = {
  event: 'STOPPED',
  cluster_status: 'OFFLINE',
  host_status: 'NORMAL',
};

export const DETECTION_REASONS = {
  /** On the HaHost: its notification was raised. */
  hostFailureDetected: 'HostFailureDetected',
  /** On the HaHost: the API refused the notification for a reason other than a duplicate or maintenance. */
  notificationRefused: 'DetectionNotificationRefused',
  /** On each detection segment: looks cannot be trusted, nothing is raised. */
  blind: 'DetectionBlind',
  /** On each detection segment: looks can be trusted again. */
  restored: 'DetectionRestored',
} as const;

/** notifications.py's hostname rule; a host name outside it would be refused with a 400. */
const NOTIFICATION_HOSTNAME = /^[a-zA-Z0-9-._]{1,255}$/;
const DEFAULT_GRACE_SECONDS = 60;

/** The return watch's dependencies (Nova, the HaService, Events, metrics, log) and the detector's own. */
export interface DetectorDeps extends ReturnWatchDeps {
  segments(): FailoverSegment[];
  hosts(): HaHost[];
  /** COMPUTE_HOST notifications at least (the store's cache). */
  notifications(): Notification[];
  clock: Clock;
  maxDownPercent: number;
  /** Bound of the one Nova call of a look, retries included. */
  novaTimeoutMs: number;
  /**
   * Whether this replica holds the detection Lease now (Manager.holdsLease): a replica that stalled past
   * it in the middle of a look raises nothing from what it saw; the holder looks afresh.
   */
  holdsLease: () => boolean;
}

export interface LookSummary {
  /** idle: nothing to watch, Nova was not asked. */
  look: 'ok' | 'blind' | 'idle';
  raised: string[];
  returned: string[];
}

const UNFINISHED = new Set(['new', 'running', 'error']);

/** The uuid (or name) of a COMPUTE_HOST notification of the host that is new, running or in error, if any. */
function unfinishedRecovery(hostUuid: string, notifications: readonly Notification[]): string | undefined {
  const n = notifications.find(
    (x) =>
      x.spec?.type === 'COMPUTE_HOST' &&
      (x.status?.sourceHostUuid ?? x.metadata.labels?.[LABELS.hostUuid]) === hostUuid &&
      UNFINISHED.has(x.status?.phase ?? 'new'),
  );
  return n && (n.status?.uuid ?? n.metadata.labels?.[LABELS.uuid] ?? n.metadata.name);
}

const admitted = <T extends FailoverSegment | HaHost>(o: T): boolean =>
  !!o.status?.uuid && !o.metadata.deletionTimestamp;

export class Detector {
  private readonly tracker = new DownTracker();
  private readonly returns: ReturnWatch;
  private blind: string | undefined;

  constructor(private readonly deps: DetectorDeps) {
    this.returns = new ReturnWatch(deps);
  }

  async look(signal: AbortSignal): Promise<LookSummary> {
    const d = this.deps;
    const segments = d.segments().filter(admitted);
    const detecting = new Map<string, FailoverSegment>();
    const returning = new Map<string, FailoverSegment>();
    for (const s of segments) {
      const uuid = s.status!.uuid!;
      const detects = s.spec.detection?.enabled === true && s.spec.enabled !== false;
      if (detects) detecting.set(uuid, s);
      if (detects || s.spec.returnToService) returning.set(uuid, s);
    }
    const hosts = d.hosts().filter((h) => admitted(h) && h.status?.segmentUuid);
    const watched: Array<WatchedHost & { host: HaHost }> = [];
    const candidates: ReturnCandidate[] = [];
    let notifications: Notification[] | undefined;
    for (const h of hosts) {
      const seg = detecting.get(h.status!.segmentUuid!);
      if (seg && !effectiveFlags(h).onMaintenance) {
        watched.push({
          name: h.spec.name,
          graceSeconds: seg.spec.detection?.gracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
          host: h,
        });
      }
      const rseg = returning.get(h.status!.segmentUuid!);
      if (rseg && onMaintenanceByRecovery(h)) {
        notifications ??= d.notifications();
        const recovery = finishedRecovery(h.status!.uuid!, notifications);
        if (recovery) candidates.push({ host: h, segment: rseg, recovery });
      }
    }
    this.returns.retain(candidates);
    if (watched.length === 0 && candidates.length === 0) {
      this.tracker.forget();
      this.seeing([...detecting.values()]);
      d.metrics.hostsDown(0);
      return { look: 'idle', raised: [], returned: [] };
    }

    // when Nova was asked: the generated_time of what this look raises, so the engine's freshness check
    // (src/domain/freshness.ts) also judges a look that took long or a replica that stalled after it
    const seenAt = d.clock.now();
    const services = await this.services(signal);
    const l = look({
      hosts: watched,
      services,
      nodeReadiness: (h) => d.nodeReadiness(h),
      maxDownPercent: d.maxDownPercent,
    });
    if (!l.healthy) {
      this.tracker.forget();
      d.metrics.poll(l.reason === 'NovaUnreachable' ? 'nova_unreachable' : 'most_hosts_down');
      this.goBlind(l.message, [...detecting.values()]);
      return { look: 'blind', raised: [], returned: [] };
    }
    d.metrics.poll('ok');
    this.seeing([...detecting.values()]);

    const due = this.tracker.observe(d.clock.now().getTime(), watched, l.states);
    d.metrics.hostsDown(l.down);
    const raised: string[] = [];
    for (const item of due) {
      if (signal.aborted) break;
      const host = watched.find((w) => w.name === item.host)!.host;
      if (await this.raise(item, host, seenAt)) raised.push(item.host);
    }

    const byHost = new Map<string, NovaService>();
    for (const s of services as NovaService[]) if (s.binary === 'nova-compute') byHost.set(s.host, s);
    const returned: string[] = [];
    for (const c of candidates) {
      if (signal.aborted) break;
      if (await this.returns.returnIfBack(c, byHost.get(c.host.spec.name), signal)) returned.push(c.host.spec.name);
    }
    return { look: 'ok', raised, returned };
  }

  /** The leader stopped: what this replica saw is not handed on, the next leader looks afresh. */
  reset(): void {
    this.tracker.forget();
    this.blind = undefined;
    this.deps.metrics.clear();
  }

  private async services(signal: AbortSignal): Promise<NovaService[] | { error: string }> {
    const nova = this.deps.nova;
    if (!nova) return { error: 'no OpenStack credentials are configured' };
    try {
      return await nova.listServices(
        { binary: 'nova-compute' },
        { signal: AbortSignal.any([signal, AbortSignal.timeout(this.deps.novaTimeoutMs)]) },
      );
    } catch (err) {
      if (signal.aborted) throw err;
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Files the notification; true when raised now. Already handled (duplicate, maintenance) is no error. */
  private async raise(due: Due, host: HaHost, seenAt: Date): Promise<boolean> {
    const d = this.deps;
    const name = due.host;
    if (!d.holdsLease()) {
      d.log.info(
        { host: name },
        `host ${name} looked down, but this replica no longer holds the detection Lease: not raised`,
      );
      return false;
    }
    // A recovery of the host not over yet (one waiting at the fencing gate is new, and its host not on
    // maintenance yet) already handles it, however old its generated_time: a second one would only queue.
    const open = unfinishedRecovery(host.status?.uuid ?? '', d.notifications());
    if (open) {
      this.tracker.markHandled(name);
      d.metrics.raised('already_handled');
      d.log.info(
        { host: name, notification: open },
        `host ${name} is down and already handled by notification ${open}`,
      );
      return false;
    }
    if (!NOTIFICATION_HOSTNAME.test(name)) {
      return this.refused(
        host,
        name,
        `host ${name} is down (${due.why}), but its name is not a valid notification hostname (^[a-zA-Z0-9-._]*$, 1..255 characters); no notification can be raised for it`,
      );
    }
    try {
      const record = await d.service.createNotification({
        notification: {
          type: 'COMPUTE_HOST',
          hostname: name,
          generated_time: rfc3339Seconds(seenAt),
          payload: { ...DETECTION_PAYLOAD },
        },
      });
      this.tracker.markHandled(name);
      d.metrics.raised('raised');
      const note = `host ${name} has been down for ${due.downForSeconds} s (${due.why}): raised COMPUTE_HOST notification ${record.notification_uuid} (${record.k8sName})`;
      d.log.warn({ host: name, notification: record.notification_uuid }, note);
      this.hostEvent(host, 'Warning', DETECTION_REASONS.hostFailureDetected, 'Detect', note);
      return true;
    } catch (err) {
      if (err instanceof DuplicateNotification || err instanceof HostOnMaintenance) {
        this.tracker.markHandled(name);
        d.metrics.raised('already_handled');
        d.log.info({ host: name }, `host ${name} is down and already handled: ${err.message}`);
        return false;
      }
      if (err instanceof HostNotFoundByName || (err instanceof MasakariError && err.status < 500)) {
        return this.refused(
          host,
          name,
          `host ${name} is down (${due.why}), but its notification was refused: ${err.message}`,
        );
      }
      // The API server (or the store) failed: not handled, so the next look tries again.
      d.metrics.raised('failed');
      d.log.warn(
        { err, host: name },
        `host ${name} is down, but its notification could not be stored; trying again at the next look`,
      );
      return false;
    }
  }

  /** No notification can be raised for this outage: it counts as handled, and the host's Event says why. */
  private refused(host: HaHost, name: string, note: string): false {
    this.tracker.markHandled(name);
    this.deps.metrics.raised('refused');
    this.hostEvent(host, 'Warning', DETECTION_REASONS.notificationRefused, 'Detect', note);
    return false;
  }

  private goBlind(message: string, segments: FailoverSegment[]): void {
    this.deps.metrics.observationHealthy(
      false,
      segments.map((s) => s.status?.uuid ?? ''),
    );
    if (this.blind === message) return;
    const first = this.blind === undefined;
    this.blind = message;
    this.deps.log.warn(`built-in detection is blind, nothing is raised: ${message}`);
    if (first) {
      for (const s of segments) {
        this.segmentEvent(
          s,
          'Warning',
          DETECTION_REASONS.blind,
          `no host failure is raised for this segment while: ${message}`,
        );
      }
    }
  }

  private seeing(segments: FailoverSegment[]): void {
    this.deps.metrics.observationHealthy(
      true,
      segments.map((s) => s.status?.uuid ?? ''),
    );
    if (this.blind === undefined) return;
    this.blind = undefined;
    this.deps.log.info('built-in detection sees again; every grace period starts afresh');
    for (const s of segments) {
      this.segmentEvent(
        s,
        'Normal',
        DETECTION_REASONS.restored,
        'Nova can be observed again; hosts seen down from now on start their grace period afresh',
      );
    }
  }

  private hostEvent(h: HaHost, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    this.deps.events.record(hostEvent(h, type, reason, action, note));
  }

  private segmentEvent(s: FailoverSegment, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.deps.events.record(segmentEvent(s, type, reason, note));
  }
}
