// Memory of another Node process, read through its inspector (the process is
// started with NODE_OPTIONS=--inspect=127.0.0.1:<port>), so the product needs
// no debug endpoint. The inspector only listens until a session attaches; the
// bench attaches between measurements, never while load runs.
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

export interface MemorySample {
  /** Resident set size (what a container memory limit counts), MiB. */
  rssMiB: number;
  /** V8 heap reserved from the OS (all spaces, including free semi-space and fragmentation), MiB. */
  heapTotalMiB: number;
  /** Live JavaScript objects, MiB (after a forced full GC when the sample was taken with gc). */
  heapUsedMiB: number;
  /** Memory of C++ objects bound to JS objects, including array buffers, MiB. */
  externalMiB: number;
  arrayBuffersMiB: number;
  /** Per V8 space: size reserved and used, MiB. */
  spaces: Record<string, { sizeMiB: number; usedMiB: number }>;
}

interface CdpReply {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

const MiB = 1024 * 1024;

/** One inspector session over the process's DevTools websocket. */
export class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: CdpReply) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Map<string, (params: Record<string, unknown>) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as CdpReply;
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(msg.error.message));
        else p?.resolve(msg);
      } else if (msg.method) this.listeners.get(msg.method)?.(msg.params ?? {});
    });
  }

  /** Attaches to the inspector listening on 127.0.0.1:port. */
  static async connect(port: number): Promise<InspectorSession> {
    const r = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(5000) });
    const targets = (await r.json()) as Array<{ webSocketDebuggerUrl: string }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) throw new Error(`no inspector target on port ${port}`);
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot attach to ${url}`)), { once: true });
    });
    return new InspectorSession(ws);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<CdpReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`inspector ${method}: no reply within 120 s`));
      }, 120_000);
      this.pending.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Evaluates an expression in the process and returns its JSON-serialisable value. */
  async evaluate<T>(expression: string): Promise<T> {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true });
    const result = r.result as { result?: { value?: T }; exceptionDetails?: { text: string } };
    if (result.exceptionDetails) throw new Error(`evaluate: ${result.exceptionDetails.text}`);
    return result.result?.value as T;
  }

  /** Memory as the process sees it; with gc, after forced full collections (live heap only). */
  async memory(opts: { gc: boolean }): Promise<MemorySample> {
    if (opts.gc) {
      // Twice: the first collection can leave garbage that weak callbacks free only on the next.
      await this.send('HeapProfiler.collectGarbage');
      await this.send('HeapProfiler.collectGarbage');
    }
    const raw = await this.evaluate<{
      usage: NodeJS.MemoryUsage;
      spaces: Array<{ space_name: string; space_size: number; space_used_size: number }>;
    }>(`({ usage: process.memoryUsage(), spaces: process.getBuiltinModule('node:v8').getHeapSpaceStatistics() })`);
    const spaces: MemorySample['spaces'] = {};
    for (const s of raw.spaces)
      spaces[s.space_name] = { sizeMiB: s.space_size / MiB, usedMiB: s.space_used_size / MiB };
    return {
      rssMiB: raw.usage.rss / MiB,
      heapTotalMiB: raw.usage.heapTotal / MiB,
      heapUsedMiB: raw.usage.heapUsed / MiB,
      externalMiB: raw.usage.external / MiB,
      arrayBuffersMiB: raw.usage.arrayBuffers / MiB,
      spaces,
    };
  }

  /** Writes a .heapsnapshot (open it in Chrome DevTools, or bench/lib/heap-summary.ts). */
  async heapSnapshot(file: string): Promise<void> {
    // Streamed to the file: a snapshot of a few hundred MiB of heap is longer than one JS string may be.
    const out = createWriteStream(file);
    this.listeners.set('HeapProfiler.addHeapSnapshotChunk', (p) => out.write(String(p.chunk)));
    try {
      await this.send('HeapProfiler.enable');
      await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      await this.send('HeapProfiler.disable');
    } finally {
      this.listeners.delete('HeapProfiler.addHeapSnapshotChunk');
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    }
  }

  close(): void {
    this.ws.close();
  }
}

export interface GcTotals {
  /** Collections since the counter was installed, and the time they paused JavaScript. */
  count: number;
  pauseMs: number;
  /** Of those, scavenges (young generation) only. */
  scavenges: number;
  scavengePauseMs: number;
}

// A PerformanceObserver on 'gc' entries inside the observed process; it stays
// when the session detaches, so the load runs without a debugger attached.
const GC_COUNTER = `(() => {
  const t = { count: 0, pauseMs: 0, scavenges: 0, scavengePauseMs: 0 };
  const { PerformanceObserver, constants } = process.getBuiltinModule('node:perf_hooks');
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      t.count++;
      t.pauseMs += e.duration;
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) { t.scavenges++; t.scavengePauseMs += e.duration; }
    }
  }).observe({ entryTypes: ['gc'] });
  globalThis.__benchGcTotals = t;
  return true;
})()`;

/** Starts counting garbage collections in the process on 127.0.0.1:port. */
export async function installGcCounter(port: number): Promise<void> {
  const s = await InspectorSession.connect(port);
  try {
    await s.evaluate<boolean>(GC_COUNTER);
  } finally {
    s.close();
  }
}

/** The totals since installGcCounter. */
export async function readGcCounter(port: number): Promise<GcTotals> {
  const s = await InspectorSession.connect(port);
  try {
    return await s.evaluate<GcTotals>('({ ...globalThis.__benchGcTotals })');
  } finally {
    s.close();
  }
}

/** Attaches, samples and detaches, so the session costs nothing while load runs. */
export async function sampleMemory(port: number, opts: { gc: boolean }): Promise<MemorySample> {
  const s = await InspectorSession.connect(port);
  try {
    return await s.memory(opts);
  } finally {
    s.close();
  }
}

/** Attaches, writes the process's heap snapshot to `file` (its directory made if missing), and detaches. */
export async function heapSnapshot(port: number, file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const s = await InspectorSession.connect(port);
  try {
    await s.heapSnapshot(file);
  } finally {
    s.close();
  }
}
