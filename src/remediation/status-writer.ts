// How a MasakariRemediation says what happened: its status (conditions
// compare-and-swapped on resourceVersion, then put back into the cache so the
// next pass reads its own write) and its Events. Kept apart from the
// reconciler's stages so that each stage reads as its decisions, and so that
// the fencing step (prove-fencing.ts) writes the same way.
import type { KubeClient } from '../k8s/client.ts';
import { REMEDIATION_RESOURCES } from '../k8s/resources.ts';
import { FIELD_MANAGERS } from '../model/constants.ts';
import { EVENT_PREFIX, REMEDIATION_CONDITIONS, REMEDIATION_KINDS } from '../model/remediation-constants.ts';
import type { MasakariRemediation, MasakariRemediationStatus } from '../model/remediation-types.ts';
import type { ConditionInput } from '../runtime/conditions.ts';
import { sameConditions, setCondition } from '../runtime/conditions.ts';
import type { EventInput } from '../runtime/events.ts';

/** The cache the reconciler reads from and writes its results back into (read-your-writes). */
export interface RemediationCache {
  get(name: string): MasakariRemediation | undefined;
  upsertLocal(obj: MasakariRemediation): void;
}

export interface StatusWriterOptions {
  kube: KubeClient;
  /** Where the MasakariRemediations live (the operator's namespace). */
  namespace: string;
  cache: RemediationCache;
  events: { record(e: EventInput): void };
  now: () => number;
}

export const REMEDIATION_RESOURCE = REMEDIATION_RESOURCES.remediations;
export const REMEDIATION_MANAGER = FIELD_MANAGERS.remediation;

export class RemediationStatusWriter {
  constructor(private readonly options: StatusWriterOptions) {}

  /** The remediation's conditions with these set (observedGeneration = its generation). */
  conditions(r: MasakariRemediation, inputs: ConditionInput[]) {
    const now = new Date(this.options.now());
    return inputs.reduce(
      (list, c) => setCondition(list, { ...c, observedGeneration: r.metadata.generation }, now),
      r.status?.conditions,
    );
  }

  /** Processing=True with this reason; written only when something changes (a waiting loop writes nothing). */
  async setProcessing(r: MasakariRemediation, reason: string, message: string, hostName?: string): Promise<void> {
    const conditions = this.conditions(r, [
      { type: REMEDIATION_CONDITIONS.processing, status: 'True', reason, message },
    ]);
    const sameHost = hostName === undefined || r.status?.hostName === hostName;
    if (sameHost && sameConditions(conditions, r.status?.conditions)) return;
    await this.write(r, { ...r.status, ...(hostName ? { hostName } : {}), conditions });
  }

  async write(r: MasakariRemediation, status: MasakariRemediationStatus): Promise<MasakariRemediation> {
    const updated = await this.options.kube.replaceStatus<MasakariRemediation>(
      REMEDIATION_RESOURCE,
      this.options.namespace,
      r.metadata.name!,
      { ...r, status },
      { fieldManager: REMEDIATION_MANAGER },
    );
    this.options.cache.upsertLocal(updated);
    return updated;
  }

  event(r: MasakariRemediation, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    this.options.events.record({
      regarding: {
        apiVersion: r.apiVersion,
        kind: REMEDIATION_KINDS.remediation.kind,
        name: r.metadata.name!,
        namespace: this.options.namespace,
        uid: r.metadata.uid,
      },
      type,
      reason,
      action,
      note: `${EVENT_PREFIX} ${note}`,
    });
  }
}
