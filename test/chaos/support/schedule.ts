// The chaos schedule: which faults a run injects, when, and for how long, all
// drawn from one seed, so a printed seed names the same schedule again
// (MASAKARI_CHAOS_SEED=N). The interleaving with the processes' own timing is
// not seeded: a seed reproduces the faults, not every race they provoke.

import { prng } from '../../../src/domain/testing/fuzz.ts';

/** The seeded PRNG the fuzz tests use (mulberry32); returns floats in [0, 1). */
export const seededRandom = prng;

export const FAULT_KINDS = [
  'kill-engine', // SIGKILL an engine process, restart it after a delay
  'kill-api', // SIGKILL an api process, restart it after a delay
  'freeze-apiserver', // SIGSTOP kube-apiserver for 2-20 s, then SIGCONT
  'restart-apiserver', // stop kube-apiserver and start it again on the same port
  'freeze-leader', // SIGSTOP the leading engine past its lease, then SIGCONT
  'freeze-leader-mid-unlock', // Nova holds the leader's unlock, SIGSTOP it, SIGCONT once the other leads, let the unlock land
  'nova-500', // Nova answers 500 before acting
  'nova-timeout', // Nova never answers (the request times out) before acting
  'nova-lost-response', // Nova acts, then the answer is lost (reset, hang or 500)
] as const;

/** Faults only the production-shaped control plane has (startControlPlane({ shape: 'ha' }), `make chaos-ha`). */
export const HA_FAULT_KINDS = [
  'kill-etcd-member', // SIGKILL one of the three etcd members, restart it after 1-10 s
  'kill-etcd-leader', // the same for the member that leads
  'lose-quorum', // SIGKILL two of the three members for 10-60 s, then restart them
  'kill-apiserver', // SIGKILL one of the two kube-apiservers (its open watches end), restart it after 1-10 s
  'reset-balancer', // the balancer resets every connection at once
  'degrade-etcd-link', // API server 1's link to etcd delayed 0.2-1.5 s per chunk, or partitioned, for 2-20 s
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number] | (typeof HA_FAULT_KINDS)[number];

/** The kinds a session draws from, by control-plane shape; the single shape's seeds keep their schedules. */
export function faultKindsFor(shape: 'single' | 'ha'): readonly FaultKind[] {
  return shape === 'ha' ? [...FAULT_KINDS, ...HA_FAULT_KINDS] : FAULT_KINDS;
}

/** Faults that act on the same thing run one after the other (see runSchedule). */
export type Lane = 'engine' | 'api' | 'apiserver' | 'nova' | 'etcd' | 'balancer' | 'link';

export interface Fault {
  kind: FaultKind;
  lane: Lane;
  /** Milliseconds after the notifications were sent. */
  atMs: number;
  /** kill-*: which of the two processes (0 or 1), or of the three etcd members. */
  target?: number;
  /** kill-*: restart delay; freeze-apiserver, freeze-leader: how long the process stays stopped. */
  durationMs?: number;
  /** nova-*: how many Nova requests it hits; nova-lost-response: how the answer is lost. */
  count?: number;
  lostAs?: 'reset' | 'hang' | 500;
  /** degrade-etcd-link: each chunk held this long (ms); undefined: partitioned. */
  delayMs?: number;
  /** nova-*: which requests: any Nova call, or only the server actions (evacuate, lock, unlock). */
  novaTarget?: 'any' | 'server-actions';
}

export interface ScheduleOptions {
  /** Lease duration (ms) of the engines: freeze-leader stops the leader longer than this. */
  leaseMs: number;
  /** Faults start within this window after the notifications were sent. */
  windowMs: number;
  /** Faults per run (inclusive bounds). */
  minFaults: number;
  maxFaults: number;
  /** The kinds to draw from; default FAULT_KINDS (faultKindsFor). */
  kinds?: readonly FaultKind[];
  /**
   * Shorter outages of shape ha (`make test`'s seeds, MASAKARI_CHAOS_QUICK=1): quorum lost for 10-20 s
   * instead of 10-60 s. The soak (`make chaos-ha`) keeps the full range.
   */
  quick?: boolean;
}

const LANE: Record<FaultKind, Lane> = {
  'kill-engine': 'engine',
  'freeze-leader': 'engine',
  'freeze-leader-mid-unlock': 'engine',
  'kill-api': 'api',
  'freeze-apiserver': 'apiserver',
  'restart-apiserver': 'apiserver',
  'nova-500': 'nova',
  'nova-timeout': 'nova',
  'nova-lost-response': 'nova',
  'kill-etcd-member': 'etcd',
  'kill-etcd-leader': 'etcd',
  'lose-quorum': 'etcd',
  'kill-apiserver': 'apiserver',
  'reset-balancer': 'balancer',
  'degrade-etcd-link': 'link',
};

/** The faults of shape ha that take something down: how many to pick the target from (none: the fault picks it) and for how long (ms). */
const HA_DOWN: Record<
  'kill-etcd-member' | 'kill-etcd-leader' | 'lose-quorum' | 'kill-apiserver' | 'degrade-etcd-link',
  { targets?: number; ms: [number, number] }
> = {
  'kill-etcd-member': { targets: 3, ms: [1_000, 10_000] },
  'kill-etcd-leader': { ms: [1_000, 10_000] },
  'lose-quorum': { ms: [10_000, 60_000] },
  'kill-apiserver': { targets: 2, ms: [1_000, 10_000] },
  'degrade-etcd-link': { ms: [2_000, 20_000] },
};
/** MASAKARI_CHAOS_QUICK: the longest quorum loss `make test` draws (ms). */
const QUICK_QUORUM_LOSS_MS = 20_000;

const between = (rnd: () => number, lo: number, hi: number): number => Math.round(lo + rnd() * (hi - lo));

function draw(kind: FaultKind, rnd: () => number, o: ScheduleOptions): Fault {
  const f: Fault = { kind, lane: LANE[kind], atMs: between(rnd, 0, o.windowMs) };
  switch (kind) {
    case 'kill-engine':
    case 'kill-api':
      f.target = rnd() < 0.5 ? 0 : 1;
      f.durationMs = between(rnd, 200, 5_000);
      break;
    case 'freeze-apiserver':
      f.durationMs = between(rnd, 2_000, 20_000);
      break;
    case 'kill-etcd-member':
    case 'kill-etcd-leader':
    case 'lose-quorum':
    case 'kill-apiserver':
    case 'degrade-etcd-link': {
      const down = HA_DOWN[kind];
      if (down.targets) f.target = Math.floor(rnd() * down.targets);
      const [lo, hi] = down.ms;
      f.durationMs = between(rnd, lo, kind === 'lose-quorum' && o.quick ? QUICK_QUORUM_LOSS_MS : hi);
      if (kind === 'degrade-etcd-link' && rnd() < 0.5) f.delayMs = between(rnd, 200, 1_500);
      break;
    }
    case 'freeze-leader':
      // past the lease, so the other engine takes over while this one is stopped
      f.durationMs = between(rnd, o.leaseMs + 1_000, o.leaseMs + 5_000);
      break;
    case 'nova-500':
    case 'nova-timeout':
      f.count = between(rnd, 1, 3);
      f.novaTarget = rnd() < 0.5 ? 'any' : 'server-actions';
      break;
    case 'nova-lost-response':
      f.count = between(rnd, 1, 3);
      f.lostAs = (['reset', 'hang', 500] as const)[Math.floor(rnd() * 3)];
      f.novaTarget = 'server-actions';
      break;
    case 'freeze-leader-mid-unlock': // stopped until the other engine leads (runSchedule)
    case 'restart-apiserver':
    case 'reset-balancer':
      break;
  }
  return f;
}

/**
 * The faults of one run, in start order. The first is kinds[seed mod kinds.length]
 * (9 kinds by default), so any that many consecutive seeds inject every kind at
 * least once; the rest are drawn.
 */
export function scheduleFor(seed: number, o: ScheduleOptions): Fault[] {
  const all = o.kinds ?? FAULT_KINDS;
  const rnd = seededRandom(seed);
  const n = between(rnd, o.minFaults, o.maxFaults);
  const kinds: FaultKind[] = [all[seed % all.length]!];
  while (kinds.length < n) kinds.push(all[Math.floor(rnd() * all.length)]!);
  return kinds.map((k) => draw(k, rnd, o)).sort((a, b) => a.atMs - b.atMs);
}

export function describeFault(f: Fault): string {
  const parts = [`+${(f.atMs / 1000).toFixed(1)}s ${f.kind}`];
  if (f.target !== undefined) parts.push(`#${f.target}`);
  if (f.durationMs !== undefined) parts.push(`${(f.durationMs / 1000).toFixed(1)}s`);
  if (f.count !== undefined) parts.push(`x${f.count}`);
  if (f.lostAs !== undefined) parts.push(`as ${f.lostAs}`);
  if (f.kind === 'degrade-etcd-link') parts.push(f.delayMs === undefined ? 'partitioned' : `delayed ${f.delayMs}ms`);
  if (f.novaTarget !== undefined) parts.push(`on ${f.novaTarget}`);
  return parts.join(' ');
}

/**
 * The engine whose wall clock is skewed during a run (support/skewed-clock.ts): the one that leads
 * when the run starts, or the other one, which leads after a take-over. Nova keeps true time.
 */
export interface ClockSkew {
  engine: 'leader' | 'standby';
  /**
   * Added to that engine's wall clock: 1-30 s either way, so mostly beyond the 5 s skew with Nova
   * the engine allows for when it matches Nova's migrations to its own records.
   */
  offsetMs: number;
}

/** A seed's clock skew, from its own stream of the seed, so the seed's fault schedule is what it was without the skew. */
export function clockSkewFor(seed: number): ClockSkew {
  const rnd = seededRandom((seed ^ 0x5ca1ab1e) >>> 0);
  const engine = rnd() < 0.75 ? 'leader' : 'standby';
  const magnitude = between(rnd, 1_000, 30_000);
  return { engine, offsetMs: rnd() < 0.5 ? -magnitude : magnitude };
}

export function describeSkew(s: ClockSkew, slot: string): string {
  const secs = (Math.abs(s.offsetMs) / 1000).toFixed(1);
  return `${slot} (the ${s.engine} at the start) runs its clock ${secs} s ${s.offsetMs < 0 ? 'behind' : 'ahead'}`;
}
