// A HaHost for the unit tests of the rules that read hosts (flags, admission, records).
import type { HaHost } from '../../model/types.ts';

export function host(spec: Partial<HaHost['spec']>, status: HaHost['status'], generation = 1): HaHost {
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'HaHost',
    metadata: { name: 'h', generation, creationTimestamp: '2026-01-02T03:04:05Z', labels: {} },
    spec: { name: 'compute-1', segmentRef: { name: 's' }, type: 'COMPUTE', controlAttributes: 'x', ...spec },
    status,
  };
}

/** What admission writes into a host's status. */
export const admittedStatus = { uuid: 'u', id: 1, segmentUuid: 's-uuid' };
