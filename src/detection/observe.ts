// One look at the watched hosts: which are down, and whether the look itself
// can be trusted. Pure, so the rules are tested without Nova or a cluster.
//
// A host is down when its nova-compute service says state down, or when it is
// a Kubernetes Node whose Ready condition is not True. A host Nova does not
// list at all is not down: nothing reports it dead, and a missing service is
// a registration problem, which the look reports instead.
//
// When more than max_down_percent of the watched hosts (and more than one)
// are down at the same look, the likelier truth is that the observer is cut
// off (a partition between Nova and its computes, a message-bus outage,
// a Node controller that lost the API server), not that most of the cloud
// died at once. InstanceHA's THRESHOLD rule (infra-operator
// templates/instanceha/bin/instanceha.py) and NodeHealthCheck's minHealthy
// hold back for the same reason: acting on a blind look evacuates hosts that
// still run their servers.
import type { NodeReadiness } from '../fencing/node-directory.ts';
import type { NovaService } from '../openstack/types.ts';

export interface WatchedHost {
  name: string;
  /** The segment's detection.gracePeriodSeconds. */
  graceSeconds: number;
}

export type HostState =
  | { state: 'up' }
  | { state: 'down'; why: string }
  /** Nothing to judge by: Nova lists no service for it. */
  | { state: 'unknown'; why: string };

export type Look =
  | { healthy: true; states: Map<string, HostState>; down: number }
  | { healthy: false; reason: 'NovaUnreachable' | 'MostHostsDown'; message: string };

export interface LookInput {
  hosts: readonly WatchedHost[];
  /** Nova's nova-compute services, all hosts at once; or why they could not be read. */
  services: readonly NovaService[] | { error: string };
  /** The Ready condition of the host's one Node; undefined: not a Node (or not known yet). */
  nodeReadiness: (host: string) => NodeReadiness | undefined;
  maxDownPercent: number;
}

export function hostState(
  host: string,
  service: NovaService | undefined,
  readiness: NodeReadiness | undefined,
): HostState {
  if (readiness !== undefined && readiness !== 'True') return { state: 'down', why: `its Node is Ready=${readiness}` };
  if (!service) return { state: 'unknown', why: `Nova lists no nova-compute service on ${host}` };
  if (service.state === 'down') {
    return {
      state: 'down',
      why: `its nova-compute service is down${service.forced_down ? ' (forced down)' : ''} (last report ${service.updated_at ?? 'never'})`,
    };
  }
  return { state: 'up' };
}

/** The most hosts that may be down at one look before it counts as blind: more than one, and max_down_percent of them. */
export function downLimit(watched: number, maxDownPercent: number): number {
  return Math.max(1, Math.floor((watched * maxDownPercent) / 100));
}

export function look(input: LookInput): Look {
  if (!Array.isArray(input.services)) {
    const { error } = input.services as { error: string };
    return { healthy: false, reason: 'NovaUnreachable', message: `Nova's compute services cannot be read: ${error}` };
  }
  const byHost = new Map<string, NovaService>();
  for (const s of input.services as readonly NovaService[]) {
    if (s.binary === 'nova-compute') byHost.set(s.host, s);
  }
  const states = new Map<string, HostState>();
  let down = 0;
  for (const h of input.hosts) {
    const st = hostState(h.name, byHost.get(h.name), input.nodeReadiness(h.name));
    if (st.state === 'down') down++;
    states.set(h.name, st);
  }
  const limit = downLimit(input.hosts.length, input.maxDownPercent);
  if (input.maxDownPercent < 100 && down > limit) {
    return {
      healthy: false,
      reason: 'MostHostsDown',
      message:
        `${down} of ${input.hosts.length} watched hosts look down at once (more than [detection] max_down_percent ` +
        `${input.maxDownPercent}% allows): taken for an observation problem (Nova, its message bus or the network), not for failed hosts`,
    };
  }
  return { healthy: true, states, down };
}
