// Which Nodes run a Masakari host, answered from a watched cache of Nodes
// instead of listing every Node of the cluster for each question (the engine's
// fencing gate asks every few seconds for each notification waiting at it).
// The cache keeps only what its readers read: name, the compute-host
// annotation and the Ready condition (built-in detection and the return to
// service, src/detection/), not the rest of a Node's status (images, the other
// conditions), which is most of it.
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { REMEDIATION_ANNOTATIONS } from '../model/remediation-constants.ts';
import type { NodeLike } from '../model/remediation-types.ts';
import type { Informer, InformerOptions } from '../runtime/types.ts';
import type { HostNodes } from './node.ts';
import { computeHostOf, describeHostNodes, hostNodes } from './node.ts';
import { INDEX } from '../model/indexes.ts';

/** How long a question waits for the first sync before it is answered by one list instead. */
const FIRST_SYNC_WAIT_MS = 5_000;

export type NodeInformerFactory = (ref: typeof RESOURCES.nodes, opts: InformerOptions<NodeLike>) => Informer<NodeLike>;

/** A Node reduced to what hostNodes and nodeReady read. Exported for tests. */
export function slimNode(node: NodeLike): NodeLike {
  const annotation = node.metadata.annotations?.[REMEDIATION_ANNOTATIONS.computeHost];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    metadata: {
      ...(node.metadata.name !== undefined ? { name: node.metadata.name } : {}),
      ...(node.metadata.resourceVersion !== undefined ? { resourceVersion: node.metadata.resourceVersion } : {}),
      ...(annotation !== undefined ? { annotations: { [REMEDIATION_ANNOTATIONS.computeHost]: annotation } } : {}),
    },
    ...(ready ? { status: { conditions: [{ type: 'Ready', status: ready.status }] } } : {}),
  };
}

/**
 * A Node's Ready condition as the kubelet reports it: True, False, or Unknown
 * (the node controller's word for a kubelet that stopped posting); a Node
 * without the condition yet is Unknown.
 */
export type NodeReadiness = 'True' | 'False' | 'Unknown';

export function readinessOf(node: NodeLike): NodeReadiness {
  const status = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return status === 'True' || status === 'False' ? status : 'Unknown';
}

export class NodeDirectory {
  private informer: Informer<NodeLike> | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    private readonly deps: { kube: KubeClient; informers: NodeInformerFactory; log: Logger; firstSyncWaitMs?: number },
  ) {}

  /**
   * The Nodes that run `hostName` (nodesForHost's rule) and, unless exactly
   * one does, why (hostNodes). The Node watch starts on the first question.
   * Until it has synced (or if it cannot, e.g. RBAC without watch on nodes)
   * the answer comes from one list.
   */
  async hostNodes(hostName: string): Promise<HostNodes> {
    const informer = this.ensureStarted();
    if (!informer.hasSynced()) {
      await Promise.race([
        this.starting,
        new Promise((r) => setTimeout(r, this.deps.firstSyncWaitMs ?? FIRST_SYNC_WAIT_MS).unref()),
      ]);
    }
    if (informer.hasSynced()) {
      const mapped = informer
        .byIndex(INDEX.computeHost, hostName)
        .map((n) => n.metadata.name ?? '')
        .filter(Boolean);
      return describeHostNodes(hostName, mapped, informer.get(hostName));
    }
    this.deps.log.warn('Node cache not synced yet; answering from one list of Nodes');
    const nodes = await this.deps.kube.list<NodeLike>(RESOURCES.nodes, undefined);
    return hostNodes(nodes.items, hostName);
  }

  /**
   * The Ready condition of the one Node that runs `hostName`, from the watched
   * cache only (a poller asks for every host at every look, so never a list):
   * undefined while the cache has not synced, and when no Node or more than
   * one maps to the host (then no Node speaks for it).
   */
  nodeReadiness(hostName: string): NodeReadiness | undefined {
    const informer = this.ensureStarted();
    if (!informer.hasSynced()) return undefined;
    const mapped = informer.byIndex(INDEX.computeHost, hostName);
    const named = informer.get(hostName);
    const nodes = describeHostNodes(hostName, mapped.map((n) => n.metadata.name ?? '').filter(Boolean), named).nodes;
    if (nodes.length !== 1) return undefined;
    const node = informer.get(nodes[0]!);
    return node ? readinessOf(node) : undefined;
  }

  stop(): void {
    this.informer?.stop();
  }

  private ensureStarted(): Informer<NodeLike> {
    if (!this.informer) {
      this.informer = this.deps.informers(RESOURCES.nodes, {
        namespace: '',
        transform: slimNode,
        indexes: { [INDEX.computeHost]: (n) => [computeHostOf(n)].filter(Boolean) },
      });
      this.starting = this.informer.start().catch((err: unknown) => {
        this.deps.log.debug({ err }, 'Node cache stopped before it synced');
      });
    }
    return this.informer;
  }
}
