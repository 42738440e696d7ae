// The host flags a recovery set, written again after an etcd restore rolled
// its notification back (restore-guard.ts). The engine keeps Masakari's
// on_maintenance and reserved flags in HaHost status (run/ha-host-flags.ts),
// so a restore takes them back to the snapshot too: a host whose recovery
// finished after the snapshot would be out of maintenance again, and a
// reserved host that took its servers reserved again, while Nova still shows
// the recovery done. The guard writes the notification's final status back;
// this writes back what its runs did to the hosts, from that status and the
// decision table (Masakari's _handle_notification_type_host and
// _handle_notification_type_process, masakari/engine/manager.py):
// - every run of a plan with maintenance put the source host on maintenance
//   (and, for a host failure, un-reserved it);
// - each reserved host the run took (its `reserved-host:` effect, journalled
//   before the host was touched) was un-reserved.
// Only flags still missing are written, so nothing is written when the
// snapshot already had them. On maintenance is also the safe side when the
// outcome is unknown: the host waits for a person instead of taking servers.

import type { Logger } from 'pino';
import type { HaHost, Notification, NotificationStatusBlock } from '../../model/types.ts';
import { effectiveFlags } from '../../domain/host-flags.ts';
import { INDEX } from '../../model/indexes.ts';
import type { Informer } from '../../runtime/types.ts';
import { admitted, type AdmittedNotification } from '../intake/admitted-notification.ts';
import type { MissingReference, Plan } from '../intake/decisions.ts';
import type { EngineBookkeeping } from '../status/writer.ts';
import { reservedHostKey } from '../workflows/host-failure-tasks.ts';
import type { HostFlags } from '../workflows/context.ts';
import { countRestoreRollback } from '../telemetry/metrics.ts';
import type { EngineEvents } from '../deps/processor-deps.ts';
import { RESTORE_EVENT_REASONS } from './restore-guard.ts';

const RESERVED_PREFIX = reservedHostKey('');

export interface RestoredHostFlagsDeps {
  hosts: Informer<HaHost>;
  flags: HostFlags;
  events: EngineEvents;
  log: Logger;
  /** The decision table's plan for the notification (deps/lookups.ts planOf). */
  plan: (n: AdmittedNotification) => Plan | MissingReference;
}

/** The reserved hosts a run took, by the effects journalled in its status. */
export function reservedHostsTaken(status: NotificationStatusBlock | undefined): string[] {
  const effects = (status?.engine as EngineBookkeeping | undefined)?.effects ?? {};
  return Object.keys(effects)
    .filter((k) => k.startsWith(RESERVED_PREFIX))
    .map((k) => k.slice(RESERVED_PREFIX.length));
}

/**
 * Writes back the flags `restored`'s runs had set, as `final` (the status the guard wrote back; its
 * phase `failed` with the outcome unknown when `known` is false) shows them. Returns one line per
 * host written, for the notification's Event.
 */
export async function reapplyRestoredHostFlags(
  d: RestoredHostFlagsDeps,
  restored: Notification,
  final: NotificationStatusBlock,
  known: boolean,
): Promise<string[]> {
  const n = admitted({ ...restored, status: { ...restored.status, ...final } });
  if (!n) return [];
  const ran = (final.runs ?? 0) > 0 || !known;
  const plan = d.plan(n);
  const written: string[] = [];
  const host = d.hosts.byIndex(INDEX.uuid, n.status.sourceHostUuid)[0];
  if (ran && host && plan.kind === 'workflow' && plan.maintenance !== 'none') {
    const unreserve = plan.maintenance === 'on-and-unreserve';
    const f = effectiveFlags(host);
    if (!f.onMaintenance || (unreserve && f.reserved)) {
      await d.flags.setOnMaintenance(host.spec.name, unreserve);
      written.push(`${host.spec.name} on maintenance${unreserve ? ', not reserved' : ''}`);
      onHost(d, host, `on maintenance${unreserve ? ' and not reserved' : ''}`, n.status.uuid);
    }
  }
  for (const name of reservedHostsTaken(final)) {
    const taken = d.hosts.byIndex(INDEX.name, name)[0];
    if (!taken || !effectiveFlags(taken).reserved) continue;
    await d.flags.setReserved(name, false);
    written.push(`${name} not reserved`);
    onHost(d, taken, 'not reserved (it took the servers of this recovery)', n.status.uuid);
  }
  if (written.length)
    d.log.warn({ notification: n.metadata.name, written }, 'host flags an etcd restore lost written back');
  return written;
}

function onHost(d: RestoredHostFlagsDeps, h: HaHost, what: string, uuid: string): void {
  countRestoreRollback('host_flags');
  d.events.onHost(
    h,
    'Warning',
    RESTORE_EVENT_REASONS.rolledBack,
    `etcd was restored to a state from before notification ${uuid} set this host ${what}; the engine set it again`,
  );
}
