// A small closed-loop HTTP load generator on undici: `concurrency` clients
// each send the next request as soon as the previous answer is read, for a
// fixed duration. Loopback only. Reports throughput and latency percentiles.
import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50ms: number;
  p99ms: number;
}

/** The nearest-rank p-th percentile of an ascending array (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export async function closedLoop(o: {
  url: string;
  path: string;
  headers?: Record<string, string>;
  concurrency: number;
  durationMs: number;
  warmupMs?: number;
  /** Called right before and right after the measured period (e.g. to read the server's CPU time). */
  onMeasure?: (phase: 'start' | 'end') => void;
}): Promise<LoadResult> {
  const u = new URL(o.url);
  const pool = new Pool(u.origin, { connections: o.concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const run = async (until: number, record: boolean) => {
    while (performance.now() < until) {
      const t0 = performance.now();
      try {
        const r = await pool.request({ method: 'GET', path: o.path, headers: o.headers });
        await r.body.arrayBuffer();
        if (r.statusCode >= 400) errors++;
      } catch {
        errors++;
      }
      if (record) latencies.push(performance.now() - t0);
    }
  };
  if (o.warmupMs) {
    const w = performance.now() + o.warmupMs;
    await Promise.all(Array.from({ length: o.concurrency }, () => run(w, false)));
  }
  o.onMeasure?.('start');
  const start = performance.now();
  const end = start + o.durationMs;
  await Promise.all(Array.from({ length: o.concurrency }, () => run(end, true)));
  const seconds = (performance.now() - start) / 1000;
  o.onMeasure?.('end');
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
  };
}

/** Latencies of sequential requests produced by `next(i)`. */
export async function sequential(
  n: number,
  send: (i: number) => Promise<number>,
): Promise<{ p50ms: number; p99ms: number; statuses: Record<number, number> }> {
  const lat: number[] = [];
  const statuses: Record<number, number> = {};
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const status = await send(i);
    lat.push(performance.now() - t0);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  lat.sort((a, b) => a - b);
  return { p50ms: percentile(lat, 50), p99ms: percentile(lat, 99), statuses };
}

export interface CountedResult {
  /** Requests sent (fewer than asked for when stopped early). */
  sent: number;
  seconds: number;
  p50ms: number;
  p99ms: number;
  maxMs: number;
  /** HTTP status → count; 0 for a request that got no answer. */
  statuses: Record<number, number>;
  /** Why the run stopped before sending everything, if it did. */
  stoppedEarly?: string;
  /** The slowest requests (open loop only): index in sending order and latency, slowest first. */
  slowest?: Array<{ i: number; ms: number }>;
}

/** Percentiles of unsorted latencies in ms. */
export function summarize(latencies: number[]): { p50ms: number; p99ms: number; maxMs: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50ms: percentile(sorted, 50), p99ms: percentile(sorted, 99), maxMs: sorted.at(-1) ?? NaN };
}

/** `n` requests, `concurrency` in flight (a closed loop with a count instead of a duration). */
export async function fixedCount(o: {
  count: number;
  concurrency: number;
  /** Sends request i and returns its HTTP status (0 when none came back). */
  send: (i: number) => Promise<number>;
  /** Checked after each answer: a reason to stop sending, e.g. too many 5xx in a row. */
  stopWhen?: (statuses: Record<number, number>, lastStatus: number) => string | undefined;
  onProgress?: (done: number) => void;
}): Promise<CountedResult> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  let stoppedEarly: string | undefined;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.count && stoppedEarly === undefined) {
        const i = next++;
        const t0 = performance.now();
        const status = await o.send(i).catch(() => 0);
        latencies.push(performance.now() - t0);
        statuses[status] = (statuses[status] ?? 0) + 1;
        stoppedEarly ??= o.stopWhen?.(statuses, status);
        o.onProgress?.(latencies.length);
      }
    }),
  );
  return {
    sent: latencies.length,
    seconds: (performance.now() - start) / 1000,
    ...summarize(latencies),
    statuses,
    ...(stoppedEarly === undefined ? {} : { stoppedEarly }),
  };
}

/**
 * An open loop: request i is sent at start + i / rate seconds whether or not
 * earlier ones have been answered, so a slow answer does not slow the
 * offered load down (and its latency is not hidden by a waiting client).
 */
export async function fixedRate(o: {
  ratePerSecond: number;
  count: number;
  send: (i: number) => Promise<number>;
}): Promise<CountedResult> {
  const byIndex: Array<{ i: number; ms: number }> = [];
  const statuses: Record<number, number> = {};
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < o.count; i++) {
    const due = start + (i * 1000) / o.ratePerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    inFlight.push(
      o
        .send(i)
        .catch(() => 0)
        .then((status) => {
          byIndex.push({ i, ms: performance.now() - t0 });
          statuses[status] = (statuses[status] ?? 0) + 1;
        }),
    );
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - start) / 1000;
  const summary = summarize(byIndex.map((x) => x.ms));
  const slowest = byIndex.sort((a, b) => b.ms - a.ms).slice(0, 5);
  return { sent: o.count, seconds, ...summary, statuses, slowest };
}

/** Items through `f`, `width` at a time; the first error stops new work and is rethrown. */
export async function inParallel<T>(
  items: readonly T[],
  width: number,
  f: (t: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length && !failed) {
        const i = next++;
        try {
          await f(items[i] as T, i);
        } catch (e) {
          failed = true;
          throw e;
        }
      }
    }),
  );
}
