// Masakari's rules for one instance's evacuation (host_failure.py
// _evacuate_and_confirm), as pure functions and data: when to reset the state
// and stop the instance afterwards, when an evacuation counts as confirmed,
// what the journalled intent holds, and the texts a failed move gets. The
// procedure that applies them is evacuate-instance.ts.

import { NovaBadRequest, NovaConflict, NovaError, NovaNotFound } from '../../openstack/types.ts';
import type { NovaMigration, NovaServer } from '../../openstack/types.ts';
import { RecoveryFailed } from './context.ts';

/** Nova power_state SHUTDOWN. */
export const SHUTDOWN = 4;

export type EvacuationResult = 'succeeded' | 'failed';

/** What `evacuate:<uuid>` holds. */
export interface EvacuateIntent {
  run: number;
  attempt: string;
  target: string | null;
  sourceHost: string;
  /** ISO time (the engine's clock) the intent was first written for this attempt; never compared with Nova's times. */
  at: string;
  /**
   * Nova's evacuation migrations of the server from sourceHost that existed
   * before this intent (uuid, or id below microversion 2.59): any other one is
   * ours. Absent in intents journalled before it was recorded: every migration
   * then counts as possibly ours.
   */
  priorMigrations?: string[];
  originalVmState: string;
  originalTaskState: string | null;
  originalPowerState: number;
  needsReset: boolean;
  stopAfter: boolean;
  result?: EvacuationResult;
}

/** Masakari's InstanceEvacuateFailed. */
export class InstanceEvacuateFailed extends RecoveryFailed {
  constructor(instanceUuid: string) {
    super(`Failed to evacuate instance ${instanceUuid}`);
    this.name = 'InstanceEvacuateFailed';
  }
}

export const evacuateKey = (instanceUuid: string): string => `evacuate:${instanceUuid}`;

/**
 * Masakari's reset-state and stop-after rules (host_failure.py
 * _evacuate_and_confirm). Nova evacuates only active, stopped or error
 * instances without a task_state, so anything else is reset to error first.
 */
export function planEvacuation(
  vmState: string,
  taskState: string | null,
  powerState: number,
): { needsReset: boolean; stopAfter: boolean } {
  if (!['active', 'error', 'stopped'].includes(vmState)) {
    // A resized instance that is still running comes back active; anything else ends stopped.
    return { needsReset: true, stopAfter: !(vmState === 'resized' && powerState !== SHUTDOWN) };
  }
  if (vmState === 'stopped' && taskState === null) return { needsReset: false, stopAfter: false };
  if (taskState !== null) return { needsReset: true, stopAfter: vmState !== 'active' };
  return { needsReset: false, stopAfter: true };
}

/** vm_state the server has when evacuate is sent: Masakari's `old_vm_state` while confirming. */
export function stateAtEvacuation(intent: EvacuateIntent): string {
  return intent.needsReset ? 'error' : intent.originalVmState;
}

export function serviceHost(server: NovaServer): string | null {
  return server['OS-EXT-SRV-ATTR:host'];
}

/**
 * Masakari's `_wait_for_evacuation_confirmation`, with B11 fixed: done once the
 * server runs on another compute service with no task in progress and its
 * vm_state is the one it had before (or active after error). `lenient` is for
 * an evacuation we did not watch from the start (resumption, a late move):
 * any settled state counts, except error for an instance that was not in error.
 */
export function evacuationOutcome(
  server: NovaServer,
  sourceHost: string,
  oldVmState: string,
  lenient: boolean,
): 'done' | 'failed' | undefined {
  const vmState = server['OS-EXT-STS:vm_state'];
  if (vmState === 'error' && oldVmState !== 'error') return 'failed';
  const host = serviceHost(server);
  if (host === null || host === sourceHost) return undefined;
  if (server['OS-EXT-STS:task_state'] !== null) return undefined;
  if (lenient) return 'done';
  if (vmState === oldVmState || (oldVmState === 'error' && vmState === 'active')) return 'done';
  return undefined;
}

/** How a migration is told apart from the others of its server (uuid from 2.59, else the row id). */
export function migrationKey(m: NovaMigration): string {
  return m.uuid ?? String(m.id);
}

/**
 * The vmove message for a failed evacuation: Masakari writes str() of the
 * exception, and its Nova layer (compute/nova.py translate_nova_exception)
 * turns novaclient's "<message> (HTTP <code>) (Request-ID: ...)" into
 * InvalidInput ("Invalid input received: ..."), Forbidden (the text as is),
 * NotFound ("Resource could not be found.") and Conflict ("Conflict"); other
 * HTTP errors pass through untranslated. The request id is left out, as in
 * the API's Nova messages (it is in the log). A request that got no HTTP
 * answer (timeout, connection) keeps our own text: Masakari's "An unknown
 * exception occurred." would hide the cause.
 */
export function vmoveFailureText(err: unknown): string {
  if (!(err instanceof NovaError) || err.status === 0) return errorText(err);
  const novaclientText = `${err.message} (HTTP ${err.status})`;
  if (err instanceof NovaBadRequest) return `Invalid input received: ${novaclientText}`;
  if (err instanceof NovaNotFound) return 'Resource could not be found.';
  if (err instanceof NovaConflict) return 'Conflict';
  return novaclientText;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
