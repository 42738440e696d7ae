// Returning a recovered host to service: the inverse of what a host recovery
// did to it. Masakari's host failure flow (masakari/engine/manager.py and
// drivers/taskflow/host_failure.py) puts the host on maintenance and disables
// its nova-compute service; the fencing step or the Medik8s remediator also
// forces the service down. Masakari never undoes any of it: a person runs
// `openstack compute service set --enable --up` and
// `openstack segment host update --on_maintenance False`. Here the segment's
// spec.returnToService decides, and two callers share these rules: the
// detection feature (src/detection/, a host seen back) and the remediator (a
// MasakariRemediation deleted by Medik8s once its Node is healthy).
import type { HaService } from '../domain/ha-service.ts';
import { HostInUse, HostNotFound, MasakariError } from '../domain/errors.ts';
import { effectiveFlags } from '../domain/host-flags.ts';
import type { HostRecord } from '../domain/records.ts';
import { LABELS } from '../model/constants.ts';
import type { HaHost, Notification, ReturnToService } from '../model/types.ts';
import type { NovaClient, NovaService } from '../openstack/types.ts';
import { NovaError } from '../openstack/types.ts';
import type { Bmc, PowerState } from './bmc/bmc.ts';

export type ReturnPolicy = ReturnToService['policy'];

/**
 * Builds the Bmc of an HaHost with spec.fencing (its driver, address and
 * credentials Secret). Injected by the process, so that the rules here do not
 * depend on how a driver is made; a host with spec.fencing and no factory
 * never counts as back (its power state cannot be known).
 */
export type BmcFactory = (host: HaHost, signal?: AbortSignal) => Promise<Bmc>;

/** Event reasons of the return to service, on the HaHost (the remediator says it in its RemediationDeleted Event). */
export const RETURN_REASONS = {
  /** Restore: forced_down cleared, service enabled, on_maintenance cleared. */
  returned: 'HostReturnedToService',
  /** LeaveDisabled: the host is back, and left out of service on purpose. */
  leftDisabled: 'HostLeftDisabled',
  /** Restore, but not now: another recovery in the segment, or Nova refused. */
  deferred: 'ReturnToServiceDeferred',
} as const;

/** Absent means LeaveDisabled: Masakari's behaviour, which never re-enables a host. */
export function returnPolicyOf(spec: { returnToService?: ReturnToService } | undefined): ReturnPolicy {
  return spec?.returnToService?.policy === 'Restore' ? 'Restore' : 'LeaveDisabled';
}

/**
 * On maintenance because a recovery put it there, not because a person did:
 * the engine latches on_maintenance in status (src/engine/run/ha-host-flags.ts)
 * while spec, the person's intent, still says false. A person's maintenance
 * (spec true, through REST or kubectl) is never undone.
 */
export function onMaintenanceByRecovery(host: HaHost): boolean {
  return host.spec.onMaintenance !== true && effectiveFlags(host).onMaintenance;
}

/**
 * The host's newest COMPUTE_HOST notification, if it finished: the recovery
 * whose effects a return to service undoes. One that is new, running, in
 * error or failed is not undone: the engine is still at it, or a person must
 * look at what it left.
 */
export function finishedRecovery(hostUuid: string, notifications: readonly Notification[]): Notification | undefined {
  let newest: Notification | undefined;
  for (const n of notifications) {
    if (n.spec?.type !== 'COMPUTE_HOST' || sourceHostOf(n) !== hostUuid) continue;
    if (!newest || idOf(n) > idOf(newest)) newest = n;
  }
  return newest?.status?.phase === 'finished' ? newest : undefined;
}

// A notification sealed at admission has no status until the engine writes one: its labels say the same.
const sourceHostOf = (n: Notification): string | undefined =>
  n.status?.sourceHostUuid ?? n.metadata.labels?.[LABELS.hostUuid];
const idOf = (n: Notification): number => n.status?.id ?? (Number(n.metadata.labels?.[LABELS.id]) || 0);

/** What shows that the host is back; each part that applies must hold. */
export interface BackEvidence {
  /** The host's nova-compute service as Nova lists it now. */
  compute: NovaService | undefined;
  /** nova-compute reports again: state up, or its updated_at advanced since the recovery (it reads down while forced_down). */
  reporting: boolean;
  /** For a host that is a Kubernetes Node: its Ready condition is True. Undefined: not a Node. */
  nodeReady?: boolean;
  /** For a host with spec.fencing: what its BMC said. Undefined: no BMC. */
  power?: PowerState | { error: string };
}

/** Why the host does not count as back yet; undefined when it does. */
export function notBackBecause(host: string, e: BackEvidence): string | undefined {
  if (e.power !== undefined) {
    if (typeof e.power === 'object') return `its BMC cannot tell its power state: ${e.power.error}`;
    if (e.power !== 'On') return `its BMC reports power ${e.power}, not On`;
  }
  if (!e.compute) return `Nova lists no nova-compute service on ${host}`;
  if (!e.reporting) return `its nova-compute service is not reporting (state ${e.compute.state})`;
  if (e.nodeReady === false) return 'its Node is not Ready';
  return undefined;
}

/**
 * The power state of the host's BMC: undefined without spec.fencing; an
 * error turned into words (never into "On") when the BMC cannot be built or
 * asked.
 */
export async function hostPower(
  host: HaHost,
  bmcFor: BmcFactory | undefined,
  signal?: AbortSignal,
): Promise<PowerState | { error: string } | undefined> {
  if (!host.spec.fencing) return undefined;
  if (!bmcFor) return { error: `no BMC driver is available in this process for ${host.spec.fencing.driver}` };
  let bmc: Bmc | undefined;
  try {
    bmc = await bmcFor(host, signal);
    return await bmc.powerState(signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    const text = err instanceof Error ? err.message : String(err);
    return { error: bmc ? `${bmc.describe}: ${text}` : text };
  }
}

export type RestoreOutcome =
  /** What was changed, for the Event ("forced_down cleared", ...); empty when nothing was left to do. */
  | { done: true; steps: string[] }
  /** Not now, and why; the caller tries again at its next look. */
  | { done: false; reason: string; message: string };

export interface RestoreDeps {
  nova: NovaClient;
  /** The HaService of the host's namespace: on_maintenance is cleared by the update a person's PUT makes. */
  service: HaService;
  signal?: AbortSignal;
}

/**
 * Clears forced_down, enables the nova-compute service, then clears
 * on_maintenance. Nova comes first: if the Masakari update fails, the next
 * look finds the host still on maintenance and finishes the job, whereas a
 * host out of maintenance but disabled in Nova would no longer be found.
 * The segment is checked first as the update checks it (a host of a segment
 * with a recovery in progress cannot be updated, masakari/ha/api.py), so that
 * Nova is not enabled for a host whose maintenance then cannot be cleared.
 * Transient Nova and API server failures throw, for the caller's next look.
 */
export async function restoreHost(deps: RestoreDeps, host: HostRecord, compute: NovaService): Promise<RestoreOutcome> {
  if (deps.service.isUnderRecovery(host.failover_segment_id)) {
    return {
      done: false,
      reason: RETURN_REASONS.deferred,
      message: `segment ${host.failover_segment_id} has a recovery in progress, and a host of such a segment cannot be updated; trying again once it is over`,
    };
  }
  const steps: string[] = [];
  const body: { status?: 'enabled'; forced_down?: false } = {};
  if (compute.forced_down) body.forced_down = false;
  if (compute.status === 'disabled') body.status = 'enabled';
  if (Object.keys(body).length > 0) {
    try {
      await deps.nova.updateService(compute.id, body, { signal: deps.signal });
    } catch (err) {
      if (err instanceof NovaError && err.status >= 400 && err.status < 500) {
        return {
          done: false,
          reason: RETURN_REASONS.deferred,
          message: `Nova refused to bring the nova-compute service of ${host.name} back (HTTP ${err.status}): ${err.message}`,
        };
      }
      throw err;
    }
    if (body.forced_down === false) steps.push('forced_down cleared');
    if (body.status === 'enabled') steps.push('nova-compute service enabled');
  }
  if (host.on_maintenance) {
    try {
      await deps.service.updateHost(host.failover_segment_id, host.uuid, { host: { on_maintenance: false } });
    } catch (err) {
      if (err instanceof HostInUse || err instanceof HostNotFound) {
        return { done: false, reason: RETURN_REASONS.deferred, message: err.message };
      }
      if (err instanceof MasakariError && err.status < 500) {
        return { done: false, reason: RETURN_REASONS.deferred, message: err.message };
      }
      throw err;
    }
    steps.push('on_maintenance cleared');
  }
  return { done: true, steps };
}

/** The Event note for a host left out of service by policy, with what a person runs to bring it back. */
export function leftDisabledNote(host: string): string {
  return (
    `host ${host} is back after its recovery and stays out of service (segment returnToService policy ` +
    `LeaveDisabled): bring it back with \`openstack compute service set --enable --up ${host} nova-compute\` ` +
    `and \`openstack segment host update --on_maintenance False <segment> <host>\`, or set the segment's ` +
    `spec.returnToService.policy to Restore`
  );
}
