// Forcing the failed host's nova-compute service down (PUT /os-services/{id}
// {forced_down: true}, microversion 2.53+). Nova refuses to evacuate from a
// host whose service still counts as up, and a fenced host's service only
// goes down after Nova's service_down_time; forcing it saves that wait. Only
// done after fencing is proven, never undone automatically: the host comes
// back with `openstack compute service set --up` once it is repaired.
import type { NovaClient } from '../openstack/types.ts';
import { NovaError } from '../openstack/types.ts';
import { REMEDIATION_REASONS } from '../model/remediation-constants.ts';

export type ForceDownResult =
  | { ok: true; serviceId: string; already: boolean }
  /** A failure a retry cannot fix (no such service, Nova says no). */
  | { ok: false; reason: string; message: string };

/** Transient Nova failures (timeout, connection, 5xx) throw NovaError so the caller retries with backoff. */
export async function forceDownComputeService(
  nova: NovaClient | undefined,
  host: string,
  signal?: AbortSignal,
): Promise<ForceDownResult> {
  if (!nova) {
    return {
      ok: false,
      reason: REMEDIATION_REASONS.computeServiceForceDownFailed,
      message: `no Nova is configured, so the nova-compute service of ${host} cannot be forced down (set forceDownComputeService: false to skip this step)`,
    };
  }
  try {
    const services = await nova.listServices({ binary: 'nova-compute', host }, { signal });
    const service = services.find((s) => s.host === host && s.binary === 'nova-compute');
    if (!service) {
      return {
        ok: false,
        reason: REMEDIATION_REASONS.computeServiceNotFound,
        message: `Nova has no nova-compute service on host ${host}`,
      };
    }
    if (service.forced_down) return { ok: true, serviceId: service.id, already: true };
    await nova.updateService(service.id, { forced_down: true }, { signal });
    return { ok: true, serviceId: service.id, already: false };
  } catch (err) {
    if (err instanceof NovaError && err.status >= 400 && err.status < 500) {
      return {
        ok: false,
        reason: REMEDIATION_REASONS.computeServiceForceDownFailed,
        message: `Nova refused to force the nova-compute service of ${host} down (HTTP ${err.status}): ${err.message}`,
      };
    }
    throw err;
  }
}
