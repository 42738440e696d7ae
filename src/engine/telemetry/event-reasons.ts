// Reasons of the Events the engine records on Notifications and HaHosts
// (events.k8s.io/v1). Specific, so `kubectl events --for notification/<name>`
// and alerting on events say what happened without reading the note.
// docs/operations.md ("Events") lists them with the generic names they
// replaced.
import type { NotificationStatus } from '../../model/types.ts';

export const EVENT_REASONS = {
  /** A recovery run started (was `Running`). */
  recoveryStarted: 'RecoveryStarted',
  /** A new leader resumed an interrupted run (was `Resumed`). */
  recoveryResumed: 'RecoveryResumed',
  /** The notification ended `finished` (was `Finished`). */
  recoveryFinished: 'RecoveryFinished',
  /** Nothing to recover: segment disabled, host_status not NORMAL, unhandled VM event... (was `Ignored`). */
  recoveryIgnored: 'RecoveryIgnored',
  /** The run failed; the periodic task retries once (was `Error`). */
  recoveryError: 'RecoveryError',
  /** The retry failed too, or the run could not be completed (was `Failed`). */
  recoveryFailed: 'RecoveryFailed',
  /** Older than notifications_expired_interval: failed and cancelled (was `Expired`). */
  recoveryExpired: 'RecoveryExpired',
  /** generated_time too far ahead of the engine's clock: failed without a run (new). */
  generatedTimeInFuture: 'GeneratedTimeInFuture',
  /** The engine set the source host on maintenance (was `OnMaintenance`). */
  hostOnMaintenance: 'HostOnMaintenance',
  /** A recovery run disabled the host's nova-compute service (new). */
  serviceDisabled: 'ServiceDisabled',
  waitingForFencing: 'WaitingForFencing',
  /** The engine powered the source host off through its BMC, confirmed Off, and forced its compute service down. */
  hostFenced: 'HostFenced',
  /** A BMC fence (or the forced_down after it) failed: held new and retried with backoff, once per reason. */
  fencingFailed: 'FencingFailed',
  /** A brake on mass failure holds the notification new (src/engine/gates/recovery-brake.ts), once per reason. */
  recoveryHeld: 'RecoveryHeld',
  /** A held notification passes the brakes: back under the limit, or released by a person. */
  recoveryReleased: 'RecoveryReleased',
  serversUnlocked: 'ServersUnlocked',
  unlockFailed: 'UnlockFailed',
} as const;

/** The Event reason for a notification's final status. */
export function finalStatusReason(status: Exclude<NotificationStatus, 'new' | 'running'>): string {
  return {
    finished: EVENT_REASONS.recoveryFinished,
    ignored: EVENT_REASONS.recoveryIgnored,
    error: EVENT_REASONS.recoveryError,
    failed: EVENT_REASONS.recoveryFailed,
  }[status];
}

/** Workflow tasks (Masakari's class names) whose success means the host's compute service was disabled. */
export const SERVICE_DISABLING_TASKS = new Set(['DisableComputeServiceTask', 'DisableComputeNodeTask']);
