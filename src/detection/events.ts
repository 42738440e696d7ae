// The Kubernetes Events detection records, on the HaHost a host look concerns
// or on each segment whose look went blind. Shared by the detector and the
// return watch so both name their objects the same way.
import { API_VERSION } from '../model/constants.ts';
import type { FailoverSegment, HaHost } from '../model/types.ts';
import type { EventInput } from '../runtime/events.ts';

export function hostEvent(
  h: HaHost,
  type: 'Normal' | 'Warning',
  reason: string,
  action: string,
  note: string,
): EventInput {
  return { regarding: ref(h, 'HaHost'), type, reason, action, note };
}

export function segmentEvent(s: FailoverSegment, type: 'Normal' | 'Warning', reason: string, note: string): EventInput {
  return { regarding: ref(s, 'FailoverSegment'), type, reason, action: 'Detect', note };
}

function ref(o: FailoverSegment | HaHost, kind: string) {
  return {
    apiVersion: API_VERSION,
    kind,
    name: o.metadata.name ?? '',
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
  };
}
