// When a replica may show a sealed notification it did not create itself.
//
// Why: the REST path creates its sealed Notification alongside its duplicate
// claim, not after it (notification-intake.ts accept), so an intake costs
// one API round trip instead of two. A sealed Notification is admitted the
// moment it exists (seal.ts), so the loser of a duplicate race
// (identical notifications POSTed to two replicas at once) exists, admitted,
// for the milliseconds between its create and its delete. A replica that
// listed it then would show a notification whose POST answers 409. Masakari,
// deciding each POST in one SQL transaction, never does.
//
// So a sealed notification the engine has not written yet (status
// admittedBySeal) is provisional on a replica until one of:
//   - this replica's own intake accepted it (confirm), which is the common
//     case, and costs nothing;
//   - its duplicate claim stands behind it (sealedIntakeStanding, duplicate-claim.ts):
//     probed once per such notification, in the background as it enters the
//     cache, and on demand when a read by its uuid misses (fresh reads);
//   - it is older than SEALED_CLAIM_GRACE_MS, unless a probe found that it
//     lost: the claim decides within milliseconds, so an undecided one that
//     old was left by a creator that died (the engine decides it then).
// A provisional notification is not listed and not found by uuid, and does
// not count as a stored duplicate (findCachedDuplicate: the claim decides
// concurrent intakes). It does count for isUnderRecovery: its host has a
// notification being decided, and the winner of its race is as new.
import type { Logger } from 'pino';
import type { KubeClient } from '../../k8s/client.ts';
import type { Notification } from '../../model/types.ts';
import { isAdmitted } from '../../domain/admitted.ts';
import type { Informer } from '../../runtime/types.ts';
import type { Backoff } from '../../k8s/retry-on-conflict.ts';
import { BackoffManager } from '../../runtime/backoff.ts';
import type { Standing } from './standing.ts';
import { sealedIntakeStanding, withinSealedClaimGrace } from './standing.ts';

/** Waits between probes of an undecided claim: 50 ms doubling to 1 s, for as long as the notification is young. */
const PROBE_BACKOFF: Readonly<Backoff> = Object.freeze({
  steps: Infinity,
  delayMs: 50,
  factor: 2,
  jitter: 0,
  capMs: 1_000,
});

/** A standing the claim has decided. */
type Decided = Exclude<Standing, 'undecided'>;

export interface SealedVisibilityDeps {
  kube: KubeClient;
  namespace: string;
  cache: Pick<Informer<Notification>, 'on' | 'get'>;
  /** [DEFAULT] duplicate_notification_detection_interval. */
  windowSeconds: number;
  now: () => Date;
  log: Logger;
}

const awaitingEngine = (n: Notification): boolean => n.status?.admittedBySeal === true;

export class SealedVisibility {
  /** Decided notifications still awaiting the engine's first write, by metadata.name. */
  private readonly decided = new Map<string, Decided>();
  /** Names this replica's intake is deciding right now: it confirms or deletes them itself. */
  private readonly ownIntakes = new Set<string>();
  private readonly probing = new Map<string, Promise<void>>();
  /** Pending waits between probes, each with what ends it early (stop). */
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private stopped = false;

  constructor(private readonly deps: SealedVisibilityDeps) {
    deps.cache.on('add', (n) => this.observe(n));
    deps.cache.on('update', (n) => this.observe(n));
    deps.cache.on('delete', (n, old) => this.forget((old ?? n).metadata.name ?? ''));
  }

  /** True while `n` is provisional here (see the header). */
  hides(n: Notification): boolean {
    if (!awaitingEngine(n)) return false;
    const decision = this.decided.get(n.metadata.name ?? '');
    if (decision) return decision === 'yielded';
    return this.young(n);
  }

  /** This replica's intake is about to create `name` alongside its claim. */
  intakeStarted(name: string): void {
    this.ownIntakes.add(name);
  }

  /** This replica's intake ended: `accepted` when its claim stands behind `name`. */
  intakeEnded(name: string, accepted: boolean): void {
    this.ownIntakes.delete(name);
    if (accepted) {
      this.decided.set(name, 'accepted');
      return;
    }
    // Deleted by the intake, or (if that delete failed) left to a probe.
    const n = this.deps.cache.get(name);
    if (n) this.observe(n);
  }

  /** Decides `n` now if it is provisional (a read by its uuid waits for this). */
  async settle(n: Notification): Promise<void> {
    if (!this.hides(n) || this.decided.has(n.metadata.name ?? '')) return;
    await this.probe(n, false);
  }

  stop(): void {
    this.stopped = true;
    for (const [t, wake] of this.timers) {
      clearTimeout(t);
      wake();
    }
    this.timers.clear();
  }

  private young(n: Notification): boolean {
    return withinSealedClaimGrace(n, this.deps.now());
  }

  private observe(n: Notification): void {
    const name = n.metadata.name ?? '';
    if (!awaitingEngine(n) || n.metadata.deletionTimestamp) {
      this.forget(name);
      return;
    }
    if (this.decided.has(name) || this.ownIntakes.has(name) || !this.young(n)) return;
    void this.probe(n, true);
  }

  private forget(name: string): void {
    this.decided.delete(name);
  }

  /**
   * Reads the claim behind `n` until it decides or `n` is past the grace;
   * one probe per name at a time. `background`: backs off between undecided
   * reads; otherwise (a waiting read) reads at most twice.
   */
  private probe(n: Notification, background: boolean): Promise<void> {
    const name = n.metadata.name ?? '';
    const running = this.probing.get(name);
    if (running) return running;
    const done = this.probeLoop(n, background).finally(() => this.probing.delete(name));
    this.probing.set(name, done);
    return done;
  }

  private async probeLoop(n: Notification, background: boolean): Promise<void> {
    const { kube, namespace, windowSeconds, now, log } = this.deps;
    const name = n.metadata.name ?? '';
    const backoff = new BackoffManager(PROBE_BACKOFF);
    for (let attempt = 1; !this.stopped; attempt++) {
      if (this.ownIntakes.has(name) || this.decided.has(name) || !this.young(n)) return;
      try {
        const standing = await sealedIntakeStanding(kube, namespace, n, windowSeconds, now());
        if (standing !== 'undecided') {
          // Still cached and awaiting the engine (not deleted meanwhile): remember it.
          if (this.deps.cache.get(name)) this.decided.set(name, standing);
          return;
        }
      } catch (err) {
        // Shown once past its grace anyway; a failing API server is retried like an undecided claim.
        log.debug({ err, notification: name }, 'could not read the claim behind a sealed notification');
      }
      if (!background && attempt >= 2) return;
      await this.sleep(backoff.next());
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      t.unref?.();
      this.timers.set(t, resolve);
    });
  }
}

/**
 * The notifications the Masakari API shows: admitted, and not held back by
 * `visibility` (none: every admitted one). Defined here, not by its reader,
 * so the cache's event handlers that filter with it (notification-index.ts)
 * call down into this file rather than back into the repository.
 */
export function visibleNotifications(visibility?: Pick<SealedVisibility, 'hides'>): (n: Notification) => boolean {
  return (n) => isAdmitted(n) && !visibility?.hides(n);
}

const perCache = new WeakMap<object, { visibility: SealedVisibility; users: number }>();

/**
 * The SealedVisibility of this notification cache object: one per cache, so
 * stores handed the very same cache share one, and one intake's confirmation
 * serves them all. `release` stops it when its last user does. A shared
 * informer hands each store its own handle (src/runtime/shared-informers.ts),
 * so in a process running the API and the remediator on one namespace (`make
 * run`) each has its own: the remediator's then probes the claim of each
 * notification the API created, once, in the background.
 */
export function sharedSealedVisibility(deps: SealedVisibilityDeps): {
  visibility: SealedVisibility;
  release: () => void;
} {
  let entry = perCache.get(deps.cache);
  if (!entry) perCache.set(deps.cache, (entry = { visibility: new SealedVisibility(deps), users: 0 }));
  entry.users++;
  const held = entry;
  let released = false;
  return {
    visibility: held.visibility,
    release: () => {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      held.visibility.stop();
      perCache.delete(deps.cache);
    },
  };
}
