// FOR UNIT TESTS ONLY: a Detector over the in-memory repository, the fake
// Nova and a fake clock, with the custom resources the detector reads derived
// from the repository's records (so the intake it writes through and the
// caches it reads from agree, as the store's do).
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { fileHostFailure, memoryService } from '../../domain/testing/memory-service.ts';
import type { NodeReadiness } from '../../fencing/node-directory.ts';
import type { Bmc, PowerState } from '../../fencing/bmc/bmc.ts';
import type {
  FailoverSegment,
  HaHost,
  HostFencing,
  Notification,
  ReturnToService,
  SegmentDetection,
} from '../../model/types.ts';
import type { EventInput } from '../../runtime/events.ts';
import { leaseFencedNova } from '../../runtime/lease-fence.ts';
import { FakeNova } from '../../testing/fake-nova.ts';
import { FakeClock } from '../../testing/fake-clock.ts';
import { Detector } from '../detector.ts';
import { detectionMetrics } from '../metrics.ts';

export interface WorldOptions {
  hosts: string[];
  detection?: SegmentDetection;
  returnToService?: ReturnToService;
  maxDownPercent?: number;
  /** Hosts with spec.fencing (a BMC whose power state is `power`). */
  fenced?: string[];
  /** Whether this replica holds the detection Lease now (Manager.holdsLease); its Nova is fenced on it, as the component's is. */
  holdsLease?: () => boolean;
}

const FENCING: HostFencing = { driver: 'redfish', address: 'https://bmc.example', credentialsSecretRef: { name: 's' } };

export async function world(o: WorldOptions) {
  const clock = new FakeClock(Date.UTC(2026, 11, 4, 12, 0, 0));
  const { repo, service, segment: seg } = await memoryService({ hosts: o.hosts });
  const nova = new FakeNova();
  for (const h of o.hosts) nova.addHost(h);
  /** Hosts a person put on maintenance (spec), as opposed to the engine's latch (status). */
  const personMaintenance = new Set<string>();
  const readiness = new Map<string, NodeReadiness>();
  const power = new Map<string, PowerState | Error>();
  const events: EventInput[] = [];
  const registry = new Registry();
  const bmcCalls: string[] = [];

  const segment = (): FailoverSegment => ({
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    kind: 'FailoverSegment',
    metadata: { name: seg.k8sName, namespace: 'ns' },
    spec: {
      name: 'seg',
      recoveryMethod: 'auto',
      serviceType: 'COMPUTE',
      ...(o.detection ? { detection: o.detection } : {}),
      ...(o.returnToService ? { returnToService: o.returnToService } : {}),
    },
    status: { uuid: seg.uuid },
  });
  const hosts = (): HaHost[] =>
    repo.listHosts().map((h) => ({
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'HaHost',
      metadata: { name: h.k8sName, namespace: 'ns', generation: 1 },
      spec: {
        name: h.name,
        segmentRef: { name: seg.k8sName },
        type: 'COMPUTE',
        controlAttributes: '',
        onMaintenance: personMaintenance.has(h.name),
        ...(o.fenced?.includes(h.name) ? { fencing: FENCING } : {}),
      },
      status: {
        uuid: h.uuid,
        segmentUuid: seg.uuid,
        onMaintenance: h.on_maintenance,
        reserved: false,
        flagsGeneration: 1,
      },
    }));
  const notifications = (): Notification[] =>
    repo.listNotifications().map((n) => ({
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'Notification',
      metadata: { name: n.k8sName, namespace: 'ns' },
      spec: { type: n.type, hostname: '', generatedTime: n.generated_time, payload: n.payload },
      status: { uuid: n.notification_uuid, id: n.id, phase: n.status, sourceHostUuid: n.source_host_uuid },
    }));

  const log = pino({ level: 'silent' });
  const detector = new Detector({
    nova: leaseFencedNova(
      nova,
      o.holdsLease ?? (() => true),
      { holder: 'the built-in detection', lease: 'masakari-detection' },
      log,
    )!,
    service,
    segments: () => [segment()],
    hosts,
    notifications,
    nodeReadiness: (h) => readiness.get(h),
    bmcFor: async (h): Promise<Bmc> => ({
      describe: `redfish bmc of ${h.spec.name}`,
      driver: 'redfish',
      powerOff: async () => undefined,
      powerState: async () => {
        bmcCalls.push(h.spec.name);
        const p = power.get(h.spec.name) ?? 'On';
        if (p instanceof Error) throw p;
        return p;
      },
    }),
    events: { record: (e) => events.push(e) },
    metrics: detectionMetrics(registry),
    clock,
    log,
    maxDownPercent: o.maxDownPercent ?? 50,
    holdsLease: o.holdsLease ?? (() => true),
    novaTimeoutMs: 1000,
  });
  const signal = new AbortController().signal;
  // Hosts whose nova-compute runs: before each look it has reported once more (its row's updated_at moves).
  const alive = new Set<string>();
  let reports = 0;
  const look = () => {
    for (const h of alive)
      nova.service(h).updated_at = new Date(Date.UTC(2026, 11, 4, 13, 0, ++reports)).toISOString().replace('Z', '000');
    return detector.look(signal);
  };

  return {
    segmentUuid: seg.uuid,
    clock,
    repo,
    service,
    nova,
    detector,
    events,
    registry,
    readiness,
    power,
    bmcCalls,
    personMaintenance,
    alive,
    look,
    /** Looks every `stepS` seconds for `forS` seconds; the summaries. */
    async lookFor(forS: number, stepS = 10) {
      const out = [];
      for (let t = 0; t <= forS; t += stepS) {
        out.push(await look());
        clock.advance(stepS * 1000);
      }
      return out;
    },
    /** Plays a finished recovery of `host`: its notification finished, on maintenance by the engine, service disabled and forced down. */
    async recovered(host: string) {
      const rec = await fileHostFailure(service, host, clock.now());
      repo.setNotificationState(rec.notification_uuid, { status: 'finished' });
      repo.setHostFlags(repo.getHostByName(host)!.uuid, { on_maintenance: true });
      Object.assign(nova.service(host), {
        status: 'disabled',
        forced_down: true,
        state: 'down',
        updated_at: '2026-12-04T12:00:00.000000',
      });
      return rec;
    },
    metric: async (name: string, labels: Record<string, string> = {}) => {
      const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
      const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
      return v?.value;
    },
  };
}
