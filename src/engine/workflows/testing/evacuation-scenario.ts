// Test scenarios for the host-failure workflow: a failed compute host with
// servers on it, healthy computes, optional reserved hosts, a FakeNova and a
// MemoryEngine wired together.

import type { Logger } from 'pino';
import type { Config } from '../../../config/config.ts';
import type { Clock } from '../../../time/clock.ts';
import type { RecoveryMethod } from '../../../model/types.ts';
import type { FakeServer } from '../../../testing/fake-nova.ts';
import { FakeNova } from '../../../testing/fake-nova.ts';
import { MemoryEngine } from './memory-context.ts';
import type { MemoryHost } from './memory-context.ts';

export const FAILED_HOST = 'compute-1';
export const SEGMENT = 'segment-1';

export interface ScenarioOptions {
  method?: RecoveryMethod;
  servers?: Array<Partial<FakeServer>>;
  /** Reserved hosts, oldest first (reservedHosts() returns them newest first). */
  reserved?: string[];
  /** Healthy computes that Nova's scheduler may pick in the auto flow. */
  computes?: string[];
  /** The failed host's nova-compute as Nova reports it when recovery starts. */
  failedService?: { state?: 'up' | 'down'; status?: 'enabled' | 'disabled'; disabled_reason?: string | null };
  configure?: (config: Config) => void;
  evacuateMs?: number;
  /** The flow's logger; silent by default. */
  log?: Logger;
  /** The engine's clock; the system clock by default. */
  clock?: Clock;
}

export interface Scenario {
  nova: FakeNova;
  engine: MemoryEngine;
  servers: FakeServer[];
}

export function scenario(o: ScenarioOptions = {}): Scenario {
  const nova = new FakeNova({ evacuateMs: o.evacuateMs ?? 20 });
  nova.addHost(FAILED_HOST, { state: 'down', ...o.failedService });
  for (const c of o.computes ?? ['compute-2']) nova.addHost(c);
  const hosts: MemoryHost[] = [
    {
      name: FAILED_HOST,
      segmentUuid: SEGMENT,
      reserved: false,
      onMaintenance: true,
      createdAt: '2026-01-01T00:00:00Z',
    },
  ];
  (o.reserved ?? []).forEach((name, i) => {
    // Masakari's reserved hosts run nova-compute disabled, so the scheduler never picks them on its own.
    nova.addHost(name, { status: 'disabled', disabled_reason: 'reserved' });
    hosts.push({
      name,
      segmentUuid: SEGMENT,
      reserved: true,
      onMaintenance: false,
      createdAt: `2026-02-0${i + 1}T00:00:00Z`,
    });
  });
  const servers = (o.servers ?? [{}]).map((s, i) =>
    nova.addServer({ name: `vm-${i + 1}`, ...s, host: s.host ?? FAILED_HOST }),
  );
  const engine = new MemoryEngine({
    nova,
    hostname: FAILED_HOST,
    segmentUuid: SEGMENT,
    recoveryMethod: o.method ?? 'auto',
    hosts,
    ...(o.configure ? { configure: o.configure } : {}),
    ...(o.log ? { log: o.log } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  return { nova, engine, servers };
}
