// The 'detection' component (MASAKARI_COMPONENTS=detection): built-in failure
// detection and the return to service (src/detection/detector.ts). Its caches
// (segments, hosts, COMPUTE_HOST notifications, the slim Node cache) are the
// process's shared ones; its look runs only on the replica holding the Lease
// "masakari-detection", so one process raises notifications and returns hosts.
// Notifications go through the same HaService and CR repository as the REST
// API, so the duplicate detection and the on-maintenance refusal are theirs.
import type { AppContext, Component } from '../app/component.ts';
import { untilSyncedOrShutdown } from '../app/first-sync.ts';
import { HaService } from '../domain/ha-service.ts';
import { NodeDirectory } from '../fencing/node-directory.ts';
import type { BmcFactory } from '../fencing/return-to-service.ts';
import { computeHostCheckerFor } from '../openstack/compute-host-checker.ts';
import { EventRecorder } from '../runtime/events.ts';
import { managerFor } from '../runtime/manager.ts';
import { sharedFactoryOf } from '../runtime/shared-informers.ts';
import { leaseFencedNova } from '../runtime/lease-fence.ts';
import { createCrRepository } from '../store/index.ts';
import { systemClock } from '../time/clock.ts';
import type { Clock } from '../time/clock.ts';
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
  clock?: Clock;
}

export interface DetectionComponent extends Component {
  isLeading(): boolean;
}

export async function createComponent(
  ctx: AppContext,
  opts: DetectionComponentOptions = {},
): Promise<DetectionComponent> {
  const log = ctx.log.child({ component: 'detection' });
  const clock = opts.clock ?? systemClock;
  const { manager, owned } = managerFor(ctx);
  const apiServes = ctx.config.operator.components.includes('api');
  const repo = createCrRepository({
    kube: ctx.kube,
    namespace: ctx.namespace,
    config: ctx.config,
    log,
    informerFactory: sharedFactoryOf(manager.informers),
    // Beside the API the caches are the API's; alone, the look needs only host notifications.
    notifications: apiServes ? 'all' : 'compute-host',
    ...(ctx.admissionSeal ? { seal: ctx.admissionSeal } : {}),
  });
  const { caches } = repo.parts;
  const service = new HaService(repo, computeHostCheckerFor(ctx.nova), ctx.config.DEFAULT);
  const nodes = new NodeDirectory({ kube: ctx.kube, informers: sharedFactoryOf(manager.informers), log });
  const events = new EventRecorder({
    kube: ctx.kube,
    reportingInstance: ctx.identity,
    reportingController: 'masakari-operator/detection',
    log,
  });
  const metrics = detectionMetrics(ctx.metrics);
  const detector = new Detector({
    // Its Nova writes (the return to service) only while this process holds the Lease (src/runtime/lease-fence.ts).
    nova: leaseFencedNova(ctx.nova, () => manager.holdsLease(DETECTION_LEASE_NAME), DETECTION_HOLDER, log),
    service,
    segments: () => caches.segments.list(),
    hosts: () => caches.hosts.list(),
    notifications: () => caches.notifications.list(),
    nodeReadiness: (host) => nodes.nodeReadiness(host),
    bmcFor: opts.bmcFor ?? ((host) => bmcForHost(ctx.kube, host)),
    events,
    metrics,
    clock,
    log,
    maxDownPercent: ctx.config.detection.max_down_percent,
    novaTimeoutMs: NOVA_LOOK_TIMEOUT_MS,
    holdsLease: () => manager.holdsLease(DETECTION_LEASE_NAME),
  });
  const intervalMs = opts.pollIntervalMs ?? ctx.config.detection.poll_interval * 1000;
  await untilSyncedOrShutdown(repo, ctx.signal);

  let leading = false;
  manager.add(
    {
      start: async (leadSignal) => {
        leading = true;
        log.info('leading: built-in detection started');
        try {
          while (!leadSignal.aborted) {
            try {
              await detector.look(leadSignal);
            } catch (err) {
              if (leadSignal.aborted) break;
              log.error({ err }, 'a look of the built-in detection failed; looking again at the next interval');
            }
            await clock.sleep(intervalMs, leadSignal).catch(() => undefined);
          }
        } finally {
          leading = false;
          detector.reset();
          log.info('no longer leading: built-in detection stopped');
        }
      },
    },
    { name: 'detection', needLeaderElection: true, lease: DETECTION_LEASE_NAME },
  );
  manager.onStop(async () => {
    nodes.stop();
    await repo.stop();
    await events.flush();
  });
  if (owned) await manager.start();

  return {
    name: 'detection',
    ready: () => repo.ready(),
    isLeading: () => leading,
    async stop() {
      if (owned) await manager.stop();
    },
  };
}
