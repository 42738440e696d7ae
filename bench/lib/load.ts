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
