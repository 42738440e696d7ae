// The CR-backed journal of one run: the ProgressRecorder, VMoveJournal and
// EffectJournal of src/engine/workflows/context.ts, written into the
// Notification's status through a NotificationStatusWriter (each method
// resolves once its write is durable).
//
// Stored history is capped so a status stays far below etcd's object limit
// (~1.5 MiB) whatever happens:
// - recoveryWorkflowDetails keeps the entries of the last MAX_RUNS_KEPT runs,
//   and at most MAX_DETAILS_PER_TASK progress lines per task entry (the
//   oldest lines of a task are dropped first);
// - vmoves keeps every move of the current run, and moves of earlier runs
//   only while the total stays under MAX_VMOVES_KEPT (oldest runs go first).
// Masakari keeps all of it forever in SQL (B15); these caps are a documented
// difference (docs/compatibility.md).

import { randomUUID } from 'node:crypto';
import type { VMoveRecord, WorkflowTaskRecord } from '../model/types.ts';
import type { EffectJournal, NewVMove, ProgressRecorder, VMoveJournal, Clock } from './workflows/context.ts';
import type { EffectRecord, NotificationStatusWriter } from './status-writer.ts';
import { engineOf } from './status-writer.ts';
import { pythonStrDatetime, rfc3339Seconds } from './timefmt.ts';

export const MAX_RUNS_KEPT = 8;
export const MAX_DETAILS_PER_TASK = 2000;
export const MAX_VMOVES_KEPT = 2000;

/** Python's str(float) for the progress values the workflows use: 1 → "1.0", 0.3 → "0.3". */
export function pythonFloat(p: number): string {
  return Number.isInteger(p) ? p.toFixed(1) : String(p);
}

export interface IdSource {
  next(): Promise<number>;
}

export interface RunJournal {
  progress: ProgressRecorder;
  vmoves: VMoveJournal;
  effects: EffectJournal;
}

export function createRunJournal(
  writer: NotificationStatusWriter,
  run: number,
  ids: IdSource,
  clock: Clock,
): RunJournal {
  const status = () => writer.current().status ?? {};

  const entry = (details: WorkflowTaskRecord[], task: string): WorkflowTaskRecord | undefined =>
    details.find((e) => e.name === task && (e.run ?? 0) === run);

  const withEntry = (task: string, fn: (e: WorkflowTaskRecord) => void) =>
    writer
      .mutate((s) => {
        const details = (s.recoveryWorkflowDetails ??= []);
        let e = entry(details, task);
        if (!e) {
          e = { name: task, progress: 0.0, progressDetails: [], state: 'PENDING', run };
          details.push(e);
        }
        fn(e);
        if (e.progressDetails.length > MAX_DETAILS_PER_TASK) {
          e.progressDetails.splice(0, e.progressDetails.length - MAX_DETAILS_PER_TASK);
        }
        const runs = [...new Set(details.map((d) => d.run ?? 0))].sort((a, b) => b - a);
        const keep = new Set(runs.slice(0, MAX_RUNS_KEPT));
        s.recoveryWorkflowDetails = details.filter((d) => keep.has(d.run ?? 0));
      })
      .then(() => undefined);

  const progress: ProgressRecorder = {
    start: (task) =>
      withEntry(task, (e) => {
        e.state = 'RUNNING';
        e.progress = 0.0;
      }),
    update: (task, message, value) => {
      const timestamp = pythonStrDatetime(clock.now());
      return withEntry(task, (e) => {
        e.progress = value;
        e.progressDetails.push({ timestamp, progress: pythonFloat(value), message });
      });
    },
    finish: (task, state) =>
      withEntry(task, (e) => {
        e.state = state;
        if (state !== 'FAILURE') e.progress = 1.0;
      }),
    entries: () => (status().recoveryWorkflowDetails ?? []).filter((e) => (e.run ?? 0) === run),
  };

  const runMoves = (moves: VMoveRecord[] | undefined): VMoveRecord[] =>
    (moves ?? []).filter((m) => (m.run ?? 0) === run);

  const vmoves: VMoveJournal = {
    async addPending(moves: NewVMove[]) {
      const existing = new Map(runMoves(status().vmoves).map((m) => [m.instanceUuid, m]));
      const createdAt = rfc3339Seconds(clock.now());
      // ids and uuids are chosen once, outside the mutation, so a re-applied mutation inserts the same rows.
      const fresh: VMoveRecord[] = [];
      for (const m of moves) {
        if (existing.has(m.instanceUuid) || fresh.some((f) => f.instanceUuid === m.instanceUuid)) continue;
        fresh.push({
          id: await ids.next(),
          uuid: randomUUID(),
          instanceUuid: m.instanceUuid,
          instanceName: m.instanceName,
          sourceHost: m.sourceHost,
          destHost: null,
          startTime: null,
          endTime: null,
          type: 'evacuation',
          status: 'pending',
          message: null,
          createdAt,
          updatedAt: null,
          run,
        });
      }
      if (fresh.length > 0) {
        await writer.mutate((s) => {
          const all = (s.vmoves ??= []);
          const present = new Set(runMoves(all).map((m) => m.instanceUuid));
          for (const f of fresh) if (!present.has(f.instanceUuid)) all.push(structuredClone(f));
          s.vmoves = capVMoves(all, run);
        });
      }
      const byInstance = new Map(runMoves(status().vmoves).map((m) => [m.instanceUuid, m]));
      return moves.map((m) => byInstance.get(m.instanceUuid)).filter((m): m is VMoveRecord => m !== undefined);
    },
    async update(uuid, patch) {
      const updatedAt = rfc3339Seconds(clock.now());
      let found = false;
      const stored = await writer.mutate((s) => {
        const m = (s.vmoves ?? []).find((v) => v.uuid === uuid);
        found = m !== undefined;
        if (m) Object.assign(m, patch, { updatedAt });
      });
      const m = (stored.status?.vmoves ?? []).find((v) => v.uuid === uuid);
      if (!found || !m) throw new Error(`vmove ${uuid} is not in notification ${stored.metadata.name}`);
      return m;
    },
    list: () => runMoves(status().vmoves),
  };

  const recordEffect = (key: string, state: EffectRecord['state'], data?: Record<string, unknown>) => {
    const at = new Date(clock.now()).toISOString();
    return writer
      .mutate((_s, engine) => {
        const seq = (engine.effectSeq ?? 0) + 1;
        engine.effectSeq = seq;
        const effects = (engine.effects ??= {});
        const merged = data ?? (state === 'done' ? effects[key]?.data : undefined);
        effects[key] = { state, at, seq, ...(merged ? { data: merged } : {}) };
      })
      .then(() => undefined);
  };

  const effects: EffectJournal = {
    intend: (key, data) => recordEffect(key, 'intended', data),
    done: (key, data) => recordEffect(key, 'done', data),
    get: (key) => {
      const e = engineOf(structuredClone(status())).effects?.[key];
      return e ? { state: e.state, at: e.at, ...(e.data ? { data: e.data } : {}) } : undefined;
    },
    keys: (prefix) =>
      Object.keys(engineOf(structuredClone(status())).effects ?? {}).filter((k) => k.startsWith(prefix)),
  };

  return { progress, vmoves, effects };
}

/** Drops the oldest runs' moves beyond MAX_VMOVES_KEPT; never a move of the current run. */
export function capVMoves(all: VMoveRecord[], currentRun: number): VMoveRecord[] {
  if (all.length <= MAX_VMOVES_KEPT) return all;
  const current = all.filter((m) => (m.run ?? 0) === currentRun);
  const older = all.filter((m) => (m.run ?? 0) !== currentRun).sort((a, b) => (b.run ?? 0) - (a.run ?? 0));
  const room = Math.max(MAX_VMOVES_KEPT - current.length, 0);
  const keep = new Set([...current, ...older.slice(0, room)]);
  return all.filter((m) => keep.has(m));
}
