// Leader election on a coordination.k8s.io/v1 Lease, following client-go's
// tools/leaderelection algorithm. Only local clocks are trusted: a lease held
// by someone else is considered expired when we have seen the same record,
// unchanged, for its leaseDuration by OUR clock (never by comparing the
// remote renewTime with our time, so clock skew between nodes cannot make
// two leaders). Every duration is measured on the monotonic clock
// (performance.now): a wall-clock jump (NTP step, a VM resumed) changes
// neither when a follower takes over nor how long a leader believes it still
// leads. The wall clock only writes the Lease's acquireTime/renewTime.
//
// Fencing: the lead work gets a LeaseHold. held() is true only while the last
// successful renewal started less than renewDeadline ago (monotonic), which
// stays below leaseDuration, the time any follower waits after seeing that
// renewal. So a leader that was stalled (SIGSTOP, a long GC pause, a frozen
// VM) past its lease finds held() false the moment it runs again, before its
// renew loop has noticed anything; the engine checks it right before every
// Nova side effect. A renewal that finds another holder steps down at once.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../k8s/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { sleepUnlessAborted } from './backoff.ts';
import { leaderMetrics } from './metrics.ts';
import { rfc3339Micro } from '../time/format.ts';
import { systemNowMs } from '../time/clock.ts';

export interface LeaderElectionOptions {
  kube: KubeClient;
  namespace: string;
  /** Lease name. */
  name: string;
  /** This candidate (pod name or hostname + pid); unique among candidates. */
  identity: string;
  /** Runs while we lead; its signal aborts when leadership ends. Awaited before the lease is released. */
  onStartedLeading: (signal: AbortSignal, hold: LeaseHold) => Promise<void> | void;
  onStoppedLeading: () => void;
  onNewLeader?: (identity: string) => void;
  /** Aborting it stops campaigning; a leader steps down and releases the lease. */
  signal: AbortSignal;
  /** Non-leaders wait this long after last seeing the record change; default 15 s. */
  leaseDurationMs?: number;
  /** A leader that cannot renew for this long steps down; default 10 s (must be < leaseDuration). */
  renewDeadlineMs?: number;
  /** Interval between attempts; default 2 s. */
  retryPeriodMs?: number;
  /** Acquire attempts are spread over [retry, retry*(1+jitter)]; default 1.2. */
  jitterFactor?: number;
  /** Clear holderIdentity on graceful stop so the next candidate takes over at once; default true. */
  releaseOnCancel?: boolean;
  log: Logger;
  metrics?: Registry;
  /** Wall clock (ms), for the Lease's timestamps only; injectable for tests. */
  now?: () => number;
  /** Monotonic clock (ms) for every duration; default performance.now. Injectable for tests. */
  monotonicNow?: () => number;
}

/** Whether this process may still act as leader right now (see the header: fencing). */
export interface LeaseHold {
  held(): boolean;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/**
 * Campaigns until signal aborts, leading whenever it holds the lease; after
 * losing the lease it waits for the lead work to return and campaigns again.
 * Resolves once signal has aborted and any leadership has been handed back.
 */
export async function runLeaderElection(o: LeaderElectionOptions): Promise<void> {
  const elector = new LeaderElector(o);
  await elector.run();
}

class LeaderElector {
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly jitter: number;
  private readonly now: () => number;
  private readonly mono: () => number;
  /** Monotonic time at which the last successful acquire/renew attempt started. */
  private renewedAt = -Infinity;
  /** Set when a renewal found the Lease held by someone else. */
  private takenOver = false;
  private readonly log: Logger;
  private readonly setStatus: (leading: boolean) => void;
  /** The last lease record we saw, and when (our clock) we first saw it that way. */
  private observed: { spec: LeaseSpec; key: string; resourceVersion?: string } | undefined;
  private observedAt = 0;
  private reportedLeader: string | undefined;

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryMs = options.retryPeriodMs ?? 2_000;
    this.jitter = options.jitterFactor ?? 1.2;
    this.now = options.now ?? systemNowMs;
    this.mono = options.monotonicNow ?? (() => performance.now());
    if (this.renewDeadlineMs >= this.leaseMs) throw new Error('leader election: renewDeadline must be < leaseDuration');
    if (this.retryMs * this.jitter >= this.renewDeadlineMs) {
      throw new Error('leader election: retryPeriod * jitter must be < renewDeadline');
    }
    this.log = options.log.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
    this.setStatus = options.metrics ? leaderMetrics(options.metrics, options.name) : () => undefined;
  }

  async run(): Promise<void> {
    const signal = this.options.signal;
    while (!signal.aborted) {
      if (!(await this.acquire())) break;
      await this.lead();
      if (!signal.aborted) await sleepUnlessAborted(this.retryMs, signal);
    }
  }

  /** Tries every retryPeriod (jittered) until it holds the lease; false if stopped first. */
  private async acquire(): Promise<boolean> {
    const signal = this.options.signal;
    this.log.info('campaigning for the lease');
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(this.renewDeadlineMs)) return true;
      await sleepUnlessAborted(this.retryMs * (1 + Math.random() * this.jitter), signal);
    }
    return false;
  }

  /** Leads until renewals fail for renewDeadline, the lead work returns, or we are stopped. */
  private async lead(): Promise<void> {
    const leading = new AbortController();
    this.log.info('became leader');
    this.setStatus(true);
    let lost = false;
    this.takenOver = false;
    const hold: LeaseHold = {
      held: () => !lost && !this.takenOver && this.mono() - this.renewedAt < this.renewDeadlineMs,
    };
    const work = (async () => {
      try {
        await this.options.onStartedLeading(leading.signal, hold);
      } catch (err) {
        this.log.error({ err }, 'lead work failed');
      }
    })();
    let workEnded = false;
    void work.then(() => {
      workEnded = true;
    });
    const stop = AbortSignal.any([this.options.signal, leading.signal]);
    while (!stop.aborted && !workEnded) {
      await sleepUnlessAborted(this.retryMs, stop);
      if (stop.aborted || workEnded) break;
      if (!(await this.renew(stop))) {
        lost = !stop.aborted;
        break;
      }
    }
    if (lost)
      this.log.warn({ renewDeadlineMs: this.renewDeadlineMs }, 'could not renew the lease in time; stepping down');
    else if (workEnded && !this.options.signal.aborted)
      this.log.warn('lead work returned while leading; stepping down');
    leading.abort();
    // The work must be over before the lease is handed back, or two leaders would overlap.
    await work;
    this.setStatus(false);
    if (!lost && (this.options.releaseOnCancel ?? true)) await this.release();
    try {
      this.options.onStoppedLeading();
    } catch (err) {
      this.log.error({ err }, 'onStoppedLeading threw');
    }
    this.log.info('stopped leading');
  }

  /** Renews every retryPeriod until success; false once renewDeadline passed without one. */
  private async renew(stop: AbortSignal): Promise<boolean> {
    const deadline = this.renewedAt + this.renewDeadlineMs;
    while (!stop.aborted) {
      const remaining = deadline - this.mono();
      if (remaining <= 0) return false;
      if (await this.tryAcquireOrRenew(remaining)) return true;
      if (this.takenOver) {
        this.log.warn('the lease is held by another candidate; stepping down now');
        return false;
      }
      await sleepUnlessAborted(Math.min(this.retryMs, Math.max(0, deadline - this.mono())), stop);
    }
    return true;
  }

  /** One client-go tryAcquireOrRenew round, bounded by timeoutMs. */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    // The timeout does not cancel the attempt's requests. Once given up on, its late answers must change
    // nothing: a read from before this process acquired the Lease would otherwise be taken for a take-over
    // and leave a renewing leader with held() false for the rest of its term.
    const attempt: Attempt = { live: true };
    try {
      return await withTimeout(this.attempt(attempt), timeoutMs);
    } catch (err) {
      this.log.warn({ err }, 'lease acquire/renew attempt failed');
      return false;
    } finally {
      attempt.live = false;
    }
  }

  private async attempt(attempt: Attempt): Promise<boolean> {
    if (await this.renewAsObserved(attempt)) return true;
    if (!attempt.live) return false;
    const { kube, namespace, name, identity } = this.options;
    const now = this.mono();
    const stamp = this.stamp();
    const leaseSeconds = this.leaseSeconds();
    let lease: Lease;
    try {
      lease = await kube.get<Lease>(RESOURCES.leases, namespace, name);
    } catch (err) {
      if (!isNotFound(err) || !attempt.live) throw err;
      const spec: LeaseSpec = {
        holderIdentity: identity,
        leaseDurationSeconds: leaseSeconds,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: 0,
      };
      try {
        const created = await kube.create<Lease>(RESOURCES.leases, namespace, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec,
        });
        return attempt.live && this.wrote(created, now);
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    if (!attempt.live) return false;
    const old = lease.spec ?? {};
    this.see(lease, now);
    const holder = old.holderIdentity ?? '';
    const expiresAt = this.observedAt + (old.leaseDurationSeconds ?? leaseSeconds) * 1000;
    if (holder !== '' && holder !== identity && expiresAt > now) {
      // Ours until a moment ago (renewedAt is set): someone else took it while we were not looking.
      if (this.renewedAt > -Infinity) this.takenOver = true;
      return false;
    }

    const renewing = holder === identity;
    const spec: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: leaseSeconds,
      acquireTime: renewing && old.acquireTime ? old.acquireTime : stamp,
      renewTime: stamp,
      leaseTransitions: (old.leaseTransitions ?? 0) + (renewing ? 0 : 1),
    };
    try {
      const updated = await kube.replace<Lease>(RESOURCES.leases, namespace, name, { ...lease, spec });
      return attempt.live && this.wrote(updated, now);
    } catch (err) {
      if (isConflict(err)) return false; // lost the race to another candidate
      throw err;
    }
  }

  /**
   * client-go's fast path for a leader: write the renewal over the Lease as
   * this process last wrote it (its resourceVersion a precondition), without
   * reading it first. One request per renewal instead of two; if anyone else
   * wrote the Lease since, the precondition fails and attempt() reads it and
   * decides as before. Any failure here is left to that slow path.
   */
  private async renewAsObserved(attempt: Attempt): Promise<boolean> {
    const { kube, namespace, name, identity } = this.options;
    const observed = this.observed;
    if (!observed?.resourceVersion || observed.spec.holderIdentity !== identity) return false;
    if (this.renewedAt === -Infinity || this.takenOver) return false;
    const now = this.mono();
    try {
      const updated = await kube.replace<Lease>(RESOURCES.leases, namespace, name, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace, resourceVersion: observed.resourceVersion },
        spec: {
          ...observed.spec,
          leaseDurationSeconds: this.leaseSeconds(),
          renewTime: this.stamp(),
        },
      });
      return attempt.live && this.wrote(updated, now);
    } catch {
      return false;
    }
  }

  /** Graceful hand-over: an empty holder lets the next candidate acquire at once. */
  private async release(): Promise<void> {
    const observed = this.observed;
    if (!observed || observed.spec.holderIdentity !== this.options.identity) return;
    const stamp = this.stamp();
    try {
      await withTimeout(
        this.options.kube.replace<Lease>(RESOURCES.leases, this.options.namespace, this.options.name, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name: this.options.name,
            namespace: this.options.namespace,
            resourceVersion: observed.resourceVersion,
          },
          spec: {
            holderIdentity: null,
            leaseDurationSeconds: 1,
            acquireTime: stamp,
            renewTime: stamp,
            leaseTransitions: observed.spec.leaseTransitions ?? 0,
          },
        }),
        this.renewDeadlineMs,
      );
      this.log.info('released the lease');
    } catch (err) {
      // Not fatal: others take over when the lease expires.
      this.log.warn({ err }, 'could not release the lease');
    }
  }

  /** Our write of the Lease succeeded (its attempt started at monotonic `now`): it is ours, renewed then. */
  private wrote(lease: Lease, now: number): true {
    this.see(lease, now);
    this.renewedAt = now;
    return true;
  }

  /** The Lease's duration as written, whole seconds. */
  private leaseSeconds(): number {
    return Math.ceil(this.leaseMs / 1000);
  }

  /** The wall-clock time written into the Lease (acquireTime, renewTime). */
  private stamp(): string {
    return rfc3339Micro(new Date(this.now()));
  }

  /** Records the lease as observed now if it changed, and reports a new leader. */
  private see(lease: Lease, now: number): void {
    const spec = lease.spec ?? {};
    const key = JSON.stringify([
      spec.holderIdentity ?? '',
      spec.leaseDurationSeconds,
      spec.acquireTime,
      spec.renewTime,
      spec.leaseTransitions,
    ]);
    if (this.observed?.key !== key) this.observedAt = now;
    this.observed = { spec, key, resourceVersion: lease.metadata.resourceVersion };
    const holder = spec.holderIdentity ?? '';
    if (holder && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      this.log.info({ leader: holder }, 'new leader observed');
      try {
        this.options.onNewLeader?.(holder);
      } catch (err) {
        this.log.error({ err }, 'onNewLeader threw');
      }
    }
  }
}

/** One acquire/renew attempt; `live` turns false once its caller stopped waiting for it. */
interface Attempt {
  live: boolean;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${Math.round(ms)} ms`)), Math.max(1, ms));
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
