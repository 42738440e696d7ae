// An in-memory WorkflowContext for workflow unit tests and benchmarks.
//
// Faithful by construction: progress, vmoves and effects go through the
// engine core's real journal (createRunJournal in src/engine/run/journal.ts) over
// an in-memory Notification instead of the API server, so the tests exercise
// the same semantics the engine runs with (effects shared by every run of the
// notification, vmoves and progress per run, `done` without data keeping the
// intent's data). Host flags follow HaHostFlags: reservedHosts() lists the
// segment's hosts with reserved=true and on_maintenance=false, newest first.
//
// Crash simulation: crashAfterSteps(n) lets n more "steps" happen — a step is
// a durable journal write or a mutating Nova call that reached Nova — and then
// kills the current process generation: its AbortSignal fires and every later
// journal write or Nova call of that generation throws ProcessCrashed, as if
// the process had died right after the n-th step. restart() starts a new
// generation over the same durable state (the same run), which is how the
// engine core resumes a run after a crash.

import { pino } from 'pino';
import type { Logger } from 'pino';
import type { Config } from '../../../config/config.ts';
import { loadConfig } from '../../../config/load.ts';
import type { Notification, RecoveryMethod, VMoveRecord, WorkflowTaskRecord } from '../../../model/types.ts';
import type { NovaClient } from '../../../openstack/types.ts';
import { createRunJournal } from '../../run/journal.ts';
import { NOVA_SIDE_EFFECTS } from '../../../runtime/lease-fence.ts';
import type { NotificationStatusWriter, EffectRecord, StatusMutation } from '../../status/writer.ts';
import { engineOf } from '../../status/writer.ts';
import type { HostFlags, StartFallbackRun, WorkflowContext } from '../context.ts';
import type { Clock } from '../../../time/clock.ts';
import { systemClock } from '../../../time/clock.ts';

export class ProcessCrashed extends Error {
  constructor() {
    super('simulated engine crash');
    this.name = 'ProcessCrashed';
  }
}

export interface MemoryHost {
  name: string;
  segmentUuid: string;
  reserved: boolean;
  onMaintenance: boolean;
  /** Orders reservedHosts() (newest first). */
  createdAt: string;
}

export interface MemoryContextOptions {
  nova: NovaClient;
  hostname?: string;
  recoveryMethod?: RecoveryMethod;
  segmentUuid?: string;
  notificationUuid?: string;
  /** Applied to masakari.conf defaults. */
  configure?: (config: Config) => void;
  hosts?: MemoryHost[];
  clock?: Clock;
  log?: Logger;
}

const MUTATING_NOVA_CALLS: ReadonlySet<string> = new Set(NOVA_SIDE_EFFECTS);

/** masakari.conf defaults with the waits shortened for tests. */
export function testConfig(configure?: (config: Config) => void): Config {
  const config = loadConfig({ env: {} }).config;
  config.DEFAULT.verify_interval = 0.05;
  config.DEFAULT.wait_period_after_service_update = 2;
  config.DEFAULT.wait_period_after_evacuation = 2;
  config.DEFAULT.wait_period_after_power_off = 2;
  configure?.(config);
  return config;
}

export class MemoryEngine {
  readonly config: Config;
  readonly hosts: MemoryHost[];
  readonly log: Logger;
  readonly clock: Clock;
  notification: Notification;
  /** Durable steps so far (journal writes + mutating Nova calls). */
  steps = 0;
  /** What each step was ("write" or the Nova method), for diagnosing a crash point. */
  readonly stepLog: string[] = [];
  private crashAt: number | undefined;
  private generation = { abort: new AbortController(), dead: false };

  constructor(private readonly options: MemoryContextOptions) {
    this.config = testConfig(options.configure);
    this.hosts = options.hosts ?? [];
    this.log = options.log ?? pino({ level: 'silent' });
    this.clock = options.clock ?? systemClock;
    this.notification = {
      apiVersion: 'masakari.openkeel.io/v1alpha1',
      kind: 'Notification',
      metadata: { name: 'n1', namespace: 'masakari', resourceVersion: '1' },
      spec: {
        type: 'COMPUTE_HOST',
        hostname: options.hostname ?? 'compute-1',
        generatedTime: '2026-11-29T18:00:00Z',
        payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      },
      status: {
        uuid: options.notificationUuid ?? '7a3a1f4e-0c55-4f6a-9d6e-3a4f1d2b9c01',
        phase: 'running',
        runs: 1,
        failoverSegmentUuid: options.segmentUuid ?? 'segment-1',
        recoveryWorkflowDetails: [],
        vmoves: [],
      },
    };
  }

  get run(): number {
    return (this.notification.status?.runs ?? 1) - 1;
  }

  get signal(): AbortSignal {
    return this.generation.abort.signal;
  }

  /** Kills the process generation after n more steps. */
  crashAfterSteps(n: number): void {
    this.crashAt = this.steps + n;
  }

  /** Kills the process generation now (e.g. from inside a Nova call, before it takes effect). */
  crashNow(): void {
    this.generation.dead = true;
    this.generation.abort.abort(new ProcessCrashed());
  }

  /** A new process generation resuming the same run. */
  restart(): void {
    this.crashAt = undefined;
    this.generation = { abort: new AbortController(), dead: false };
  }

  get crashed(): boolean {
    return this.generation.dead;
  }

  /** The context the engine core would build for the current run. */
  context(): WorkflowContext {
    const generation = this.generation;
    const run = this.run;
    const writer = {
      current: () => this.notification,
      // NotificationStatusWriter shows a mutateLater mutation at once (current()) and stores it with its next
      // write; what it defers is only ever bookkeeping no resume reads, so here it is applied at once, as no step.
      mutateLater: (mutate: StatusMutation): void => {
        if (generation.dead) return;
        const next = structuredClone(this.notification);
        next.status ??= {};
        mutate(next.status, engineOf(next.status));
        this.notification = next;
      },
      mutate: async (mutate: StatusMutation): Promise<Notification> => {
        this.checkAlive(generation);
        const next = structuredClone(this.notification);
        next.status ??= {};
        mutate(next.status, engineOf(next.status));
        next.metadata.resourceVersion = String(Number(next.metadata.resourceVersion ?? 0) + 1);
        this.notification = next;
        this.step(generation, 'write');
        return next;
      },
    } as unknown as NotificationStatusWriter;
    const ids = { next: async () => (this.nextId += 1) };
    const journal = createRunJournal(writer, run, ids, this.clock);
    return {
      notification: {
        uuid: this.notification.status?.uuid ?? '',
        type: 'COMPUTE_HOST',
        hostname: this.notification.spec.hostname,
        payload: this.notification.spec.payload,
        generatedTime: this.notification.spec.generatedTime,
        segmentUuid: this.notification.status?.failoverSegmentUuid ?? '',
        recoveryMethod: this.options.recoveryMethod ?? 'auto',
      },
      run,
      nova: this.novaFor(generation),
      config: this.config,
      clock: this.clock,
      log: this.log,
      signal: generation.abort.signal,
      requestId: `req-test-run-${run}`,
      progress: journal.progress,
      vmoves: journal.vmoves,
      effects: journal.effects,
      hosts: this.hostFlags(generation),
    };
  }

  /** The engine core's startFallbackRun: the next run number, with its own progress and vmoves. */
  readonly startFallbackRun: StartFallbackRun = async () => {
    const generation = this.generation;
    this.checkAlive(generation);
    const next = structuredClone(this.notification);
    next.status = { ...next.status, runs: (next.status?.runs ?? 1) + 1 };
    this.notification = next;
    this.step(generation, 'startFallbackRun');
    return this.context();
  };

  vmoves(run = this.run): VMoveRecord[] {
    return (this.notification.status?.vmoves ?? []).filter((m) => (m.run ?? 0) === run);
  }

  progress(run = this.run): WorkflowTaskRecord[] {
    return (this.notification.status?.recoveryWorkflowDetails ?? []).filter((e) => (e.run ?? 0) === run);
  }

  /** Every progress message of a run, in order, as "Task: message". */
  messages(run = this.run): string[] {
    return this.progress(run).flatMap((e) => e.progressDetails.map((d) => `${e.name}: ${d.message}`));
  }

  effects(): Record<string, EffectRecord> {
    return (engineOf(structuredClone(this.notification.status ?? {})).effects ?? {}) as Record<string, EffectRecord>;
  }

  host(name: string): MemoryHost {
    const h = this.hosts.find((x) => x.name === name);
    if (!h) throw new Error(`no host ${name}`);
    return h;
  }

  private nextId = 0;

  private hostFlags(generation: { abort: AbortController; dead: boolean }): HostFlags {
    return {
      setOnMaintenance: async (name, unreserve) => {
        this.checkAlive(generation);
        const h = this.host(name);
        h.onMaintenance = true;
        if (unreserve) h.reserved = false;
        this.step(generation, 'setOnMaintenance');
      },
      setReserved: async (name, reserved) => {
        this.checkAlive(generation);
        this.host(name).reserved = reserved;
        this.step(generation, 'setReserved');
      },
      reservedHosts: (segmentUuid) =>
        this.hosts
          .filter((h) => h.segmentUuid === segmentUuid && h.reserved && !h.onMaintenance)
          .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
          .map((h) => h.name),
    };
  }

  private novaFor(generation: { abort: AbortController; dead: boolean }): NovaClient {
    const nova = this.options.nova;
    return new Proxy(nova, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          this.checkAlive(generation);
          const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (MUTATING_NOVA_CALLS.has(String(prop))) this.step(generation, `nova.${String(prop)}`);
          return result;
        };
      },
    });
  }

  private checkAlive(generation: { dead: boolean }): void {
    if (generation.dead) throw new ProcessCrashed();
  }

  private step(generation: { abort: AbortController; dead: boolean }, what: string): void {
    if (generation.dead) return;
    this.steps += 1;
    this.stepLog.push(what);
    if (this.crashAt !== undefined && this.steps >= this.crashAt) {
      generation.dead = true;
      generation.abort.abort(new ProcessCrashed());
    }
  }
}
