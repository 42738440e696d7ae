// The 'detection' component (MASAKARI_COMPONENTS=detection): built-in failure
// detection and the return to service (src/detection/detector.ts). Its caches
// (segments, hosts, COMPUTE_HOST notifications, the slim Node cache) are the
// process's shared ones; its look is a periodic job of the manager (every)
// under the Lease "masakari-detection", so one process raises notifications
// and returns hosts.
// Notifications go through the same HaService and CR repository as the REST
// API, so the duplicate detection and the on-maintenance refusal are theirs.
import type { AppContext, Component } from '../app/component.ts';
import { HaService } from '../domain/ha-service.ts';
import { NodeDirectory } from '../fencing/node-directory.ts';
import type { BmcFactory } from '../fencing/return-to-service.ts';
import { computeHostCheckerFor } from '../openstack/compute-host-checker.ts';
import { EventRecorder } from '../runtime/events.ts';
import { leaseFencedNova } from '../runtime/lease-fence.ts';
import { createCrRepository } from '../store/index.ts';
import { Detector } from './detector.ts';
import { bmcForHost } from '../fencing/bmc/factory.ts';
import { detectionMetrics } from './metrics.ts';

/** Lease held by the replica that looks. */
export const DETECTION_LEASE_NAME = 'masakari-detection';
const DETECTION_HOLDER = { holder: 'the built-in detection', lease: DETECTION_LEASE_NAME };
/** The one Nova call of a look is abandoned after this long, retries included: a blind look, not a stuck one. */
const NOVA_LOOK_TIMEOUT_MS = 60_000;

export interface DetectionComponentOptions {
  /** Builds the Bmc of a host with spec.fencing; default bmcForHost with the process's KubeClient. */
  bmcFor?: BmcFactory;
  /** Tests: a shorter look interval than [detection] poll_interval allows. */
  pollIntervalMs?: number;
}

export interface DetectionComponent extends Component {
  isLeading(): boolean;
}

export async function createComponent(
  ctx: AppContext,
  opts: DetectionComponentOptions = {},
): Promise<DetectionComponent> {
  const log = ctx.log.child({ component: 'detection' });
  const { manager } = ctx;
  const apiServes = ctx.config.operator.components.includes('api');
  const repo = createCrRepository({
    kube: ctx.kube,
    namespace: ctx.namespace,
    config: ctx.config,
    log,
    informerFactory: manager.informerFactory,
    // Beside the API the caches are the API's; alone, the look needs only host notifications.
    notifications: apiServes ? 'all' : 'compute-host',
    ...(ctx.admissionSeal ? { seal: ctx.admissionSeal } : {}),
  });
  const { caches } = repo.parts;
  const service = new HaService(repo, computeHostCheckerFor(ctx.nova), ctx.config.DEFAULT);
  const nodes = new NodeDirectory({ kube: ctx.kube, informers: manager.informerFactory, log });
  const events = new EventRecorder({
    kube: ctx.kube,
    reportingInstance: ctx.identity,
    reportingController: 'masakari-operator/detection',
    log,
  });
  const metrics = detectionMetrics(ctx.metrics);
  const holdsLease = () => manager.holdsLease(DETECTION_LEASE_NAME);
  const detector = new Detector({
    // Its Nova writes (the return to service) only while this process holds the Lease (src/runtime/lease-fence.ts).
    nova: leaseFencedNova(ctx.nova, holdsLease, DETECTION_HOLDER, log),
    service,
    segments: () => caches.segments.list(),
    hosts: () => caches.hosts.list(),
    notifications: () => caches.notifications.list(),
    nodeReadiness: (host) => nodes.nodeReadiness(host),
    bmcFor: opts.bmcFor ?? ((host) => bmcForHost(ctx.kube, host)),
    events,
    metrics,
    clock: manager.clock,
    log,
    maxDownPercent: ctx.config.detection.max_down_percent,
    novaTimeoutMs: NOVA_LOOK_TIMEOUT_MS,
    holdsLease,
  });
  const intervalMs = opts.pollIntervalMs ?? ctx.config.detection.poll_interval * 1000;
  // A look at once when this process takes the Lease, then one every interval, until the term ends.
  manager.every(
    { name: 'detection', intervalMs, firstAfterMs: 0, run: (signal) => detector.look(signal) },
    { lease: DETECTION_LEASE_NAME },
  );
  // What this replica saw is not handed on: the next leader looks afresh.
  manager.onTermEnd(DETECTION_LEASE_NAME, () => detector.reset());
  manager.onStop(async () => {
    nodes.stop();
    await repo.stop();
    await events.flush();
  });

  return {
    name: 'detection',
    ready: () => repo.ready(),
    isLeading: () => manager.isLeading(DETECTION_LEASE_NAME),
    // The process's manager stops the look after every component stopped serving.
    stop: async () => undefined,
  };
}
