// FOR UNIT TESTS ONLY: the HaService over a MemoryRepository holding one
// segment ("seg": COMPUTE, auto) with the given hosts, every compute host
// known to Nova: what the tests of the features that file and read
// notifications through the domain (detection, fencing's return to service)
// start from.

import type { NotificationRecord } from '../records.ts';
import { HaService } from '../ha-service.ts';
import { MemoryRepository } from './memory-repository.ts';

export interface MemoryServiceOptions {
  hosts: string[];
  /** duplicate_notification_detection_interval (seconds); Masakari's default, 180, unless given. */
  duplicateWindowSeconds?: number;
}

export async function memoryService(o: MemoryServiceOptions) {
  const repo = new MemoryRepository();
  const service = new HaService(
    repo,
    { exists: async () => true },
    { osapi_max_limit: 1000, duplicate_notification_detection_interval: o.duplicateWindowSeconds ?? 180 },
  );
  const segment = await repo.createSegment({
    name: 'seg',
    service_type: 'COMPUTE',
    recovery_method: 'auto',
    description: null,
    enabled: true,
  });
  const hosts = [];
  for (const name of o.hosts) {
    hosts.push(
      await repo.createHost(segment.uuid, {
        name,
        type: 'COMPUTE',
        control_attributes: '',
        on_maintenance: false,
        reserved: false,
      }),
    );
  }
  return { repo, service, segment, hosts };
}

/** The notification masakari-monitors' host monitor sends for a host that went down (STOPPED, OFFLINE, NORMAL). */
export function fileHostFailure(
  service: HaService,
  hostname: string,
  generatedTime: Date,
): Promise<NotificationRecord> {
  return service.createNotification({
    notification: {
      type: 'COMPUTE_HOST',
      hostname,
      generated_time: generatedTime.toISOString(),
      payload: { event: 'STOPPED', cluster_status: 'OFFLINE', host_status: 'NORMAL' },
    },
  });
}
