// What the notification processor and its parts (gates, run, periodic tasks)
// are given: the injected dependencies and the Events sink. The leadership
// term they act in is deps/leadership-term.ts; the lookups on these caches,
// deps/lookups.ts. Each part imports only what it uses: the status writer for
// a notification is status/writer-for.ts, Nova outside a run
// src/runtime/lease-fence.ts (fencedNova), a phase Event telemetry/phase-events.ts.

import type { Logger } from 'pino';
import type { Bmc } from '../../fencing/bmc/bmc.ts';
import type { Config } from '../../config/config.ts';
import type { KubeClient } from '../../k8s/client.ts';
import type { FailoverSegment, HaHost, Notification } from '../../model/types.ts';
import type { NovaClient } from '../../openstack/types.ts';
import type { Informer } from '../../runtime/types.ts';
import type { RecoveryDriver } from '../workflows/recovery-driver.ts';
import type { Clock } from '../../time/clock.ts';

/** Where vmoves ids come from (src/store/ids.ts createIdAllocator, wired by the engine component). */
export interface IdSource {
  next(): Promise<number>;
}

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
