// An admitted notification's source host and segment, from the engine's
// caches (by the uuid index the engine's informers keep), and the plan
// Masakari's decision table makes of it with them.

import type { FailoverSegment, HaHost } from '../../model/types.ts';
import { INDEX } from '../../model/indexes.ts';
import type { Informer } from '../../runtime/types.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import { planNotification, type MissingReference, type Plan } from '../intake/decisions.ts';
import type { Config } from '../../config/config.ts';

export const sourceHostOf = (d: { hosts: Informer<HaHost> }, n: AdmittedNotification): HaHost | undefined =>
  d.hosts.byIndex(INDEX.uuid, n.status.sourceHostUuid)[0];

export const segmentOf = (
  d: { segments: Informer<FailoverSegment> },
  n: AdmittedNotification,
): FailoverSegment | undefined => d.segments.byIndex(INDEX.uuid, n.status.failoverSegmentUuid)[0];

/** The decision table's plan for a notification, or Masakari's "could not be found" error for a missing reference. */
export function planOf(
  d: { hosts: Informer<HaHost>; segments: Informer<FailoverSegment>; config: Config },
  n: AdmittedNotification,
): Plan | MissingReference {
  const segment = segmentOf(d, n);
  const host = sourceHostOf(d, n);
  if (!host) return { kind: 'error', reason: `Host ${n.status.sourceHostUuid} could not be found.` };
  if (!segment)
    return { kind: 'error', reason: `Failover segment ${n.status.failoverSegmentUuid} could not be found.` };
  return planNotification({
    uuid: n.status.uuid,
    type: n.spec.type,
    sourceHostUuid: n.status.sourceHostUuid,
    payload: n.spec.payload ?? {},
    segmentEnabled: segment.spec.enabled ?? true,
    maintenanceOnlyForNovaCompute: d.config.process_failure.maintenance_only_for_nova_compute,
  });
}
