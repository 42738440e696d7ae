// The medik8s node Lease (<lease namespace>/node-<node>, medik8s-leases unless
// NHC's LEASE_NAMESPACE moved it): NodeHealthCheck and
// Node Maintenance take it before touching a node, so a node under planned
// maintenance is not remediated as if it had failed. The NHC that created our
// CR holds it while we work ("NodeHealthCheck-<name>", or "MachineHealthCheck-<name>"
// when NHC remediates for a MachineHealthCheck); any other live holder
// (Node Maintenance's "node-maintenance", another remediator) means hands off.
import type { KubeClient } from '../k8s/client.ts';
import { isNotFound, KubeError } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { HEALTH_CHECK_LEASE_HOLDER_PREFIXES, medik8sLeaseName } from '../model/remediation-constants.ts';
import type { LeaseLike } from '../model/remediation-types.ts';

/**
 * The holder that blocks us, or undefined when we may act. Validity is medik8s' own rule (the
 * common lease manager NHC and Node Maintenance share, pkg/lease/manager.go isValidLease): a
 * lease holds only with a renewTime and a duration, renewTime not in the future and renewTime +
 * duration not passed. Any other lease is one NHC or Node Maintenance would take over at once, so
 * holding back for it would wait on a holder that no longer counts.
 */
export function leaseBlocker(lease: LeaseLike | undefined, nowMs: number): string | undefined {
  const holder = lease?.spec?.holderIdentity?.trim();
  if (!lease || !holder || HEALTH_CHECK_LEASE_HOLDER_PREFIXES.some((p) => holder.startsWith(p))) return undefined;
  const renewed = Date.parse(lease.spec?.renewTime ?? '');
  const duration = lease.spec?.leaseDurationSeconds;
  if (!Number.isFinite(renewed) || duration === undefined || duration === null) return undefined;
  if (renewed > nowMs || renewed + duration * 1000 < nowMs) return undefined;
  return holder;
}

/**
 * The remediator may not read the lease (403): on a cluster without NodeHealthCheck at install
 * time the chart grants no Role in the lease namespace. Whether Node Maintenance holds the node is
 * then unknown, so the remediation holds (reason NodeLeaseUnreadable) instead of acting or crashing.
 */
export class NodeLeaseUnreadable extends Error {
  constructor(leaseNamespace: string, node: string, cause: unknown) {
    super(
      `cannot read the medik8s node lease ${leaseNamespace}/${medik8sLeaseName(node)} (${(cause as Error).message}), ` +
        'so whether Node Maintenance holds the node is unknown; not acting. Grant get on leases there: ' +
        '`helm upgrade` once the namespace exists (remediation.readMedik8sLeases: auto finds it), or set remediation.readMedik8sLeases: true',
      { cause },
    );
    this.name = 'NodeLeaseUnreadable';
  }
}

/** The node's lease, or undefined when there is none (or no such lease namespace); NodeLeaseUnreadable on 403. */
export async function readNodeLease(
  kube: KubeClient,
  leaseNamespace: string,
  node: string,
): Promise<LeaseLike | undefined> {
  try {
    return await kube.get<LeaseLike>(RESOURCES.leases, leaseNamespace, medik8sLeaseName(node));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (err instanceof KubeError && err.code === 403) throw new NodeLeaseUnreadable(leaseNamespace, node, err);
    throw err;
  }
}
