// The process's manager, after controller-runtime's pkg/manager: every
// component of a process registers its caches and its runnables here, and the
// manager runs them in one order.
//
//   start: caches (one informer per (kind, namespace, selectors), shared
//          through one SharedInformerFactory) → wait until synced →
//          runnables that run on every replica → one leader election per
//          Lease name → the runnables of that Lease, once per leadership term.
//   stop:  runnables on every replica stop → leader-elected runnables stop
//          (their term's signal aborts; they hand work over) → stop hooks
//          (e.g. flushing events) → caches stop → Leases are released.
//
// controller-runtime has one Lease per manager; this operator has had one per
// component since its first release (masakari-engine, masakari-remediation,
// masakari-store-reconcilers: docs/operations.md), so that the engine and the
// API can run in different Deployments. The manager keeps them: it runs one
// election per Lease name, shared by every runnable registered under it.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient, ResourceRef } from '../k8s/client.ts';
import type { InformerDeps } from './informer-deps.ts';
import { compactHeap } from './heap-compaction.ts';
import { runLeaderElection } from './leaderelection.ts';
import type { LeaseHold } from './leaderelection.ts';
import { SharedInformerFactory } from './shared-informers.ts';
import { informerReady } from './types.ts';
import type { Informer, InformerOptions, KubeObjectLike } from './types.ts';
import { ControllerBuilder } from './controller-builder.ts';
import type { ControllerBuilderOptions } from './controller-builder.ts';
import { runEvery } from './scheduler.ts';
import type { PeriodicJob } from './scheduler.ts';
import { systemClock } from '../time/clock.ts';
import type { Clock } from '../time/clock.ts';

/** controller-runtime's Runnable: runs until `signal` aborts. Leader-elected ones get their term's LeaseHold. */
export interface Runnable {
  start(signal: AbortSignal, hold?: LeaseHold): Promise<void>;
}

export type AddOptions =
  | { name: string; needLeaderElection: false }
  /** `lease`: the Lease (in the manager's namespace) whose holder runs it. */
  | { name: string; needLeaderElection: true; lease: string };

/** Runs `lead(signal, hold)` while this process holds the Lease `name`; resolves once `signal` aborted and the Lease is handed back. */
export type LeaderRunner = (args: {
  name: string;
  identity: string;
  lead: (signal: AbortSignal, hold?: LeaseHold) => Promise<void>;
  signal: AbortSignal;
}) => Promise<void>;

/** [operator] lease_duration, renew_deadline and retry_period, in seconds. */
export interface LeaseSettings {
  lease_duration: number;
  renew_deadline: number;
  retry_period: number;
}

export interface ManagerOptions {
  kube: KubeClient;
  /** Namespace of the Leases. */
  namespace: string;
  /** This process (pod name or hostname + pid): the leader-election identity. */
  identity: string;
  log: Logger;
  metrics?: Registry;
  lease?: LeaseSettings;
  /** Default: a new factory over kube. A process passes the one its /healthz reads. */
  informers?: SharedInformerFactory;
  informerDeps?: Partial<Omit<InformerDeps, 'kube' | 'log'>>;
  /** Test seam; default: the Lease-based election of src/runtime/leaderelection.ts. */
  runLeader?: LeaderRunner;
  /**
   * Compact the V8 heap once the caches have synced, before any runnable
   * starts (heap-compaction.ts). The process sets it; tests leave it off.
   */
  compactHeapAfterSync?: boolean;
  /** The time of the periodic jobs (every); default systemClock. */
  clock?: Clock;
}

interface Registered {
  name: string;
  runnable: Runnable;
}

/** The runnables of one Lease, and the term they are running in (if this process leads). */
interface LeaseGroup {
  runnables: Registered[];
  /** Run once every runnable of a term has stopped, before the term ends (termEnd). */
  endHooks: Array<() => Promise<void> | void>;
  term?: { signal: AbortSignal; hold?: LeaseHold; running: Set<Promise<void>>; ended: Promise<void> };
  campaign?: Promise<void>;
}

export class Manager {
  readonly informers: SharedInformerFactory;
  private readonly caches: Array<Informer<KubeObjectLike>> = [];
  private readonly others: Registered[] = [];
  private readonly othersRunning = new Set<Promise<void>>();
  private readonly leases = new Map<string, LeaseGroup>();
  private readonly stopHooks: Array<() => Promise<void>> = [];
  /** Aborted first: the runnables that run on every replica. */
  private readonly othersStop = new AbortController();
  /** Aborted second: campaigns end and leader-elected runnables stop. */
  private readonly electionStop = new AbortController();
  private cachesStoppedResolve: () => void = () => undefined;
  private readonly cachesStopped = new Promise<void>((resolve) => (this.cachesStoppedResolve = resolve));
  readonly log: Logger;
  readonly metrics: Registry | undefined;
  /** The time of the periodic jobs (every), and of the components' own waits. */
  readonly clock: Clock;
  private started: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private cachesSynced = false;

  constructor(private readonly o: ManagerOptions) {
    this.log = o.log.child({ component: 'manager' });
    this.metrics = o.metrics;
    this.clock = o.clock ?? systemClock;
    this.informers =
      o.informers ??
      new SharedInformerFactory({ ...o.informerDeps, kube: o.kube, log: o.log.child({ component: 'caches' }) });
  }

  /** The shared cache for (ref, namespace, selectors); the manager starts it, waits for it, and stops it. */
  informer<T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>): Informer<T> {
    return this.addCache(this.informers.informer(ref, opts));
  }

  /** The informer-factory function shape the store, the engine and the remediator take. */
  readonly informerFactory = <T extends KubeObjectLike>(ref: ResourceRef, opts: InformerOptions<T>): Informer<T> =>
    this.informer(ref, opts);

  /** A cache built elsewhere (test doubles) that this manager starts and stops. */
  addCache<T extends KubeObjectLike>(cache: Informer<T>): Informer<T> {
    this.caches.push(cache as unknown as Informer<KubeObjectLike>);
    if (this.started && !this.stopped) void cache.start().catch(() => undefined);
    return cache;
  }

  /** Registers a runnable; one added after start() starts at once (or with its Lease's current term). */
  add(runnable: Runnable, opts: AddOptions): void {
    const entry = { name: opts.name, runnable };
    if (!opts.needLeaderElection) {
      this.others.push(entry);
      if (this.cachesSynced && !this.stopped) this.runOther(entry);
      return;
    }
    const group = this.leaseGroup(opts.lease);
    group.runnables.push(entry);
    if (group.term && !group.term.signal.aborted) this.runInTerm(group, entry);
    else if (this.cachesSynced && !this.stopped) this.campaign(opts.lease, group);
  }

  /** A controller (controller-builder.ts): declare what it watches, then .reconcile(fn) registers it here. */
  controller(name: string, opts: ControllerBuilderOptions): ControllerBuilder {
    return new ControllerBuilder(this, name, opts);
  }

  /** Runs `job` periodically on the manager's clock: on every replica, or with `lease` only while leading it. */
  every(job: PeriodicJob, opts: { lease?: string } = {}): void {
    const runnable = { start: (signal: AbortSignal) => runEvery(job, { clock: this.clock, signal, log: this.log }) };
    this.add(
      runnable,
      opts.lease
        ? { name: job.name, needLeaderElection: true, lease: opts.lease }
        : { name: job.name, needLeaderElection: false },
    );
  }

  /**
   * Runs at the end of every term of `lease`, once all of the term's
   * runnables have stopped and before the Lease is handed back (on a graceful
   * stop it is still held, so work can be released cleanly); stop() waits for it.
   */
  onTermEnd(lease: string, hook: () => Promise<void> | void): void {
    this.leaseGroup(lease).endHooks.push(hook);
  }

  private leaseGroup(lease: string): LeaseGroup {
    let group = this.leases.get(lease);
    if (!group) {
      group = { runnables: [], endHooks: [] };
      this.leases.set(lease, group);
    }
    return group;
  }

  /** Runs after every runnable has stopped and before the caches stop (e.g. flushing Events). */
  onStop(hook: () => Promise<void>): void {
    this.stopHooks.push(hook);
  }

  /**
   * Starts the caches and, once every one has synced (retried for as long as
   * it takes), the runnables and the elections. Resolves then; rejects if
   * stop() came first. Calling it again returns the same promise.
   */
  start(): Promise<void> {
    this.started ??= this.startInOrder();
    return this.started;
  }

  private async startInOrder(): Promise<void> {
    await Promise.all(this.caches.map((c) => c.start()));
    if (this.stopped) throw new Error('manager stopped before its caches synced');
    if (this.o.compactHeapAfterSync) await compactHeap(this.log);
    this.cachesSynced = true;
    for (const entry of this.others) this.runOther(entry);
    // A Lease with only end-of-term hooks (onTermEnd before add) has nothing to lead for yet.
    for (const [lease, group] of this.leases) if (group.runnables.length > 0) this.campaign(lease, group);
  }

  /** True while every registered cache is serving (synced, its watch not failing for long). */
  ready(): boolean {
    return this.caches.every(informerReady);
  }

  /** True once stop() was called: a runnable whose term ends now is shutting down, not losing its Lease. */
  isStopping(): boolean {
    return this.stopped !== undefined;
  }

  /** Whether this process currently leads `lease` (and runs its runnables). */
  isLeading(lease: string): boolean {
    const term = this.leases.get(lease)?.term;
    return !!term && !term.signal.aborted;
  }

  /**
   * Whether this process may act as the holder of `lease` right now: it leads
   * it and the term's LeaseHold has not lapsed (a stall past the renew
   * deadline makes it false before the term ends). Asked right before each
   * Nova side effect (lease-fence.ts); false between terms.
   */
  holdsLease(lease: string): boolean {
    const term = this.leases.get(lease)?.term;
    return !!term && !term.signal.aborted && (term.hold?.held() ?? true);
  }

  /** The shutdown order of the header. Resolves once every Lease is released; close the client after. */
  stop(): Promise<void> {
    this.stopped ??= this.stopInOrder();
    return this.stopped;
  }

  private async stopInOrder(): Promise<void> {
    this.othersStop.abort();
    await Promise.all(this.othersRunning);
    this.electionStop.abort();
    await Promise.all([...this.leases.values()].map((g) => g.term?.ended));
    for (const hook of this.stopHooks) await hook().catch((err: unknown) => this.log.warn({ err }, 'stop hook failed'));
    for (const c of this.caches) c.stop();
    this.cachesStoppedResolve();
    await Promise.all([...this.leases.values()].map((g) => g.campaign));
  }

  private runOther(entry: Registered): void {
    const run = this.guard(entry, entry.runnable.start(this.othersStop.signal));
    this.othersRunning.add(run);
    void run.finally(() => this.othersRunning.delete(run));
  }

  private campaign(lease: string, group: LeaseGroup): void {
    if (group.campaign) return;
    const runLeader = this.o.runLeader ?? this.leaseRunner();
    group.campaign = runLeader({
      name: lease,
      identity: this.o.identity,
      signal: this.electionStop.signal,
      lead: (signal, hold) => this.lead(lease, group, signal, hold),
    }).catch((err: unknown) => this.log.error({ err, lease }, 'leader election stopped with an error'));
  }

  /**
   * One leadership term: every runnable of the Lease until all have stopped,
   * then the Lease's end-of-term hooks; on shutdown the Lease is kept until
   * the caches stopped.
   */
  private async lead(lease: string, group: LeaseGroup, signal: AbortSignal, hold?: LeaseHold): Promise<void> {
    let endTerm = (): void => undefined;
    const ended = new Promise<void>((resolve) => (endTerm = resolve));
    const term = { signal, ...(hold ? { hold } : {}), running: new Set<Promise<void>>(), ended };
    group.term = term;
    for (const entry of group.runnables) this.runInTerm(group, entry);
    try {
      // Runnables added during the term join `running`; wait until none is left.
      while (term.running.size > 0) await Promise.all(term.running);
      for (const hook of group.endHooks) {
        await Promise.resolve()
          .then(hook)
          .catch((err: unknown) => this.log.error({ err, lease }, 'end-of-term hook failed'));
      }
    } finally {
      if (group.term === term) group.term = undefined;
      endTerm();
    }
    if (this.electionStop.signal.aborted) await this.cachesStopped;
  }

  private runInTerm(group: LeaseGroup, entry: Registered): void {
    const term = group.term;
    if (!term) return;
    const run = this.guard(entry, entry.runnable.start(term.signal, term.hold));
    term.running.add(run);
    void run.finally(() => term.running.delete(run));
  }

  /** A runnable's failure is logged, never thrown into the manager: the others keep running. */
  private guard(entry: Registered, run: Promise<void>): Promise<void> {
    return run.catch((err: unknown) => this.log.error({ err, runnable: entry.name }, 'runnable stopped with an error'));
  }

  private leaseRunner(): LeaderRunner {
    const { kube, namespace, log, metrics, lease } = this.o;
    return ({ name, identity, lead, signal }) =>
      runLeaderElection({
        kube,
        namespace,
        name,
        identity,
        signal,
        log,
        ...(metrics ? { metrics } : {}),
        ...(lease
          ? {
              leaseDurationMs: lease.lease_duration * 1000,
              renewDeadlineMs: lease.renew_deadline * 1000,
              retryPeriodMs: lease.retry_period * 1000,
            }
          : {}),
        onStartedLeading: (leading, hold) => {
          log.info({ lease: name }, 'leading: runnables started');
          return lead(leading, hold);
        },
        onStoppedLeading: () => log.info({ lease: name }, 'no longer leading: runnables stopped'),
        onNewLeader: (leader) => log.info({ lease: name, leader }, 'leader'),
      });
  }
}
