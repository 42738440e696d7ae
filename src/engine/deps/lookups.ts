// An admitted notification's source host and segment, from the engine's
// caches (by the uuid index the engine's informers keep).

import type { FailoverSegment, HaHost } from '../../model/types.ts';
import { INDEX } from '../../model/indexes.ts';
import type { Informer } from '../../runtime/types.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';

export const sourceHostOf = (d: { hosts: Informer<HaHost> }, n: AdmittedNotification): HaHost | undefined =>
  d.hosts.byIndex(INDEX.uuid, n.status.sourceHostUuid)[0];

export const segmentOf = (
  d: { segments: Informer<FailoverSegment> },
  n: AdmittedNotification,
): FailoverSegment | undefined => d.segments.byIndex(INDEX.uuid, n.status.failoverSegmentUuid)[0];
