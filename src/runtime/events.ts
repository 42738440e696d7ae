// Kubernetes Events (events.k8s.io/v1) for what the operator does to an
// object, visible in `kubectl describe` and `kubectl events`. Recording never
// throws and never blocks the caller: writes happen in the background, a
// repeat of the same event within the window bumps series.count on the
// existing Event instead of creating another (client-go's isomorphic-event
// series), repeats arriving while a write is in flight are coalesced into
// one update, and a token bucket caps the write rate so a hot loop cannot
// flood the API server.
import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClient } from '../k8s/client.ts';
import { isNotFound } from '../k8s/client.ts';
import { RESOURCES } from '../k8s/resources.ts';
import { MANAGED_BY } from '../model/constants.ts';
import { microTime } from './timefmt.ts';

export interface ObjectReference {
  apiVersion?: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface EventInput {
  regarding: ObjectReference;
  type: 'Normal' | 'Warning';
  /** CamelCase why, e.g. "RecoveryStarted". */
  reason: string;
  /** CamelCase what was done, e.g. "Evacuate". */
  action: string;
  /** Human-readable detail; truncated to the API's 1 KiB limit. */
  note?: string;
  related?: ObjectReference;
}

export interface EventRecorderOptions {
  kube: KubeClient;
  /** This process (pod name or host + pid). */
  reportingInstance: string;
  reportingController?: string;
  log: Logger;
  /** Repeats within this window join the existing Event's series; default 6 min (kube-rs, client-go). */
  dedupeWindowMs?: number;
  /** Sustained writes per second; default 5. */
  qps?: number;
  /** Writes allowed in a burst; default 25. */
  burst?: number;
  now?: () => number;
}

interface SeriesState {
  /** Event object name once created. */
  name?: string;
  namespace: string;
  count: number;
  sentCount: number;
  lastSeen: number;
  inFlight: boolean;
}

const NOTE_MAX_BYTES = 1024;
const FIELD_MAX = 128;
const CACHE_PRUNE_AT = 4096;

/** Identity of an object for de-duplication: its resourceVersion is left out, so repeats across updates still merge. */
const refKey = (r: ObjectReference): string[] => [r.kind, r.namespace ?? '', r.name, r.uid ?? ''];

const truncateBytes = (s: string, max: number): string => {
  const b = Buffer.from(s, 'utf8');
  return b.length <= max
    ? s
    : b
        .subarray(0, max - 3)
        .toString('utf8')
        .replace(/\uFFFD$/, '') + '...';
};

export class EventRecorder {
  private readonly series = new Map<string, SeriesState>();
  private readonly pending = new Set<Promise<void>>();
  private readonly windowMs: number;
  private readonly qps: number;
  private readonly burst: number;
  private readonly now: () => number;
  private readonly controller: string;
  private readonly instance: string;
  private readonly log: Logger;
  private tokens: number;
  private tokensAt: number;

  constructor(private readonly o: EventRecorderOptions) {
    this.windowMs = o.dedupeWindowMs ?? 6 * 60_000;
    this.qps = o.qps ?? 5;
    this.burst = o.burst ?? 25;
    this.now = o.now ?? Date.now;
    this.controller = (o.reportingController ?? MANAGED_BY).slice(0, FIELD_MAX);
    this.instance = o.reportingInstance.slice(0, FIELD_MAX);
    this.log = o.log.child({ component: 'events' });
    this.tokens = this.burst;
    this.tokensAt = this.now();
  }

  /** Records e in the background. Never throws. */
  record(e: EventInput): void {
    try {
      const key = JSON.stringify([
        refKey(e.regarding),
        e.related && refKey(e.related),
        e.type,
        e.reason,
        e.action,
        e.note,
      ]);
      const now = this.now();
      let s = this.series.get(key);
      if (!s || now - s.lastSeen > this.windowMs) {
        this.prune(now);
        s = { namespace: e.regarding.namespace || 'default', count: 0, sentCount: 0, lastSeen: now, inFlight: false };
        this.series.set(key, s);
      }
      s.count++;
      s.lastSeen = now;
      this.write(e, s);
    } catch (err) {
      this.log.warn({ err, reason: e.reason }, 'could not record event');
    }
  }

  /** Resolves when every write started so far has finished (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private write(e: EventInput, s: SeriesState): void {
    if (s.inFlight || s.count === s.sentCount) return;
    if (!this.takeToken()) {
      this.log.debug({ reason: e.reason, regarding: e.regarding.name }, 'event dropped by rate limit');
      return;
    }
    s.inFlight = true;
    const count = s.count;
    const p = (s.name ? this.bumpSeries(s, count) : this.create(e, s, count))
      .then(
        () => {
          s.sentCount = count;
        },
        (err: unknown) => {
          if (isNotFound(err) && s.name) {
            // The Event expired (the API server's event TTL): start a new one next time.
            s.name = undefined;
            s.sentCount = 0;
            s.count = 1;
          } else {
            s.sentCount = count; // do not retry: an event lost is better than a hot loop
          }
          this.log.warn({ err, reason: e.reason, regarding: e.regarding.name }, 'could not write event');
        },
      )
      .finally(() => {
        s.inFlight = false;
        this.pending.delete(p);
        // Repeats that arrived during the write go out as one series update.
        if (s.count !== s.sentCount) this.write(e, s);
      });
    this.pending.add(p);
  }

  private async create(e: EventInput, s: SeriesState, count: number): Promise<void> {
    const now = new Date(this.now());
    const suffix = (BigInt(now.getTime()) * 1_000_000n + BigInt(randomInt(1_000_000))).toString(16);
    const name = `${e.regarding.name.slice(0, 253 - suffix.length - 1)}.${suffix}`;
    const body: Record<string, unknown> = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace: s.namespace },
      eventTime: microTime(now),
      reportingController: this.controller,
      reportingInstance: this.instance,
      action: e.action.slice(0, FIELD_MAX),
      reason: e.reason.slice(0, FIELD_MAX),
      type: e.type,
      note: truncateBytes(e.note ?? '', NOTE_MAX_BYTES),
      regarding: e.regarding,
    };
    if (e.related) body.related = e.related;
    if (count > 1) body.series = { count, lastObservedTime: microTime(now) };
    await this.o.kube.create(RESOURCES.events, s.namespace, body);
    s.name = name;
  }

  private async bumpSeries(s: SeriesState, count: number): Promise<void> {
    await this.o.kube.mergePatch(RESOURCES.events, s.namespace, s.name!, {
      series: { count, lastObservedTime: microTime(new Date(this.now())) },
    });
  }

  private takeToken(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.tokensAt) / 1000) * this.qps);
    this.tokensAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private prune(now: number): void {
    if (this.series.size < CACHE_PRUNE_AT) return;
    for (const [key, s] of this.series) if (!s.inFlight && now - s.lastSeen > this.windowMs) this.series.delete(key);
  }
}
