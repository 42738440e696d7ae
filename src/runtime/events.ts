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
import { rfc3339Micro } from '../time/format.ts';
import { systemNowMs } from '../time/clock.ts';

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
  /** Sustained writes per second about one object; default 5. */
  qps?: number;
  /** Writes about one object allowed in a burst; default 25. */
  burst?: number;
  now?: () => number;
}

/**
 * Writes left about one object. The limit is per object, as client-go's spam
 * filter keys it: a noisy object (a recovery of many servers) must not starve
 * the few Events of another (the host put on maintenance).
 */
interface TokenBucket {
  tokens: number;
  at: number;
}

interface SeriesState {
  /** Event object name once created. */
  name?: string;
  namespace: string;
  count: number;
  sentCount: number;
  lastSeen: number;
  inFlight: boolean;
  /** Rate-limit key: the object the Event is about. */
  bucket: string;
  /** Over the rate limit: a write is scheduled for when a token is free. */
  waiting: boolean;
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
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly options: EventRecorderOptions) {
    this.windowMs = options.dedupeWindowMs ?? 6 * 60_000;
    this.qps = options.qps ?? 5;
    this.burst = options.burst ?? 25;
    this.now = options.now ?? systemNowMs;
    this.controller = (options.reportingController ?? MANAGED_BY).slice(0, FIELD_MAX);
    this.instance = options.reportingInstance.slice(0, FIELD_MAX);
    this.log = options.log.child({ component: 'events' });
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
        s = {
          namespace: e.regarding.namespace || 'default',
          count: 0,
          sentCount: 0,
          lastSeen: now,
          inFlight: false,
          bucket: JSON.stringify(refKey(e.regarding)),
          waiting: false,
        };
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
    if (s.inFlight || s.waiting || s.count === s.sentCount) return;
    const waitMs = this.takeToken(s.bucket);
    if (waitMs > 0) {
      // Over the limit: the series goes out (with every repeat since) once a
      // token is free, instead of being lost; repeats meanwhile only count.
      this.log.debug({ reason: e.reason, regarding: e.regarding.name, waitMs }, 'event delayed by rate limit');
      s.waiting = true;
      setTimeout(() => {
        s.waiting = false;
        this.write(e, s);
      }, waitMs).unref();
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
            // The Event expired (the API server's event TTL) or went with an etcd restore: a new one goes out now.
            this.log.info({ reason: e.reason, regarding: e.regarding.name }, 'event gone; recording it anew');
            s.name = undefined;
            s.sentCount = 0;
            s.count = 1;
            return;
          }
          s.sentCount = count; // do not retry: an event lost is better than a hot loop
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
      eventTime: rfc3339Micro(now),
      reportingController: this.controller,
      reportingInstance: this.instance,
      action: e.action.slice(0, FIELD_MAX),
      reason: e.reason.slice(0, FIELD_MAX),
      type: e.type,
      note: truncateBytes(e.note ?? '', NOTE_MAX_BYTES),
      regarding: e.regarding,
    };
    if (e.related) body.related = e.related;
    if (count > 1) body.series = { count, lastObservedTime: rfc3339Micro(now) };
    await this.options.kube.create(RESOURCES.events, s.namespace, body);
    s.name = name;
  }

  private async bumpSeries(s: SeriesState, count: number): Promise<void> {
    await this.options.kube.mergePatch(RESOURCES.events, s.namespace, s.name!, {
      series: { count, lastObservedTime: rfc3339Micro(new Date(this.now())) },
    });
  }

  /** Takes a token for the object: 0 when taken, else how long until one is free (ms). */
  private takeToken(key: string): number {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.qps);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens < 1) return Math.max(1, Math.ceil(((1 - b.tokens) / this.qps) * 1000));
    b.tokens -= 1;
    return 0;
  }

  private prune(now: number): void {
    if (this.series.size < CACHE_PRUNE_AT) return;
    for (const [key, s] of this.series) {
      if (!s.inFlight && !s.waiting && now - s.lastSeen > this.windowMs) this.series.delete(key);
    }
    // A full bucket is the same as none: drop those, so the map follows the objects still talked about.
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.qps >= this.burst) this.buckets.delete(key);
    }
  }
}
