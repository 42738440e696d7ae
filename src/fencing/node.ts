// Which Node a remediation is about, and which Masakari host a Node runs.
//   Node of a Medik8s CR: annotation remediation.medik8s.io/node-name, else
//   metadata.name (NHC names CRs <node>-<random> when the template allows
//   several templates of a kind, so the name alone is not enough).
//   Host of a Node: annotation masakari.openkeel.io/compute-host, else the
//   Node's name (the usual case: kubelet and nova-compute share the hostname).
//   One Node per host: a host that more than one Node maps to has no Node
//   (hostNodes), so a proof that one of them is fenced never stands for the
//   host (docs/operations.md "Fencing gate: one Node per host").
//   Excluded Node: label remediation.medik8s.io/exclude-from-remediation=true.
import { MEDIK8S_ANNOTATIONS, MEDIK8S_LABELS, REMEDIATION_ANNOTATIONS } from '../model/remediation-constants.ts';
import type { NodeLike } from '../model/remediation-types.ts';
import type { ObjectMeta } from '../model/types.ts';

export function nodeNameOf(meta: ObjectMeta): string | undefined {
  const annotated = meta.annotations?.[MEDIK8S_ANNOTATIONS.nodeName]?.trim();
  return annotated || meta.name || undefined;
}

export function computeHostOf(node: NodeLike): string {
  const annotated = node.metadata.annotations?.[REMEDIATION_ANNOTATIONS.computeHost]?.trim();
  return annotated || (node.metadata.name ?? '');
}

/** Only the value "true" counts, as in NHC and SNR (NHC warns about an empty value and ignores it). */
export function excludedFromRemediation(node: NodeLike): boolean {
  return node.metadata.labels?.[MEDIK8S_LABELS.excludeFromRemediation] === 'true';
}

/** Nodes that run `hostName`: annotated ones first, then a Node of that name without a different annotation. */
export function nodesForHost(nodes: NodeLike[], hostName: string): string[] {
  const names = nodes.filter((n) => computeHostOf(n) === hostName).map((n) => n.metadata.name ?? '');
  return names.filter(Boolean);
}

/** The Node that runs a host, or why there is none to take a fencing proof from. */
export interface HostNodes {
  /** Every Node that maps to the host (nodesForHost's rule), sorted. */
  nodes: string[];
  /** Set unless exactly one Node maps to the host: why no fencing proof can count, and how to fix it. */
  problem?: string;
}

/**
 * The one-Node-per-host rule, from the Nodes that map to `hostName` and the
 * Node named `hostName` (if any, to say why it does not count when it is
 * annotated to another host).
 */
export function describeHostNodes(hostName: string, mapped: string[], sameNamed?: NodeLike): HostNodes {
  const nodes = [...new Set(mapped)].sort();
  const key = REMEDIATION_ANNOTATIONS.computeHost;
  if (nodes.length === 1) return { nodes };
  if (nodes.length === 0) {
    const elsewhere = sameNamed ? computeHostOf(sameNamed) : undefined;
    const problem =
      elsewhere && elsewhere !== hostName
        ? `no Node maps to host ${hostName}: Node ${hostName} is annotated ${key}=${elsewhere}, and no Node is annotated ${key}=${hostName}`
        : `no Node maps to host ${hostName} (neither annotation ${key}=${hostName} nor a Node of that name)`;
    return { nodes, problem };
  }
  return {
    nodes,
    problem:
      `host ${hostName} maps to more than one Node: ${nodes.join(', ')} (annotated ${key}=${hostName}, or named ` +
      `${hostName} without that annotation); a proof that one of them is fenced does not prove the host fenced, so ` +
      `no fencing proof counts (not even ${REMEDIATION_ANNOTATIONS.fencingApprovedBy}) until exactly one Node maps ` +
      `to it: annotate each of the others with ${key}=<the host it runs>, or remove the wrong annotation`,
  };
}

/** hostNodes over a list of Nodes (the remediator's and the uncached gate's view). */
export function hostNodes(nodes: NodeLike[], hostName: string): HostNodes {
  return describeHostNodes(
    hostName,
    nodesForHost(nodes, hostName),
    nodes.find((n) => n.metadata.name === hostName),
  );
}
