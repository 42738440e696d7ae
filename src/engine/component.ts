// The `engine` component (MASAKARI_COMPONENTS=engine): the recovery engine of
// src/engine/engine.ts on the real runtime — the process manager's shared
// caches and leader election (Lease `masakari-engine`), a work-queue
// Controller and an EventRecorder — with the taskflow recovery driver and the
// vmoves id allocator.

import type { AppContext, Component } from '../app/component.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { API_VERSION } from '../model/constants.ts';
import type { HaHost, Notification } from '../model/types.ts';
import { EventRecorder } from '../runtime/events.ts';
import { ApprovalGuard } from '../fencing/approval-guard.ts';
import { NodeDirectory } from '../fencing/node-directory.ts';
import { createIdAllocator } from '../store/index.ts';
import { createEngine } from './engine.ts';
import type { EngineEvents } from './deps/processor-deps.ts';
import { countEvacuation, instrumentNova, registerEngineMetrics } from './telemetry/metrics.ts';
import { taskflowDriver } from './workflows/driver.ts';
import { fencingProofFor, type FencingProof } from '../fencing/proof.ts';
import { EVENT_REASONS } from './telemetry/event-reasons.ts';

const describeProof = (p: FencingProof): string => `${p.kind}: ${p.source}`;

/** Concurrent reconciles; each only decides and starts runs, so a few suffice. */
const ENGINE_WORKERS = 2;

/** The Event `action` of the reasons that are not part of a recovery run ('Recover'). */
const ACTIONS: Record<string, string> = {
  [EVENT_REASONS.recoveryIgnored]: 'Decide',
  [EVENT_REASONS.recoveryHeld]: 'Decide',
  [EVENT_REASONS.recoveryReleased]: 'Decide',
  [EVENT_REASONS.recoveryExpired]: 'Expire',
  [EVENT_REASONS.serversUnlocked]: 'Unlock',
  [EVENT_REASONS.unlockFailed]: 'Unlock',
  [EVENT_REASONS.hostOnMaintenance]: 'SetMaintenance',
  [EVENT_REASONS.serviceDisabled]: 'DisableService',
  [EVENT_REASONS.hostFenced]: 'Fence',
  [EVENT_REASONS.fencingFailed]: 'Fence',
};

function eventSink(recorder: EventRecorder): EngineEvents {
  const ref = (o: Notification | HaHost) => ({
    apiVersion: API_VERSION,
    kind: o.kind,
    name: o.metadata.name ?? '',
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
  });
  const record = (o: Notification | HaHost, type: 'Normal' | 'Warning', reason: string, note: string) =>
    recorder.record({ regarding: ref(o), type, reason, action: ACTIONS[reason] ?? 'Recover', note });
  return { onNotification: record, onHost: record };
}

export async function createComponent(ctx: AppContext): Promise<Component> {
  const { kube, namespace, config, identity } = ctx;
  const log = ctx.log.child({ component: 'engine' });
  registerEngineMetrics(ctx.metrics);
  const recorder = new EventRecorder({ kube, reportingInstance: identity, log });
  const op = config.operator;
  if (!ctx.nova) log.warn('no OpenStack credentials: notifications that need Nova will end in error');
  // The process's manager: shared caches (hosts and segments are the API's too) and leader election.
  const { manager } = ctx;
  // Its Node cache is opened on first use (a requireFencing segment); the manager starts it then, and stops it.
  const nodes = new NodeDirectory({ kube, informers: manager.informerFactory, log });
  const approvals = new ApprovalGuard({
    kube,
    bindingName: op.safety_overrides_policy,
    log,
    metrics: ctx.metrics,
  });
  // Looked at once at start, so a missing policy shows (log, gauge, alert) before anyone approves anything.
  void approvals.unguardedReason();

  const engine = createEngine({
    kube,
    namespace,
    config,
    ...(ctx.nova ? { nova: instrumentNova(ctx.nova) } : {}),
    log: ctx.log,
    identity,
    manager,
    workers: ENGINE_WORKERS,
    events: eventSink(recorder),
    driver: taskflowDriver({ onEvacuation: countEvacuation }),
    approvalGuard: approvals,
    vmoveIds: createIdAllocator(kube, namespace, 'vmoves', op.id_block_size),
    // requireFencing segments: the same proofs the Medik8s remediator accepts
    // (FAR FenceAgentActionSucceeded, SNR time, a remediation that verified
    // fencing, or a person's audited approval annotation on the Notification).
    fencing: async (n, hostName) => {
      const v = await fencingProofFor(hostName, {
        kube,
        remediationNamespace: namespace,
        approvalOn: { meta: n.metadata, kind: 'Notification' },
        hostNodes: (host) => nodes.hostNodes(host),
        approvalGuard: approvals,
      });
      return v.proven ? { proven: true, proof: describeProof(v.proof) } : { proven: false, missing: v.missing };
    },
  });

  manager.onStop(async () => {
    nodes.stop();
    await recorder.flush();
  });
  // The process starts its manager once every component is created: the caches sync (retried for as
  // long as it takes; ready() reports it), then the engine campaigns for its Lease.
  log.info({ namespace, lease: RESOURCES.leases.plural }, 'engine component started');

  return {
    name: 'engine',
    ready: () => engine.ready(),
    // The process's manager stops the engine (it hands its runs over) after every component stopped serving.
    stop: async () => undefined,
  };
}
