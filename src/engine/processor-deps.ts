// What the notification processor and its parts (run executor, periodic
// tasks, fencing wait) share: the injected dependencies, the leadership term
// they act in, and the few helpers every part needs (phase Events, status
// writers, source-host lookups), so none of them builds its own.

import type { Logger } from 'pino';
import type { Bmc } from '../fencing/bmc/bmc.ts';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { FailoverSegment, HaHost, Notification } from '../model/types.ts';
import type { NovaClient } from '../openstack/types.ts';
import type { Informer } from '../runtime/types.ts';
import type { AdmittedNotification } from './admitted-notification.ts';
import type { IdSource } from './journal.ts';
import { fenceNova } from './nova-fence.ts';
import type { RecoveryDriver } from './recovery-driver.ts';
import { NotificationStatusWriter } from './status-writer.ts';
import type { JournalWriteError, NotOwnerError, StatusGuard } from './status-writer.ts';
import { INDEX } from '../model/indexes.ts';
import type { Clock } from '../time/clock.ts';

/** Kubernetes Events the engine emits; the component adapts the runtime's EventRecorder. */
export interface EngineEvents {
  onNotification(n: Notification, type: 'Normal' | 'Warning', reason: string, message: string): void;
  onHost(h: HaHost, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export type FencingVerdict = { proven: true; proof: string } | { proven: false; missing: string };
/** Is the failed host proven fenced? (src/fencing/proof.ts, wired by the engine component) */
export type FencingPrecondition = (n: Notification, hostName: string) => Promise<FencingVerdict>;

export interface ProcessorDeps {
  kube: KubeClient;
  namespace: string;
  config: Config;
  nova?: NovaClient;
  log: Logger;
  clock: Clock;
  identity: string;
  notifications: Informer<Notification>;
  hosts: Informer<HaHost>;
  segments: Informer<FailoverSegment>;
  events: EngineEvents;
  /** The vmoves id allocator (src/store/ids.ts). */
  vmoveIds: IdSource;
  /** The recovery workflows, one per notification type (src/engine/workflows/driver.ts). */
  driver: RecoveryDriver;
  /** Puts a key on the work queue: a run ended, a host was released, the periodic task picked it. */
  enqueue(key: string): void;
  /**
   * Fencing precondition for segments with spec.requireFencing (OpenKeel extension):
   * is the failed host proven fenced? Wired to src/fencing/proof.ts by
   * the engine component; absent means no precondition.
   */
  fencing?: FencingPrecondition;
  /**
   * The BMC of a host with spec.fencing (src/fencing/bmc/factory.ts bmcForHost, wired by createEngine);
   * rejects with a BmcError when its Secrets cannot be used. Absent: such a host is held, never evacuated.
   */
  bmcFor?: (host: HaHost) => Promise<Bmc>;
  /**
   * Why a safety override (recovery-released-by) may not be honoured now: the policy that lets only approvers
   * write it is missing (src/fencing/approval-guard.ts, wired by the engine component); absent: always honoured.
   */
  approvalGuard?: { unguardedReason(): Promise<string | undefined> };
}

/** One term of leadership: everything the engine does happens inside one. */
export interface LeadershipTerm {
  /** The fencing token written to status.engine.owner by the runs of this term. */
  token: string;
  /** Aborts when this process stops leading. */
  signal: AbortSignal;
  /** When the term ends: is this process shutting down (still holding the Lease) rather than a lost Lease? */
  isGracefulStop: () => boolean;
  /** Asked right before every Nova side effect (nova-fence.ts): false cancels the run instead. */
  holdsLease: () => boolean;
}

export const sourceHostOf = (d: ProcessorDeps, n: AdmittedNotification): HaHost | undefined =>
  d.hosts.byIndex(INDEX.uuid, n.status.sourceHostUuid)[0];

export const segmentOf = (d: ProcessorDeps, n: AdmittedNotification): FailoverSegment | undefined =>
  d.segments.byIndex(INDEX.uuid, n.status.failoverSegmentUuid)[0];

/**
 * A phase Event on the Notification and, for a notification about the host
 * itself (COMPUTE_HOST, PROCESS) whose source host is known, on the HaHost
 * too. A VM notification's phases stay on the Notification: a storm of them
 * on one host would be two Events per notification attempt on the HaHost
 * (each a write to etcd, and most over the host's Event rate limit, where they
 * would crowd out its own Events such as HostOnMaintenance).
 */
export function emitPhaseEvent(
  d: ProcessorDeps,
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

/** A status writer for a notification as stored (from the cache), or taking over from another writer of it. */
export function statusWriterFor(
  d: ProcessorDeps,
  from: Notification | NotificationStatusWriter,
  guard: StatusGuard,
  signal: AbortSignal,
  log: Logger,
  onFatal?: (err: NotOwnerError | JournalWriteError) => void,
): NotificationStatusWriter {
  const handover = from instanceof NotificationStatusWriter;
  return new NotificationStatusWriter({
    kube: d.kube,
    namespace: d.namespace,
    initial: handover ? from.storedObject() : from,
    ...(handover ? { pages: from.journalPages() } : {}),
    guard,
    clock: d.clock,
    log,
    signal,
    onWritten: (x) => d.notifications.upsertLocal(x),
    ...(onFatal ? { onFatal } : {}),
  });
}

/** Nova for work outside a run (the expiry sweep): side effects only while the Lease is held. */
export function fencedNova(d: ProcessorDeps, term: LeadershipTerm | undefined, log: Logger): NovaClient | undefined {
  const holdsLease = term?.holdsLease ?? (() => false);
  return d.nova && fenceNova(d.nova, holdsLease, (err) => log.warn(err.message));
}
