// Masakari's per-type decision tables (engine/manager.py), as pure functions:
// what a notification's payload asks the engine to do, before any Nova call.
// The texts are Masakari's log lines, so they can be grepped for.

import type { NotificationType } from '../../model/types.ts';

/** Notification.message Masakari writes on the segment-disabled path (typo "aboart" is upstream's). */
export const SEGMENT_DISABLED_MESSAGE = 'Recovery aboart: the segment HA is disabled.';

/**
 * VM events that lead to recovery (engine/instance_events.py): exact,
 * case-sensitive (event, vir_domain_event) pairs. Everything else is ignored.
 */
export const RECOVERABLE_VM_EVENTS: Readonly<Record<string, readonly string[]>> = {
  LIFECYCLE: ['STOPPED_FAILED'],
  QEMU_GUEST_AGENT_ERROR: ['STOPPED_FAILED'],
  IO_ERROR: ['IO_ERROR_REPORT'],
};

export function isRecoverableVmEvent(payload: Record<string, string>): boolean {
  const event = payload.event;
  const detail = payload.vir_domain_event;
  if (event === undefined || detail === undefined) return false;
  return Object.hasOwn(RECOVERABLE_VM_EVENTS, event) && (RECOVERABLE_VM_EVENTS[event] ?? []).includes(detail);
}

export type Workflow = 'host' | 'instance' | 'process';

/** What the engine does with a notification it is about to process. */
export type Plan =
  /** Final status without a workflow. `message` is written to Notification.message (only the segment path has one). */
  | { kind: 'final'; status: 'ignored' | 'finished'; reason: string; message?: string }
  /** Run a workflow; `maintenance` first puts the source host on maintenance (and un-reserves it for host failures). */
  | { kind: 'workflow'; workflow: Workflow; maintenance: 'none' | 'on' | 'on-and-unreserve' };

/** The source host or segment is not (yet) in the cache: Masakari's "could not be found" error. */
export type MissingReference = { kind: 'error'; reason: string };

export interface PlanInput {
  uuid: string;
  type: NotificationType;
  sourceHostUuid: string;
  payload: Record<string, string>;
  /** Effective `enabled` of the source host's segment. */
  segmentEnabled: boolean;
  /**
   * [process_failure] maintenance_only_for_nova_compute: a PROCESS STOPPED
   * puts the host on maintenance only for nova-compute. Unset or false:
   * Masakari's rule, any process (bug B7).
   */
  maintenanceOnlyForNovaCompute?: boolean;
}

/**
 * Masakari's process_notification + _handle_notification_type_* decision
 * order. The segment check comes first and, unlike upstream (bug B6), applies
 * to every path that starts a run: the first run, periodic retries, runs of
 * stuck `new` notifications and resumed runs.
 */
export function planNotification(n: PlanInput): Plan {
  if (!n.segmentEnabled) {
    return {
      kind: 'final',
      status: 'ignored',
      reason: 'Failover segment is disabled.',
      message: SEGMENT_DISABLED_MESSAGE,
    };
  }
  const event = n.payload.event ?? '';
  switch (n.type) {
    case 'VM':
      if (!isRecoverableVmEvent(n.payload)) {
        return {
          kind: 'final',
          status: 'ignored',
          reason: `Notification '${n.uuid}' received with payload ${JSON.stringify(n.payload)} is ignored.`,
        };
      }
      return { kind: 'workflow', workflow: 'instance', maintenance: 'none' };
    case 'PROCESS':
      if (event.toUpperCase() === 'STARTED') {
        return {
          kind: 'final',
          status: 'finished',
          reason: `Notification type '${n.type}' received for host '${n.sourceHostUuid}': '${n.payload.process_name ?? ''}' has been ${event}.`,
        };
      }
      if (event.toUpperCase() === 'STOPPED') {
        // B7: upstream sets maintenance for any process, and the API then refuses every later
        // notification of the host with 409, a real host failure included. The option limits it to
        // the one process with a workflow (process-failure.ts RECOVERABLE_PROCESS, exact name).
        const sets = !n.maintenanceOnlyForNovaCompute || n.payload.process_name === 'nova-compute';
        return { kind: 'workflow', workflow: 'process', maintenance: sets ? 'on' : 'none' };
      }
      return invalidEvent(n.type, event);
    case 'COMPUTE_HOST': {
      const hostStatus = n.payload.host_status;
      if (hostStatus === undefined) {
        return {
          kind: 'final',
          status: 'ignored',
          reason: `Notification '${n.uuid}' ignored as host_status is not provided.`,
        };
      }
      if (hostStatus.toUpperCase() !== 'NORMAL') {
        return {
          kind: 'final',
          status: 'ignored',
          reason: `Notification '${n.uuid}' ignored as host_status is '${hostStatus.toUpperCase()}'`,
        };
      }
      if (event.toUpperCase() === 'STARTED') {
        return {
          kind: 'final',
          status: 'finished',
          reason: `Notification type '${n.type}' received for host '${n.sourceHostUuid}' has been ${event}.`,
        };
      }
      if (event.toUpperCase() === 'STOPPED') {
        return { kind: 'workflow', workflow: 'host', maintenance: 'on-and-unreserve' };
      }
      return invalidEvent(n.type, event);
    }
    default:
      return invalidEvent(n.type, event);
  }
}

function invalidEvent(type: string, event: string): Plan {
  return {
    kind: 'final',
    status: 'ignored',
    reason: `Invalid event: ${event} received for notification type: ${type}`,
  };
}
