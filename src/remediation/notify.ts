// Filing the COMPUTE_HOST notification through HaService, so the remediator
// obeys exactly the REST path's rules (host exists, not on maintenance,
// duplicate detection). The notification's generated_time is the moment
// fencing was proven (kept in status.fencedAt), so a create retried after a
// crash is a duplicate of the first one and that one is adopted instead.
import type { HaService } from '../domain/ha-service.ts';
import { DuplicateNotification, HostNotFoundByName, HostOnMaintenance, MasakariError } from '../domain/errors.ts';
import type { NotificationRecord } from '../domain/records.ts';
import { REMEDIATION_REASONS } from '../model/remediation-constants.ts';
import { normaliseTime, toMicros } from '../time/format.ts';

/** What a fenced, stopped host looks like to Masakari: the engine evacuates only on host_status NORMAL. */
export const REMEDIATION_PAYLOAD: Readonly<Record<string, string>> = {
  event: 'STOPPED',
  host_status: 'NORMAL',
  cluster_status: 'OFFLINE',
};

/** notifications.py's hostname rule; anything else the API would reject with 400. */
const NOTIFICATION_HOSTNAME = /^[a-zA-Z0-9-._]{1,255}$/;

export type NotifyResult =
  | { ok: true; record: NotificationRecord; adopted: boolean }
  | { ok: false; reason: string; message: string }
  /** Masakari says a notification exists, but this replica's cache does not show it yet: look again shortly. */
  | { pending: string };

const samePayload = (a: Record<string, string>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

/**
 * The newest COMPUTE_HOST notification of this host with our payload whose
 * generated_time is inside the duplicate window of `generatedTime`: the one
 * a duplicate (or the maintenance flag it caused) points at.
 */
export function findOwnNotification(
  service: HaService,
  hostName: string,
  generatedTime: string,
  windowSeconds: number,
): NotificationRecord | undefined {
  const host = service.repo.getHostByName(hostName);
  const stamp = normaliseTime(generatedTime);
  if (!host || !stamp) return undefined;
  const since = toMicros(stamp) - BigInt(windowSeconds) * 1_000_000n;
  return service.repo
    .listNotifications()
    .filter(
      (n) =>
        n.type === 'COMPUTE_HOST' &&
        n.source_host_uuid === host.uuid &&
        samePayload(n.payload, REMEDIATION_PAYLOAD) &&
        toMicros(n.generated_time) >= since,
    )
    .sort((a, b) => b.id - a.id)[0];
}

export async function fileHostNotification(
  service: HaService,
  hostName: string,
  generatedTime: string,
  windowSeconds: number,
): Promise<NotifyResult> {
  if (!NOTIFICATION_HOSTNAME.test(hostName)) {
    return {
      ok: false,
      reason: REMEDIATION_REASONS.notificationRejected,
      message: `host name ${JSON.stringify(hostName)} is not a valid notification hostname (^[a-zA-Z0-9-._]*$, 1..255 characters)`,
    };
  }
  try {
    const record = await service.createNotification({
      notification: {
        type: 'COMPUTE_HOST',
        hostname: hostName,
        generated_time: generatedTime,
        payload: { ...REMEDIATION_PAYLOAD },
      },
    });
    return { ok: true, record, adopted: false };
  } catch (err) {
    if (err instanceof DuplicateNotification || err instanceof HostOnMaintenance) {
      const existing = findOwnNotification(service, hostName, generatedTime, windowSeconds);
      if (existing) return { ok: true, record: existing, adopted: true };
      if (err instanceof DuplicateNotification) return { pending: err.message };
      return { ok: false, reason: REMEDIATION_REASONS.hostOnMaintenance, message: err.message };
    }
    if (err instanceof HostNotFoundByName) {
      return { ok: false, reason: REMEDIATION_REASONS.hostNotFound, message: err.message };
    }
    if (err instanceof MasakariError && err.status < 500) {
      return { ok: false, reason: REMEDIATION_REASONS.notificationRejected, message: err.message };
    }
    throw err;
  }
}
