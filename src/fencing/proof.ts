// The fencing gate: Masakari must never evacuate a host that might still run
// its instances (two copies of a VM writing one disk). Before a COMPUTE_HOST
// notification is filed, one of these proofs must exist for the host's Node:
//   FenceAgentsRemediation  a FAR for the node with FenceAgentActionSucceeded=True
//   SelfNodeRemediation     an SNR for the node whose timeAssumedRebooted has
//                           passed, or older than the configured safe time
//   ManualApproval          annotation masakari.openkeel.io/fencing-approved-by
//                           (a person vouches; accepted whatever proof is required)
// The evaluators are pure; the readers tolerate absent CRDs (404 = no proof).
// fencingProofFor() is the seam for the API path (segment spec.requireFencing).
// src/fencing/ is shared by the Medik8s remediator and the engine's fencing
// gate, so neither feature imports the other.
import type { KubeClient } from '../k8s/client.ts';
import { KubeError, isNotFound } from '../k8s/client.ts';
import { listAllPages } from '../k8s/list-pages.ts';
import { RESOURCES } from '../k8s/resources.ts';
import {
  FAR_FENCED_CONDITION,
  REMEDIATION_ANNOTATIONS,
  REMEDIATION_CONDITIONS,
  REMEDIATION_REASONS,
} from '../model/remediation-constants.ts';
import { REMEDIATION_RESOURCES } from '../k8s/resources.ts';
import type {
  FenceAgentsRemediationLike,
  FencingProofKind,
  MasakariRemediation,
  NodeLike,
  SelfNodeRemediationLike,
} from '../model/remediation-types.ts';
import type { ObjectMeta } from '../model/types.ts';
import type { HostNodes } from './node.ts';
import { hostNodes, nodeNameOf } from './node.ts';
import { systemNowMs } from '../time/clock.ts';

export interface FencingProof {
  kind: FencingProofKind;
  /** Reason of the FencingVerified condition. */
  reason: string;
  /** What proved it, e.g. "FenceAgentsRemediation far/worker-1". */
  source: string;
  /** Human-readable: what was seen, and for a manual approval who and through which field manager. */
  message: string;
  /** ManualApproval: the annotation's value. */
  approvedBy?: string;
}

export type FencingVerdict = { proven: true; proof: FencingProof } | { proven: false; missing: string };

/** A list of another operator's objects, or why there is none to look at. */
export type Evidence<T> = { items: T[] } | { unavailable: string };

const ref = (m: ObjectMeta): string => `${m.namespace ? `${m.namespace}/` : ''}${m.name ?? m.generateName ?? '?'}`;

/** Medik8s CRs name their node by annotation (generateName'd CRs) or by their own name. */
const forNode = (m: ObjectMeta, node: string): boolean => nodeNameOf(m) === node;

/** A FAR for the node, not being deleted (deletion means NHC saw the node healthy), whose agent succeeded. */
export function farProof(fars: FenceAgentsRemediationLike[], node: string): FencingProof | undefined {
  for (const far of fars) {
    if (!forNode(far.metadata, node) || far.metadata.deletionTimestamp) continue;
    const c = far.status?.conditions?.find((x) => x.type === FAR_FENCED_CONDITION);
    if (c?.status !== 'True') continue;
    return {
      kind: 'FenceAgentsRemediation',
      reason: REMEDIATION_REASONS.fencedByFenceAgent,
      source: `FenceAgentsRemediation ${ref(far.metadata)}`,
      message: `FenceAgentsRemediation ${ref(far.metadata)} reports ${FAR_FENCED_CONDITION}=True since ${c.lastTransitionTime}`,
    };
  }
  return undefined;
}

/** An SNR for the node that assumes the node rebooted, by its own word or by the configured safe time. */
export function snrProof(
  snrs: SelfNodeRemediationLike[],
  node: string,
  nowMs: number,
  safeTimeSeconds?: number,
): FencingProof | undefined {
  for (const snr of snrs) {
    if (!forNode(snr.metadata, node) || snr.metadata.deletionTimestamp) continue;
    const assumed = Date.parse(snr.status?.timeAssumedRebooted ?? '');
    if (Number.isFinite(assumed) && assumed <= nowMs) {
      return {
        kind: 'SelfNodeRemediation',
        reason: REMEDIATION_REASONS.fencedBySelfNodeRemediation,
        source: `SelfNodeRemediation ${ref(snr.metadata)}`,
        message: `SelfNodeRemediation ${ref(snr.metadata)} assumes the node rebooted at ${snr.status?.timeAssumedRebooted}`,
      };
    }
    const created = Date.parse(snr.metadata.creationTimestamp ?? '');
    if (safeTimeSeconds && Number.isFinite(created) && created + safeTimeSeconds * 1000 <= nowMs) {
      return {
        kind: 'SelfNodeRemediation',
        reason: REMEDIATION_REASONS.fencedBySelfNodeRemediation,
        source: `SelfNodeRemediation ${ref(snr.metadata)}`,
        message: `SelfNodeRemediation ${ref(snr.metadata)} exists since ${snr.metadata.creationTimestamp}, more than selfNodeRemediationSafeTimeSeconds=${safeTimeSeconds} ago`,
      };
    }
  }
  return undefined;
}

/** Which field manager last wrote the approval annotation (who, as far as the object itself can tell). */
function approvalManager(meta: ObjectMeta): string | undefined {
  const key = `f:${REMEDIATION_ANNOTATIONS.fencingApprovedBy}`;
  for (const entry of (meta.managedFields ?? []) as Array<{ manager?: string; fieldsV1?: unknown }>) {
    const annotations = (entry.fieldsV1 as { 'f:metadata'?: { 'f:annotations'?: Record<string, unknown> } })?.[
      'f:metadata'
    ]?.['f:annotations'];
    if (annotations && key in annotations) return entry.manager;
  }
  return undefined;
}

/** The audited override: annotation fencing-approved-by with a non-blank value. */
export function manualApproval(meta: ObjectMeta, kindName: string): FencingProof | undefined {
  const who = meta.annotations?.[REMEDIATION_ANNOTATIONS.fencingApprovedBy]?.trim();
  if (!who) return undefined;
  const manager = approvalManager(meta);
  return {
    kind: 'ManualApproval',
    reason: REMEDIATION_REASONS.fencedByManualApproval,
    source: `annotation ${REMEDIATION_ANNOTATIONS.fencingApprovedBy} on ${kindName} ${ref(meta)}`,
    message: `fencing approved by "${who}" through annotation ${REMEDIATION_ANNOTATIONS.fencingApprovedBy}${manager ? ` (written by field manager ${manager})` : ''}`,
    approvedBy: who,
  };
}

export interface FencingInput {
  required: FencingProofKind;
  node: string;
  nowMs: number;
  selfNodeRemediationSafeTimeSeconds?: number;
  /** The object a person may annotate (the MasakariRemediation, or the Notification on the API path). */
  approvalOn?: { meta: ObjectMeta; kind: string };
  fars?: Evidence<FenceAgentsRemediationLike>;
  snrs?: Evidence<SelfNodeRemediationLike>;
}

/** The decision of the gate, with a message that says exactly what is missing. */
export function evaluateFencing(i: FencingInput): FencingVerdict {
  const approval = i.approvalOn ? manualApproval(i.approvalOn.meta, i.approvalOn.kind) : undefined;
  if (approval) return { proven: true, proof: approval };
  const approvalHint = `or a person vouches with annotation ${REMEDIATION_ANNOTATIONS.fencingApprovedBy}=<who>`;
  switch (i.required) {
    case 'FenceAgentsRemediation': {
      const fars = i.fars ?? { items: [] };
      if ('unavailable' in fars) return { proven: false, missing: `${fars.unavailable}; ${approvalHint}` };
      const proof = farProof(fars.items, i.node);
      if (proof) return { proven: true, proof };
      const pending = fars.items.filter((f) => forNode(f.metadata, i.node) && !f.metadata.deletionTimestamp);
      const seen = pending.length
        ? `FenceAgentsRemediation ${pending.map((f) => ref(f.metadata)).join(', ')} has not reported ${FAR_FENCED_CONDITION}=True yet`
        : `no FenceAgentsRemediation exists for node ${i.node}`;
      return { proven: false, missing: `${seen}; waiting for ${FAR_FENCED_CONDITION}=True ${approvalHint}` };
    }
    case 'SelfNodeRemediation': {
      const snrs = i.snrs ?? { items: [] };
      if ('unavailable' in snrs) return { proven: false, missing: `${snrs.unavailable}; ${approvalHint}` };
      const proof = snrProof(snrs.items, i.node, i.nowMs, i.selfNodeRemediationSafeTimeSeconds);
      if (proof) return { proven: true, proof };
      const pending = snrs.items.filter((s) => forNode(s.metadata, i.node) && !s.metadata.deletionTimestamp);
      const seen = pending.length
        ? `SelfNodeRemediation ${pending.map((s) => ref(s.metadata)).join(', ')} does not assume the node rebooted yet`
        : `no SelfNodeRemediation exists for node ${i.node}`;
      return { proven: false, missing: `${seen}; waiting for its timeAssumedRebooted to pass ${approvalHint}` };
    }
    case 'ManualApproval':
      return {
        proven: false,
        missing: `fencingProof is ManualApproval: waiting for a person to confirm node ${i.node} is fenced with annotation ${REMEDIATION_ANNOTATIONS.fencingApprovedBy}=<who>`,
      };
  }
}

/**
 * Lists another operator's objects in every namespace this process may list.
 * 404 (CRD not installed) and 403 (no right to list) are answers, not errors:
 * they mean "no proof", said in the returned reason.
 */
export async function readEvidence<T>(
  kube: KubeClient,
  resource: { group: string; version: string; plural: string; namespaced: boolean },
  kind: string,
): Promise<Evidence<T>> {
  try {
    return { items: (await listAllPages<T>(kube, resource, undefined)).items };
  } catch (err) {
    if (isNotFound(err)) return { unavailable: `${kind} (${resource.group}) is not installed in this cluster` };
    if (err instanceof KubeError && err.code === 403) {
      return { unavailable: `not allowed to list ${resource.plural}.${resource.group} in all namespaces (RBAC)` };
    }
    throw err;
  }
}

/** Reads only the evidence the required proof needs. */
export async function gatherEvidence(
  kube: KubeClient,
  required: FencingProofKind,
): Promise<Pick<FencingInput, 'fars' | 'snrs'>> {
  switch (required) {
    case 'FenceAgentsRemediation':
      return { fars: await readEvidence(kube, REMEDIATION_RESOURCES.fenceAgentsRemediations, required) };
    case 'SelfNodeRemediation':
      return { snrs: await readEvidence(kube, REMEDIATION_RESOURCES.selfNodeRemediations, required) };
    default:
      return {};
  }
}

export interface FencingProofForOptions {
  kube: KubeClient;
  /** Proofs accepted, tried in order; default FenceAgentsRemediation then SelfNodeRemediation. */
  accept?: FencingProofKind[];
  /** Also accept a MasakariRemediation in this namespace whose FencingVerified is True (the remediator's verdict). */
  remediationNamespace?: string;
  /** Where a person may vouch instead (API path: the Notification). */
  approvalOn?: { meta: ObjectMeta; kind: string };
  /**
   * Why an approval may not be honoured now (the policy that lets only
   * approvers write it is missing: ApprovalGuard); undefined: honour it.
   */
  approvalGuard?: { unguardedReason(): Promise<string | undefined> };
  selfNodeRemediationSafeTimeSeconds?: number;
  now?: () => number;
  /**
   * The Nodes that run a host (hostNodes's rule). The engine answers it from
   * a Node cache (NodeDirectory); default: one list of every Node.
   */
  hostNodes?: (hostName: string) => Promise<HostNodes>;
}

/** The remediator already proved fencing for this node (condition FencingVerified=True on a live MasakariRemediation). */
export function remediationProof(remediations: MasakariRemediation[], node: string): FencingProof | undefined {
  for (const r of remediations) {
    if (r.metadata.deletionTimestamp || nodeNameOf(r.metadata) !== node) continue;
    const c = r.status?.conditions?.find((x) => x.type === REMEDIATION_CONDITIONS.fencingVerified);
    if (c?.status !== 'True') continue;
    return {
      kind: (r.spec?.fencingProof ?? 'FenceAgentsRemediation') as FencingProofKind,
      reason: c.reason,
      source: `MasakariRemediation ${ref(r.metadata)}`,
      message: `MasakariRemediation ${ref(r.metadata)} verified fencing: ${c.message}`,
    };
  }
  return undefined;
}

/**
 * The API-path gate (segment spec.requireFencing): is the Masakari host
 * `hostName` proven fenced? The host's Node is the Node annotated
 * masakari.openkeel.io/compute-host=<hostName>, else the Node of that name,
 * and there must be exactly one: when several Nodes map to the host, a proof
 * for one of them says nothing about the host, so nothing counts, not even a
 * person's approval (who approves a host whose Node is in doubt?).
 * Never throws for missing CRDs or a missing Node (those are "not proven");
 * throws KubeError for API failures a retry can fix.
 */
export async function fencingProofFor(hostName: string, opts: FencingProofForOptions): Promise<FencingVerdict> {
  const { kube } = opts;
  const nowMs = (opts.now ?? systemNowMs)();
  const mapped = opts.hostNodes
    ? await opts.hostNodes(hostName)
    : hostNodes((await kube.list<NodeLike>(RESOURCES.nodes, undefined)).items, hostName);
  if (mapped.nodes.length > 1) return { proven: false, missing: mapped.problem ?? '' };
  const missing: string[] = [];
  if (opts.approvalOn) {
    const approval = manualApproval(opts.approvalOn.meta, opts.approvalOn.kind);
    const unguarded = approval ? await opts.approvalGuard?.unguardedReason() : undefined;
    if (approval && !unguarded) return { proven: true, proof: approval };
    if (approval) {
      missing.push(
        `${REMEDIATION_ANNOTATIONS.fencingApprovedBy} ("${approval.approvedBy}") is not honoured: ${unguarded}`,
      );
    }
  }
  const [node] = mapped.nodes;
  if (mapped.nodes.length === 0 || !node) {
    return {
      proven: false,
      missing: [...missing, mapped.problem ?? `no Node maps to host ${hostName}`].join('; '),
    };
  }
  if (opts.remediationNamespace) {
    try {
      const list = await kube.list<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, opts.remediationNamespace);
      const proof = remediationProof(list.items, node);
      if (proof) return { proven: true, proof };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  for (const required of opts.accept ?? (['FenceAgentsRemediation', 'SelfNodeRemediation'] as FencingProofKind[])) {
    const verdict = evaluateFencing({
      required,
      node,
      nowMs,
      selfNodeRemediationSafeTimeSeconds: opts.selfNodeRemediationSafeTimeSeconds,
      ...(await gatherEvidence(kube, required)),
    });
    if (verdict.proven) return verdict;
    missing.push(verdict.missing);
  }
  return { proven: false, missing: missing.join('; ') || `no accepted fencing proof for host ${hostName}` };
}
