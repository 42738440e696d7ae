// The Events of a notification's phases (reasons: telemetry/event-reasons.ts).

import type { HaHost } from '../../model/types.ts';
import type { Informer } from '../../runtime/types.ts';
import type { EngineEvents } from '../deps/processor-deps.ts';
import { sourceHostOf } from '../deps/lookups.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';

/**
 * A phase Event on the Notification and, for a notification about the host
 * itself (COMPUTE_HOST, PROCESS) whose source host is known, on the HaHost
 * too. A VM notification's phases stay on the Notification: a storm of them
 * on one host would be two Events per notification attempt on the HaHost
 * (each a write to etcd, and most over the host's Event rate limit, where they
 * would crowd out its own Events such as HostOnMaintenance).
 */
export function emitPhaseEvent(
  d: { events: EngineEvents; hosts: Informer<HaHost> },
  n: AdmittedNotification,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): void {
  d.events.onNotification(n, type, reason, message);
  if (n.spec.type === 'VM') return;
  const host = sourceHostOf(d, n);
  if (host) d.events.onHost(host, type, reason, `Notification ${n.status.uuid} (${n.spec.type}): ${message}`);
}
