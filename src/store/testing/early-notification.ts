// FOR UNIT TESTS ONLY: a PROCESS notification as the REST path creates it
// alongside its duplicate claim (admission/notification-intake.ts accept), for the
// tests of what the claim makes of it (admission/duplicate-claim.test.ts, admission/visibility.test.ts).
import { LABELS } from '../../model/constants.ts';
import type { Notification } from '../../model/types.ts';

export const EARLY_HOST_UUID = 'host-uuid-1';
export const EARLY_PAYLOAD = { event: 'STOPPED', process_name: 'nova-compute' };

/** Created `ageMs` ago; `sealedView` adds the status the seal shows before the engine's first write. */
export function earlyNotification(
  name: string,
  generatedTime: string,
  ageMs: number,
  opts: { sealedView?: boolean } = {},
): Notification {
  return {
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'Notification',
    metadata: {
      name,
      creationTimestamp: new Date(Date.now() - ageMs).toISOString(),
      labels: { [LABELS.hostUuid]: EARLY_HOST_UUID, [LABELS.uuid]: `uuid-${name}` },
    },
    spec: { type: 'PROCESS', hostname: 'compute-1', generatedTime, payload: EARLY_PAYLOAD },
    ...(opts.sealedView ? { status: { uuid: `uuid-${name}`, id: 1, phase: 'new', admittedBySeal: true } } : {}),
  } as Notification;
}
