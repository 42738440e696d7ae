// Reconciles one MasakariRemediation (key = metadata.name in the operator's
// namespace). Level-based: every pass reads the object and the world afresh
// and moves at most a few steps, writing status (compare-and-swap on
// resourceVersion) after each side effect so a restarted leader resumes:
//   start   finalizer, then Processing=True / Succeeded=Unknown (RemediationStarted)
//   gate    Node (not excluded) → host, medik8s node lease, fencing proof, force-down, notification
//   follow  the Notification's phase → Succeeded=True|False
//   finish  Succeeded=True|False, Processing=False; nothing more happens
//   delete  undo what the remediation caused, as the segment's returnToService
//           says (return-on-delete.ts), then drop the finalizer
// The rules themselves are in decide.ts, src/fencing/proof.ts, lease.ts and
// notify.ts; the fencing step is prove-fencing.ts, and every status write and
// Event goes through status-writer.ts.
import type { Logger } from 'pino';
import type { HaService } from '../domain/ha-service.ts';
import { hostOnMaintenance } from '../domain/messages.ts';
import type { KubeClient } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import {
  MEDIK8S_LABELS,
  MEDIK8S_LEASE_NAMESPACE,
  REMEDIATION_CONDITIONS,
  REMEDIATION_FINALIZER,
  REMEDIATION_REASONS,
} from '../model/remediation-constants.ts';
import type { MasakariRemediation, NodeLike } from '../model/remediation-types.ts';
import type { Notification } from '../model/types.ts';
import type { NovaClient } from '../openstack/types.ts';
import type { EventInput } from '../runtime/events.ts';
import { LeaseNotHeld } from '../runtime/lease-fence.ts';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../runtime/finalizers.ts';
import type { ReconcileResult } from '../runtime/types.ts';
import { forceDownComputeService } from './compute-service.ts';
import type { EffectiveSpec, Finish } from './decide.ts';
import { deadlineMs, effectiveSpec, isFinished, notificationOutcome, stage, waitDelayMs } from './decide.ts';
import { leaseBlocker, NodeLeaseUnreadable, readNodeLease } from './lease.ts';
import { computeHostOf, excludedFromRemediation, nodeNameOf } from '../fencing/node.ts';
import { fileHostNotification, findOwnNotification } from './notify.ts';
import { rfc3339Seconds } from '../time/format.ts';
import type { BmcFactory } from '../fencing/return-to-service.ts';
import { returnOnDelete } from './return-on-delete.ts';
import { proveFencing } from './prove-fencing.ts';
import { REMEDIATION_MANAGER, REMEDIATION_RESOURCE, RemediationStatusWriter } from './status-writer.ts';
import type { RemediationCache } from './status-writer.ts';
import { bmcForHost } from '../fencing/bmc/factory.ts';

export interface RemediationReconcilerOptions {
  kube: KubeClient;
  /** Where the MasakariRemediations live (the operator's namespace). */
  namespace: string;
  cache: RemediationCache;
  /** HaService over the repository of a segment namespace (created on first use). */
  serviceFor: (namespace: string) => Promise<HaService>;
  nova?: NovaClient;
  events: { record(e: EventInput): void };
  log: Logger;
  /** [DEFAULT]/duplicate_notification_detection_interval: how far back an adopted notification may be. */
  duplicateWindowSeconds: number;
  /** [operator]/medik8s_lease_namespace: where NHC and Node Maintenance keep the node leases. */
  leaseNamespace?: string;
  /** How often a filed notification is looked at; default 5 s. */
  followIntervalMs?: number;
  /** Why a fencing-approved-by may not be honoured now (ApprovalGuard); absent: always honoured. */
  approvalGuard?: { unguardedReason(): Promise<string | undefined> };
  /** Builds the Bmc of a host with spec.fencing, for the return to service on delete. */
  bmcFor?: BmcFactory;
  now?: () => number;
}

/** Passes through the stage machine per reconcile (start → gate → ... without waiting for a watch event). */
const MAX_STEPS = 4;

export class RemediationReconciler {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly followIntervalMs: number;
  private readonly status: RemediationStatusWriter;

  constructor(private readonly options: RemediationReconcilerOptions) {
    this.log = options.log.child({ controller: 'remediation' });
    this.now = options.now ?? Date.now;
    this.followIntervalMs = options.followIntervalMs ?? 5_000;
    this.status = new RemediationStatusWriter({ ...options, now: this.now });
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    let r = this.options.cache.get(key);
    for (let step = 0; r && step < MAX_STEPS && !signal.aborted; step++) {
      const spec = effectiveSpec(r.spec, this.options.namespace);
      const s = stage(r, spec, this.now(), hasFinalizer(r, REMEDIATION_FINALIZER));
      switch (s.kind) {
        case 'done':
          return;
        case 'delete':
          await this.onDelete(r);
          return;
        case 'start':
          r = await this.start(r);
          continue;
        case 'finish':
          await this.finish(r, s.finish);
          return;
        case 'gate': {
          const current = r;
          const next = await this.surfacing(current, () => this.gate(current, spec, signal));
          if (!('r' in next)) return next;
          r = next.r;
          continue;
        }
        case 'follow': {
          const current = r;
          return this.surfacing(current, () => this.follow(current, spec));
        }
      }
    }
    return r && !signal.aborted ? { requeueAfterMs: 1 } : undefined;
  };

  // ------------------------------------------------------------------ stages

  private async start(r: MasakariRemediation): Promise<MasakariRemediation> {
    if (!hasFinalizer(r, REMEDIATION_FINALIZER)) {
      r = await addFinalizer(this.options.kube, REMEDIATION_RESOURCE, r, REMEDIATION_FINALIZER, REMEDIATION_MANAGER);
      this.options.cache.upsertLocal(r);
    }
    if (r.status?.startedAt) return r;
    const node = nodeNameOf(r.metadata) ?? '';
    const message = `remediating node ${node}: waiting for proof of fencing before Masakari evacuates it`;
    const updated = await this.status.write(r, {
      ...r.status,
      nodeName: node,
      startedAt: rfc3339Seconds(new Date(this.now())),
      conditions: this.status.conditions(r, [
        { type: REMEDIATION_CONDITIONS.processing, status: 'True', reason: REMEDIATION_REASONS.started, message },
        { type: REMEDIATION_CONDITIONS.succeeded, status: 'Unknown', reason: REMEDIATION_REASONS.started, message },
      ]),
    });
    this.status.event(updated, 'Normal', REMEDIATION_REASONS.started, 'Start', message);
    return updated;
  }

  /** Everything before the notification exists. Returns the updated object to go on with, or when to look again. */
  private async gate(
    r: MasakariRemediation,
    spec: EffectiveSpec,
    signal: AbortSignal,
  ): Promise<{ r: MasakariRemediation } | ReconcileResult> {
    const nodeName = nodeNameOf(r.metadata) ?? '';
    const node = await this.getNode(nodeName);
    if (!node) {
      return this.finishAndStop(r, {
        succeeded: false,
        reason: REMEDIATION_REASONS.nodeNotFound,
        message: `Node ${nodeName} does not exist; nothing to remediate`,
      });
    }
    const hostName = computeHostOf(node);
    if (excludedFromRemediation(node)) {
      const message = `Node ${nodeName} has label ${MEDIK8S_LABELS.excludeFromRemediation}=true; nothing is forced down or filed while it is set`;
      await this.status.setProcessing(r, REMEDIATION_REASONS.nodeExcluded, message);
      this.status.event(r, 'Normal', REMEDIATION_REASONS.nodeExcluded, 'Wait', message);
      return this.waitAgain(r, spec);
    }
    const service = await this.options.serviceFor(spec.segmentNamespace);
    const host = service.repo.getHostByName(hostName);
    if (!host) {
      return this.finishAndStop(r, {
        succeeded: false,
        reason: REMEDIATION_REASONS.hostNotFound,
        message: `Host with name ${hostName} could not be found in namespace ${spec.segmentNamespace} (Node ${nodeName} maps to it${hostName === nodeName ? ' by name' : ' by annotation'}); register it in a failover segment`,
      });
    }

    // Masakari refuses notifications from a host on maintenance; fail before forcing anything down. The
    // exception is our own notification (filed before a crash) having put it there: that one is adopted below.
    const ours = r.status?.fencedAt
      ? findOwnNotification(service, hostName, r.status.fencedAt, this.options.duplicateWindowSeconds)
      : undefined;
    if (host.on_maintenance && !ours) {
      return this.finishAndStop(r, {
        succeeded: false,
        reason: REMEDIATION_REASONS.hostOnMaintenance,
        message: hostOnMaintenance(hostName, 'COMPUTE_HOST'),
      });
    }

    let nodeLease;
    try {
      nodeLease = await readNodeLease(
        this.options.kube,
        this.options.leaseNamespace ?? MEDIK8S_LEASE_NAMESPACE,
        nodeName,
      );
    } catch (e) {
      if (!(e instanceof NodeLeaseUnreadable)) throw e;
      await this.status.setProcessing(r, REMEDIATION_REASONS.nodeLeaseUnreadable, e.message, hostName);
      this.status.event(r, 'Warning', REMEDIATION_REASONS.nodeLeaseUnreadable, 'Wait', e.message);
      return this.waitAgain(r, spec);
    }
    const holder = leaseBlocker(nodeLease, this.now());
    if (holder) {
      const message = `the medik8s node lease of ${nodeName} is held by ${holder} (e.g. Node Maintenance); not acting while it holds it`;
      await this.status.setProcessing(r, REMEDIATION_REASONS.nodeLeaseHeld, message, hostName);
      this.status.event(r, 'Normal', REMEDIATION_REASONS.nodeLeaseHeld, 'Wait', message);
      return this.waitAgain(r, spec);
    }

    if (!r.status?.fencedAt) {
      const fenced = await proveFencing(
        { ...this.options, status: this.status, log: this.log, now: this.now },
        r,
        spec,
        nodeName,
        hostName,
      );
      if (!fenced) return this.waitAgain(r, spec);
      r = fenced;
    }

    if (spec.forceDownComputeService) {
      const forced = await forceDownComputeService(this.options.nova, hostName, signal);
      if (!forced.ok)
        return this.finishAndStop(r, { succeeded: false, reason: forced.reason, message: forced.message });
      if (!forced.already) {
        this.status.event(
          r,
          'Normal',
          'ComputeServiceForcedDown',
          'ForceDown',
          `nova-compute service ${forced.serviceId} on ${hostName} forced down`,
        );
      }
    }

    const filed = await fileHostNotification(
      service,
      hostName,
      r.status!.fencedAt!,
      this.options.duplicateWindowSeconds,
    );
    if ('pending' in filed) {
      this.log.info(
        { remediation: r.metadata.name, host: hostName },
        `waiting for the existing notification: ${filed.pending}`,
      );
      return { requeueAfterMs: 1_000 };
    }
    if (!filed.ok) return this.finishAndStop(r, { succeeded: false, reason: filed.reason, message: filed.message });
    const { record, adopted } = filed;
    const reason = adopted ? REMEDIATION_REASONS.notificationAdopted : REMEDIATION_REASONS.notificationCreated;
    const message = `${adopted ? 'adopted the existing' : 'filed'} COMPUTE_HOST notification ${record.notification_uuid} (${spec.segmentNamespace}/${record.k8sName}) for host ${hostName}`;
    r = await this.status.write(r, {
      ...r.status,
      hostName,
      notificationName: record.k8sName,
      notificationUuid: record.notification_uuid,
      conditions: this.status.conditions(r, [
        {
          type: REMEDIATION_CONDITIONS.processing,
          status: 'True',
          reason: REMEDIATION_REASONS.recoveryInProgress,
          message,
        },
      ]),
    });
    this.status.event(r, 'Normal', reason, 'Notify', message);
    return { r };
  }

  private async follow(r: MasakariRemediation, spec: EffectiveSpec): Promise<ReconcileResult> {
    const name = r.status!.notificationName!;
    const uuid = r.status?.notificationUuid ?? name;
    let n: Notification | undefined;
    try {
      n = await this.options.kube.get<Notification>(RESOURCES.notifications, spec.segmentNamespace, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const outcome = notificationOutcome(n, uuid);
    if ('running' in outcome) {
      await this.status.setProcessing(r, REMEDIATION_REASONS.recoveryInProgress, outcome.running);
      const deadline = deadlineMs(r, spec);
      const untilDeadline = deadline === undefined ? this.followIntervalMs : deadline - this.now() + 100;
      return { requeueAfterMs: Math.max(100, Math.min(this.followIntervalMs, untilDeadline)) };
    }
    await this.finish(r, outcome);
    return {};
  }

  private async finish(r: MasakariRemediation, f: Finish): Promise<void> {
    const reasonOfProcessing = f.succeeded ? REMEDIATION_REASONS.finished : f.reason;
    await this.status.write(r, {
      ...r.status,
      finishedAt: rfc3339Seconds(new Date(this.now())),
      conditions: this.status.conditions(r, [
        {
          type: REMEDIATION_CONDITIONS.succeeded,
          status: f.succeeded ? 'True' : 'False',
          reason: f.reason,
          message: f.message,
        },
        { type: REMEDIATION_CONDITIONS.processing, status: 'False', reason: reasonOfProcessing, message: f.message },
      ]),
    });
    this.status.event(r, f.succeeded ? 'Normal' : 'Warning', f.reason, f.succeeded ? 'Succeed' : 'Fail', f.message);
  }

  private async finishAndStop(r: MasakariRemediation, f: Finish): Promise<ReconcileResult> {
    await this.finish(r, f);
    return {};
  }

  /**
   * NodeHealthCheck deletes the CR once the node is healthy (or the NHC is
   * gone). What the remediation caused in Nova is undone only as the
   * segment's returnToService policy says, and only after its recovery
   * finished (return-on-delete.ts); a running notification is the engine's
   * to finish. The finalizer goes either way: the Event says what was left.
   */
  private async onDelete(r: MasakariRemediation): Promise<void> {
    if (!hasFinalizer(r, REMEDIATION_FINALIZER)) return;
    const open = r.status?.notificationUuid && !r.status.finishedAt;
    const { kube, bmcFor } = this.options;
    const returned = await returnOnDelete(
      { ...this.options, bmcFor: bmcFor ?? ((host) => bmcForHost(kube, host)) },
      r,
      effectiveSpec(r.spec, this.options.namespace).segmentNamespace,
    ).catch((e: unknown) => {
      // Deposed: the finalizer stays, so the Lease holder looks at the deletion again and returns the host.
      if (e instanceof LeaseNotHeld) throw e;
      return `host ${r.status?.hostName ?? ''} could not be returned to service: ${e instanceof Error ? e.message : String(e)}`;
    });
    const note = `deleted; finalizer removed${open ? `; notification ${r.status!.notificationUuid} continues in the engine` : ''}${returned ? `; ${returned}` : ''}`;
    const updated = await removeFinalizer(
      this.options.kube,
      REMEDIATION_RESOURCE,
      r,
      REMEDIATION_FINALIZER,
      REMEDIATION_MANAGER,
    );
    if (updated) this.options.cache.upsertLocal(updated);
    this.status.event(r, 'Normal', 'RemediationDeleted', 'Cleanup', note);
  }

  // ------------------------------------------------------------------ helpers

  /**
   * Runs a stage; a failure a retry may fix (API server, Nova unreachable) is
   * rethrown for the controller's backoff, after its text is put into the
   * Processing message so `kubectl get mrem -o wide` shows why nothing moves.
   * The recovery deadline still applies and ends the retries.
   */
  private async surfacing<T>(r: MasakariRemediation, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      // Deposed: nothing to report from here; the Lease holder takes the remediation over.
      if (err instanceof LeaseNotHeld) throw err;
      const current = this.options.cache.get(r.metadata.name!) ?? r;
      const processing = current.status?.conditions?.find((c) => c.type === REMEDIATION_CONDITIONS.processing);
      const text = err instanceof Error ? err.message : String(err);
      if (processing && !isFinished(current)) {
        const message = `${processing.message.replace(/ \(retrying after: .*\)$/s, '')} (retrying after: ${text.slice(0, 512)})`;
        await this.status
          .setProcessing(current, processing.reason, message)
          .catch((e: unknown) => this.log.debug({ err: e }, 'could not record the retry in Processing'));
      }
      throw err;
    }
  }

  private waitAgain(r: MasakariRemediation, spec: EffectiveSpec): ReconcileResult {
    const started = Date.parse(r.status?.startedAt ?? '') || this.now();
    return { requeueAfterMs: waitDelayMs(started, this.now(), deadlineMs(r, spec)) };
  }

  private async getNode(name: string): Promise<NodeLike | undefined> {
    if (!name) return undefined;
    try {
      return await this.options.kube.get<NodeLike>(RESOURCES.nodes, undefined, name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
