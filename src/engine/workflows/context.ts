// CONTRACT between the recovery workflows (src/engine/workflows/*) and the
// engine core that persists their journal into the Notification's status
// (src/engine/*). Every journal method resolves only once the write is durable
// in the API server, so a workflow that awaits it may proceed to the next
// external side effect: that is how an engine killed at any point resumes
// without repeating or losing work.

import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../time/clock.ts';
import type { NovaClient } from '../../openstack/types.ts';
import type { NotificationType, RecoveryMethod, VMoveRecord, WorkflowTaskRecord } from '../../model/types.ts';

/** recovery_workflow_details of the current run, written through to status. */
export interface ProgressRecorder {
  /** Marks the task RUNNING (progress 0.0) without a detail entry, as taskflow does. */
  start(task: string): Promise<void>;
  /** Appends {timestamp, progress, message} (Masakari's update_details). */
  update(task: string, message: string, progress: number): Promise<void>;
  /** Final taskflow state: SUCCESS (progress 1.0), FAILURE, REVERTED (progress 1.0 after revert). */
  finish(task: string, state: 'SUCCESS' | 'FAILURE' | 'REVERTED'): Promise<void>;
  /** The current run's entries (for tests and for resumption). */
  entries(): WorkflowTaskRecord[];
}

export type NewVMove = Pick<VMoveRecord, 'instanceUuid' | 'instanceName' | 'sourceHost'>;

/** VM moves of the CURRENT run only (fixes upstream B1: earlier runs never poison this one). */
export interface VMoveJournal {
  /** Creates pending moves with fresh ids/uuids, in the given order; idempotent per instanceUuid within a run. */
  addPending(moves: NewVMove[]): Promise<VMoveRecord[]>;
  update(uuid: string, patch: Partial<Omit<VMoveRecord, 'id' | 'uuid' | 'instanceUuid' | 'run'>>): Promise<VMoveRecord>;
  list(): VMoveRecord[];
}

/**
 * External side effects in flight, keyed by a stable string such as
 * `evacuate:<server uuid>` or `lock:<server uuid>`. A workflow records the
 * intent BEFORE calling Nova and marks it done after; on resumption it reads
 * pending intents and asks Nova what actually happened before re-issuing.
 */
export interface EffectJournal {
  intend(key: string, data?: Record<string, unknown>): Promise<void>;
  done(key: string, data?: Record<string, unknown>): Promise<void>;
  get(key: string): { state: 'intended' | 'done'; at: string; data?: Record<string, unknown> } | undefined;
  /** Keys with this prefix, e.g. 'lock:' to find servers we may have left locked. */
  keys(prefix: string): string[];
}

/** Masakari host flags, written to HaHost status (never spec). */
export interface HostFlags {
  /**
   * on_maintenance=true in one write; with `unreserve` (host failures only,
   * Masakari's _handle_notification_type_host) also reserved=false. A process
   * failure leaves the reserved flag alone, as upstream.
   */
  setOnMaintenance(hostName: string, unreserve: boolean): Promise<void>;
  setReserved(hostName: string, reserved: boolean): Promise<void>;
  /** Names of hosts in the same segment with reserved=true and on_maintenance=false, newest first. */
  reservedHosts(segmentUuid: string): string[];
}

export interface WorkflowContext {
  notification: {
    uuid: string;
    type: NotificationType;
    hostname: string;
    payload: Record<string, string>;
    generatedTime: string;
    segmentUuid: string;
    recoveryMethod: RecoveryMethod;
  };
  /** 0 for the first run; each retry or priority fallback gets the next number. */
  run: number;
  nova: NovaClient;
  config: Config;
  clock: Clock;
  log: Logger;
  signal: AbortSignal;
  /** X-OpenStack-Request-ID for every Nova call of this run. */
  requestId: string;
  progress: ProgressRecorder;
  vmoves: VMoveJournal;
  effects: EffectJournal;
  hosts: HostFlags;
}

/** Outcomes a workflow reports by throwing (Masakari's exception classes). */
export class SkipRecovery extends Error {}
export class IgnoreRecovery extends Error {}
export class RecoveryFailed extends Error {}
export class ReservedHostsUnavailable extends RecoveryFailed {
  constructor() {
    super('No reserved_hosts available for evacuation.');
  }
}

/** Starts a NEW run for priority fallbacks (new progress set, new vmoves). */
export type StartFallbackRun = () => Promise<WorkflowContext>;
