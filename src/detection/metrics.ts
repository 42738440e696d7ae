// The detection's metrics (docs/operations.md "Metrics" and "Built-in
// detection"). Only the leader looks, so only the leader sets the gauges; a
// replica that stops leading removes its series.
import type { Registry } from 'prom-client';
import { counter, gauge } from '../runtime/metric-registry.ts';

export type PollResult = 'ok' | 'nova_unreachable' | 'most_hosts_down';
export type RaiseOutcome = 'raised' | 'already_handled' | 'refused' | 'failed';
export type ReturnOutcome = 'restored' | 'left_disabled' | 'deferred' | 'failed';

export interface DetectionMetrics {
  /**
   * 1 after a look that could be trusted, 0 while Nova cannot be read or most watched hosts look down at
   * once; one series per segment with detection, so a replica that does not look (or has nothing to watch)
   * exports none, rather than an unlabeled 0 that would read as blind.
   */
  observationHealthy(healthy: boolean, segmentUuids: readonly string[]): void;
  poll(result: PollResult): void;
  hostsDown(n: number): void;
  raised(outcome: RaiseOutcome): void;
  returned(outcome: ReturnOutcome): void;
  /** This replica stopped looking: its gauges go. */
  clear(): void;
}

export function detectionMetrics(registry: Registry | undefined): DetectionMetrics {
  const healthy = gauge(
    registry,
    'masakari_detection_observation_healthy',
    'Per segment with built-in detection: 1 while the last look at Nova could be trusted; 0 while Nova cannot be read or more than [detection] max_down_percent of the watched hosts look down at once (no notification is raised then). Set by the detection leader only.',
    ['segment_uuid'],
  );
  const polls = counter(
    registry,
    'masakari_detection_polls_total',
    'Looks of the built-in detection at Nova (one GET /os-services for every host), by result: ok, nova_unreachable, most_hosts_down.',
    ['result'],
  );
  const down = gauge(
    registry,
    'masakari_detection_hosts_down',
    'Watched hosts seen down (nova-compute down or Node not Ready) at the last trusted look, raised or still in their grace period.',
  );
  const notifications = counter(
    registry,
    'masakari_detection_notifications_total',
    'COMPUTE_HOST notifications the built-in detection filed, by outcome: raised; already_handled (a duplicate, or the host on maintenance); refused (the API refused it otherwise); failed (could not be stored, tried again).',
    ['outcome'],
  );
  const returns = counter(
    registry,
    'masakari_return_to_service_total',
    "Recovered hosts seen back, by what the segment's returnToService policy did: restored, left_disabled, deferred (another recovery in the segment, or Nova refused; tried again), failed (Nova or the API server unreachable; tried again).",
    ['outcome'],
  );
  return {
    observationHealthy: (h, segmentUuids) => {
      healthy.reset();
      for (const segment_uuid of segmentUuids) healthy.set({ segment_uuid }, h ? 1 : 0);
    },
    poll: (result) => polls.inc({ result }),
    hostsDown: (n) => down.set(n),
    raised: (outcome) => notifications.inc({ outcome }),
    returned: (outcome) => returns.inc({ outcome }),
    clear: () => {
      healthy.reset();
      down.reset();
    },
  };
}
