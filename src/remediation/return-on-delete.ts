// When Medik8s deletes a MasakariRemediation (NodeHealthCheck does once the
// Node is healthy again), what the remediation caused is undone the way the
// built-in detection undoes a recovery, by the rules of
// src/fencing/return-to-service.ts and the segment's returnToService policy:
// the remediator forced the nova-compute service down, and the recovery of its
// notification put the host on maintenance and disabled the service.
//
// The Node counts as the sign that nova-compute reports again: Nova shows a
// forced-down service down whatever it does, and this is one look, with no
// earlier look to compare updated_at with. A look that cannot finish (Nova
// unreachable) leaves the host as it is and says so; the finalizer is removed
// anyway, and the detection component, if the segment has a returnToService
// policy, returns the host at a later look.
import type { HaService } from '../domain/ha-service.ts';
import type { KubeClient } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { readinessOf } from '../fencing/node-directory.ts';
import type { BmcFactory } from '../fencing/return-to-service.ts';
import {
  hostPower,
  leftDisabledNote,
  notBackBecause,
  restoreHost,
  returnPolicyOf,
} from '../fencing/return-to-service.ts';
import type { MasakariRemediation, NodeLike } from '../model/remediation-types.ts';
import type { FailoverSegment, HaHost } from '../model/types.ts';
import type { NovaClient } from '../openstack/types.ts';

export interface ReturnOnDeleteDeps {
  kube: KubeClient;
  nova?: NovaClient;
  serviceFor: (namespace: string) => Promise<HaService>;
  bmcFor?: BmcFactory;
  signal?: AbortSignal;
}

/** The Nova and BMC calls of one deletion are abandoned after this long: the finalizer must not wait on them. */
const DELETE_LOOK_TIMEOUT_MS = 30_000;

async function getOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** What happened to the host, for the deletion Event; undefined when the remediation changed nothing in Nova. */
export async function returnOnDelete(
  deps: ReturnOnDeleteDeps,
  r: MasakariRemediation,
  segmentNamespace: string,
): Promise<string | undefined> {
  const hostName = r.status?.hostName;
  const nodeName = r.status?.nodeName;
  if (!r.status?.fencedAt || !hostName) return undefined;
  const signal = deps.signal ?? AbortSignal.timeout(DELETE_LOOK_TIMEOUT_MS);
  const left = (why: string) =>
    `host ${hostName} is not returned to service (${why}); bring it back with \`openstack compute service set --enable --up ${hostName} nova-compute\` and clear its maintenance`;
  const service = await deps.serviceFor(segmentNamespace);
  const record = service.repo.getHostByName(hostName);
  if (!record) return left('it is no longer registered');
  const segment = service.repo.getSegment(record.failover_segment_id);
  const [host, segmentObject] = await Promise.all([
    getOrUndefined(() => deps.kube.get<HaHost>(RESOURCES.hosts, segmentNamespace, record.k8sName)),
    segment
      ? getOrUndefined(() => deps.kube.get<FailoverSegment>(RESOURCES.segments, segmentNamespace, segment.k8sName))
      : Promise.resolve(undefined),
  ]);
  if (!host || !segmentObject) return left('its HaHost or FailoverSegment is gone');
  const newest = service.repo
    .listNotifications()
    .filter((n) => n.type === 'COMPUTE_HOST' && n.source_host_uuid === record.uuid)
    .sort((a, b) => b.id - a.id)[0];
  if (!newest || newest.status !== 'finished') {
    return left(
      `its recovery ${newest ? `${newest.notification_uuid} is ${newest.status}` : 'is not filed'}, not finished`,
    );
  }
  // A person's maintenance (spec) is theirs to clear; a host out of maintenance still gets its service back.
  if (host.spec.onMaintenance) return left('a person put it on maintenance');
  if (returnPolicyOf(segmentObject.spec) === 'LeaveDisabled') return leftDisabledNote(hostName);
  if (!deps.nova) return left('no Nova is configured');

  const node = nodeName
    ? await getOrUndefined(() => deps.kube.get<NodeLike>(RESOURCES.nodes, undefined, nodeName))
    : undefined;
  const nodeReady = !!node && readinessOf(node) === 'True';
  const compute = (await deps.nova.listServices({ binary: 'nova-compute', host: hostName }, { signal })).find(
    (s) => s.host === hostName && s.binary === 'nova-compute',
  );
  const power = await hostPower(host, deps.bmcFor, signal);
  const why = notBackBecause(hostName, {
    compute,
    reporting: compute?.state === 'up' || nodeReady,
    nodeReady,
    ...(power !== undefined ? { power } : {}),
  });
  if (why || !compute) return left(why ?? 'Nova lists no service for it');
  const outcome = await restoreHost({ nova: deps.nova, service, signal }, record, compute);
  if (!outcome.done) return left(outcome.message);
  return `host ${hostName} returned to service (${outcome.steps.join(', ') || 'nothing left to change'}), segment returnToService policy Restore`;
}
