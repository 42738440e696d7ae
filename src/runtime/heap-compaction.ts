// One full, memory-reducing garbage collection right after a process's first
// list, before its runnables start.
//
// Why: the first list of every cache fills the V8 heap in a few seconds
// (what the caches keep plus as much again of parsed pages and grown-out map
// storage), and V8 schedules its next full
// collection from that peak. An ordinary full collection then frees the
// garbage but keeps the emptied pages committed, so the resident set stays
// near the start-up peak for the life of the process; only a collection made
// for memory returns them (docs/benchmarks.md, Scale). This is that
// collection, once, at the one moment the process knows it has just loaded
// everything and serves nothing yet: one short pause before the first Ready
// (the log line gives its duration) instead of a start-up peak kept for good.
//
// How: the inspector protocol's HeapProfiler.collectGarbage, in process
// (node:inspector), which V8 runs as it does under memory pressure. Unlike
// global.gc it needs no --expose-gc flag, and it leaves nothing attached:
// the session is closed at once.
import { Session } from 'node:inspector/promises';
import type { Logger } from 'pino';

/** Runs the collection; resolves with what it did, or undefined when the inspector is unavailable. */
export async function compactHeap(log: Logger): Promise<{ ms: number; residentMiB: number } | undefined> {
  const started = performance.now();
  const session = new Session();
  try {
    session.connect();
    await session.post('HeapProfiler.collectGarbage');
  } catch (err) {
    // A Node built without the inspector: the heap is left to V8, as before.
    log.debug({ err }, 'heap compaction after the first list skipped');
    return undefined;
  } finally {
    session.disconnect();
  }
  const result = {
    ms: Math.round(performance.now() - started),
    residentMiB: Math.round(process.memoryUsage.rss() / 1048576),
  };
  log.info({ duration_ms: result.ms, resident_mib: result.residentMiB }, 'heap compacted after the first list');
  return result;
}
