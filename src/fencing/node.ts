// Which Node a remediation is about, and which Masakari host a Node runs.
//   Node of a Medik8s CR: annotation remediation.medik8s.io/node-name, else
//   metadata.name (NHC names CRs <node>-<random> when the template allows
//   several templates of a kind, so the name alone is not enough).
//   Host of a Node: annotation masakari.openkeel.io/compute-host, else the
//   Node's name (the usual case: kubelet and nova-compute share the hostname).
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
