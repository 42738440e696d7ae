// Objects and contexts for engine unit tests: a segment, hosts and
// notifications seeded into a FakeKube, the real informers over it, and a
// WorkflowContext whose journal is the real CR-backed one (so workflow tests
// also exercise the journal).

import pino from 'pino';
import { loadConfig } from '../../config/load.ts';
import type { Config } from '../../config/config.ts';
import { RESOURCES } from '../../k8s/resources.ts';
import { API_VERSION } from '../../model/constants.ts';
import type { FailoverSegment, HaHost, Notification, NotificationType, RecoveryMethod } from '../../model/types.ts';
import type { NovaClient } from '../../openstack/types.ts';
import type { WorkflowContext } from '../workflows/context.ts';
import { HaHostFlags } from '../run/ha-host-flags.ts';
import { INDEX } from '../../model/indexes.ts';
import { createRunJournal } from '../run/journal.ts';
import { NotificationStatusWriter, ownsRun } from '../status/writer.ts';
import { FakeClock } from '../../testing/fake-clock.ts';
import { FakeKube } from '../../testing/fake-kube.ts';
import { FakeInformers } from '../../testing/informers.ts';
import type { KubeInformer } from '../../runtime/informer.ts';

export const NS = 'masakari';
export const quietLog = pino({ level: 'silent' });

export function testConfig(mutate?: (c: Config) => void): Config {
  const c = loadConfig({ env: {} }).config;
  mutate?.(c);
  return c;
}

export function segment(name: string, uuid: string, over: Partial<FailoverSegment['spec']> = {}): FailoverSegment {
  return {
    apiVersion: API_VERSION,
    kind: 'FailoverSegment',
    metadata: { name, namespace: NS },
    spec: { name, recoveryMethod: 'auto', serviceType: 'compute', enabled: true, ...over },
    status: { uuid, id: 1 },
  };
}

export function host(
  name: string,
  uuid: string,
  segmentUuid: string,
  over: Partial<HaHost['spec']> = {},
  id = 1,
): HaHost {
  return {
    apiVersion: API_VERSION,
    kind: 'HaHost',
    metadata: { name: `host-${name}`, namespace: NS },
    spec: {
      name,
      segmentRef: { name: 'seg' },
      type: 'COMPUTE',
      controlAttributes: 'ssh',
      reserved: false,
      onMaintenance: false,
      ...over,
    },
    status: { uuid, id, segmentUuid },
  };
}

export function notification(
  name: string,
  type: NotificationType,
  payload: Record<string, string>,
  o: { uuid?: string; hostUuid?: string; segmentUuid?: string; hostname?: string; generatedTime?: string } = {},
): Notification {
  return {
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: { name, namespace: NS },
    spec: {
      type,
      hostname: o.hostname ?? 'compute-1',
      generatedTime: o.generatedTime ?? '2026-01-02T03:04:00',
      payload,
    },
    status: {
      uuid: o.uuid ?? `uuid-${name}`,
      id: 1,
      sourceHostUuid: o.hostUuid ?? 'host-uuid-1',
      failoverSegmentUuid: o.segmentUuid ?? 'seg-uuid',
    },
  };
}

/** Objects get creationTimestamps one second apart in write order, from 2026-01-01 (deterministic sort orders). */
export const sequentialCreation = (rv: number): Date => new Date(Date.UTC(2026, 0, 1) + rv * 1000);

export interface World {
  kube: FakeKube;
  clock: FakeClock;
  informers: FakeInformers;
  notifications: KubeInformer<Notification>;
  hosts: KubeInformer<HaHost>;
  segments: KubeInformer<FailoverSegment>;
}

/** A FakeKube and the engine's three caches over it, started and synced. */
export async function world(): Promise<World> {
  const kube = new FakeKube({ creationTime: sequentialCreation });
  const informers = new FakeInformers(kube);
  const [notifications, hosts, segments] = await Promise.all([
    informers.started<Notification>(RESOURCES.notifications, { namespace: NS }),
    informers.started<HaHost>(RESOURCES.hosts, {
      namespace: NS,
      indexes: {
        [INDEX.name]: (h) => [h.spec.name],
        [INDEX.uuid]: (h) => (h.status?.uuid ? [h.status.uuid] : []),
      },
    }),
    informers.started<FailoverSegment>(RESOURCES.segments, {
      namespace: NS,
      indexes: { uuid: (s) => (s.status?.uuid ? [s.status.uuid] : []) },
    }),
  ]);
  return { kube, clock: new FakeClock(), informers, notifications, hosts, segments };
}

let idCounter = 0;
export const counterIds = { next: async () => ++idCounter };

/** The processor dependencies every engine test wires the same way: the world's client, caches and clock. */
export const worldDeps = (w: World) => ({
  kube: w.kube,
  namespace: NS,
  log: quietLog,
  clock: w.clock,
  identity: 'engine-a',
  notifications: w.notifications,
  hosts: w.hosts,
  segments: w.segments,
  vmoveIds: counterIds,
});

/** A running notification owned by 'test-owner' and a WorkflowContext for run `run`. */
export function workflowContext(
  w: World,
  n: Notification,
  nova: NovaClient,
  o: { config?: Config; run?: number; recoveryMethod?: RecoveryMethod; signal?: AbortSignal } = {},
): { ctx: WorkflowContext; writer: NotificationStatusWriter } {
  const stored = w.kube.seed<Notification>(RESOURCES.notifications, {
    ...n,
    status: { ...n.status, phase: 'running' as const, runs: (o.run ?? 0) + 1, engine: { owner: 'test-owner' } },
  });
  const signal = o.signal ?? new AbortController().signal;
  const writer = new NotificationStatusWriter({
    kube: w.kube,
    namespace: NS,
    initial: stored,
    guard: ownsRun('test-owner'),
    clock: w.clock,
    log: quietLog,
    signal,
  });
  const run = o.run ?? 0;
  const ctx: WorkflowContext = {
    notification: {
      uuid: stored.status?.uuid ?? '',
      type: stored.spec.type,
      hostname: stored.spec.hostname,
      payload: stored.spec.payload,
      generatedTime: stored.spec.generatedTime,
      segmentUuid: stored.status?.failoverSegmentUuid ?? '',
      recoveryMethod: o.recoveryMethod ?? 'auto',
    },
    run,
    nova,
    config: o.config ?? testConfig(),
    clock: w.clock,
    log: quietLog,
    signal,
    requestId: 'req-test',
    ...createRunJournal(writer, run, counterIds, w.clock),
    hosts: new HaHostFlags({ kube: w.kube, namespace: NS, hosts: w.hosts, clock: w.clock, log: quietLog }),
  };
  return { ctx, writer };
}
