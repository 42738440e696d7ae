// The 'remediation' component: the Medik8s external remediator. It caches the
// MasakariRemediations of the operator's namespace on every replica and runs
// the remediation controller, a runnable of the process's manager, only on
// the replica holding the Lease "masakari-remediation" (like the engine), so
// exactly one process files notifications and forces services down.
// Notifications go through the same HaService and CR repository as the REST
// API, one repository per segment namespace, opened on first use. Without the
// API beside it on that namespace, the repository caches only COMPUTE_HOST
// notifications, the only kind the remediator files and looks for.
import type { Logger } from 'pino';
import type { AppContext, Component } from '../app/component.ts';
import { computeHostCheckerFor } from '../openstack/compute-host-checker.ts';
import { HaService } from '../domain/ha-service.ts';
import { REMEDIATION_CONTROLLER_NAME, REMEDIATION_LEASE_NAME } from '../model/remediation-constants.ts';
import { REMEDIATION_RESOURCES } from '../k8s/resources.ts';
import type { MasakariRemediation } from '../model/remediation-types.ts';
import { EventRecorder } from '../runtime/events.ts';
import { leaseFencedNova } from '../runtime/lease-fence.ts';
import type { Manager } from '../runtime/manager.ts';
import { informerReady } from '../runtime/types.ts';
import type { CrRepositoryHandle } from '../store/index.ts';
import { createCrRepository } from '../store/index.ts';
import { RemediationReconciler } from './reconciler.ts';
import { heldByReason } from './decide.ts';
import { gauge } from '../runtime/metric-registry.ts';
import { ApprovalGuard } from '../fencing/approval-guard.ts';

const REMEDIATION_HOLDER = { holder: 'the remediator', lease: REMEDIATION_LEASE_NAME };

export interface RemediationComponentOptions {
  /** How often a filed notification is looked at; default 5 s (tests use less). */
  followIntervalMs?: number;
  /** Reconciles of different remediations in parallel; default 2. */
  workers?: number;
}

export interface RemediationComponent extends Component {
  isLeading(): boolean;
}

/**
 * Opens (once) and caches the CR repository + HaService of each segment
 * namespace. Their caches are the manager's (it starts and stops them): in a
 * process that also runs the API on that namespace they are the API's;
 * elsewhere only COMPUTE_HOST notifications are cached.
 */
function serviceCache(ctx: AppContext, log: Logger, manager: Manager) {
  const apiServes = (namespace: string) =>
    ctx.config.operator.components.includes('api') && namespace === ctx.namespace;
  const repos = new Map<string, Promise<{ repo: CrRepositoryHandle; service: HaService }>>();
  const compute = computeHostCheckerFor(ctx.nova);
  return {
    serviceFor(namespace: string): Promise<HaService> {
      let entry = repos.get(namespace);
      if (!entry) {
        const repo = createCrRepository({
          kube: ctx.kube,
          namespace,
          config: ctx.config,
          log,
          metrics: ctx.metrics,
          // The API component of that namespace runs the store reconcilers; this is a client.
          informerFactory: manager.informerFactory,
          notifications: apiServes(namespace) ? 'all' : 'compute-host',
          // The key is the process namespace's; elsewhere admission writes status.
          ...(ctx.admissionSeal && namespace === ctx.namespace ? { seal: ctx.admissionSeal } : {}),
        });
        entry = repo.start().then(
          () => ({ repo, service: new HaService(repo, compute, ctx.config.DEFAULT) }),
          (err: unknown) => {
            void repo.stop();
            repos.delete(namespace);
            throw err;
          },
        );
        repos.set(namespace, entry);
      }
      return entry.then((e) => e.service);
    },
    async stop(): Promise<void> {
      for (const entry of repos.values()) await entry.then((e) => e.repo.stop()).catch(() => undefined);
      repos.clear();
    },
  };
}

export async function createComponent(
  ctx: AppContext,
  opts: RemediationComponentOptions = {},
): Promise<RemediationComponent> {
  const log = ctx.log.child({ component: 'remediation' });
  const { manager } = ctx;
  const cache = manager.informer<MasakariRemediation>(REMEDIATION_RESOURCES.remediations, {
    namespace: ctx.namespace,
  });
  // Read from the cache at each scrape: every replica of the remediator reports the same counts.
  gauge(
    ctx.metrics,
    'masakari_remediations_held',
    'MasakariRemediations held back now, by Processing reason (NodeLeaseHeld, NodeLeaseUnreadable, NodeExcludedFromRemediation).',
    ['reason'],
    function collect() {
      for (const [reason, n] of heldByReason(cache.list())) this.set({ reason }, n);
    },
  );
  const events = new EventRecorder({
    kube: ctx.kube,
    reportingInstance: ctx.identity,
    reportingController: 'masakari-operator/remediation',
    log,
  });
  const services = serviceCache(ctx, log, manager);
  const reconciler = new RemediationReconciler({
    kube: ctx.kube,
    namespace: ctx.namespace,
    cache,
    serviceFor: services.serviceFor,
    // Its Nova writes (forced_down, the return to service) only while this process holds the Lease (src/runtime/lease-fence.ts).
    nova: leaseFencedNova(ctx.nova, () => manager.holdsLease(REMEDIATION_LEASE_NAME), REMEDIATION_HOLDER, log),
    events,
    log,
    duplicateWindowSeconds: ctx.config.DEFAULT.duplicate_notification_detection_interval,
    leaseNamespace: ctx.config.operator.medik8s_lease_namespace,
    followIntervalMs: opts.followIntervalMs,
    approvalGuard: new ApprovalGuard({
      kube: ctx.kube,
      bindingName: ctx.config.operator.safety_overrides_policy,
      log,
      metrics: ctx.metrics,
    }),
  });

  // One controller per leadership term, fed by the cache: every remediation at the term's start, then each change.
  manager
    .controller(REMEDIATION_CONTROLLER_NAME, {
      lease: REMEDIATION_LEASE_NAME,
      workers: opts.workers ?? 2,
      onTermStart: () => log.info('leading: remediation controller started'),
    })
    .for(cache)
    .watches(cache, (r, _old, event) => (event === 'delete' ? [r.metadata.name] : []))
    .reconcile(reconciler.reconcile);
  manager.onTermEnd(REMEDIATION_LEASE_NAME, () => log.info('no longer leading: remediation controller stopped'));
  manager.onStop(async () => {
    await services.stop();
    await events.flush();
  });

  return {
    name: 'remediation',
    ready: () => informerReady(cache),
    isLeading: () => manager.isLeading(REMEDIATION_LEASE_NAME),
    // The process's manager stops the controller after every component stopped serving.
    stop: async () => undefined,
  };
}
