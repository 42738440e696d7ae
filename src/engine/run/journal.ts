// The CR-backed journal of one run: the ProgressRecorder, VMoveJournal and
// EffectJournal of src/engine/workflows/context.ts, written into the
// Notification's status through a NotificationStatusWriter (each method
// resolves once its write is durable).
//
// Nothing is dropped: Masakari keeps every run's progress lines and vmoves
// in SQL, and so do we. What does not fit the Notification's byte budget is
// moved by the status writer into journal pages (src/engine/status/budget.ts,
// src/store/journal-pages.ts); the journal always sees the whole status.

import { randomUUID } from 'node:crypto';
import type { NotificationStatusBlock, VMoveRecord, WorkflowTaskRecord } from '../../model/types.ts';
import type { EffectJournal, NewVMove, ProgressRecorder, VMoveJournal } from '../workflows/context.ts';
import type { EffectRecord, EngineBookkeeping, NotificationStatusWriter } from '../status/writer.ts';
import type { Clock } from '../../time/clock.ts';
import type { IdSource } from '../deps/processor-deps.ts';
import { pythonStrDatetime, rfc3339Seconds } from '../../time/format.ts';

/** Python's str(float) for the progress values the workflows use: 1 → "1.0", 0.3 → "0.3". */
export function pythonFloat(p: number): string {
  return Number.isInteger(p) ? p.toFixed(1) : String(p);
}

export interface RunJournal {
  progress: ProgressRecorder;
  vmoves: VMoveJournal;
  effects: EffectJournal;
}

function effectsOf(status: NotificationStatusBlock): Record<string, EffectRecord> {
  const engine = status.engine as EngineBookkeeping | undefined;
  return engine && typeof engine === 'object' ? (engine.effects ?? {}) : {};
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

  const onEntry = (task: string, fn: (e: WorkflowTaskRecord) => void) => (s: NotificationStatusBlock) => {
    const details = (s.recoveryWorkflowDetails ??= []);
    let e = entry(details, task);
    if (!e) {
      e = { name: task, progress: 0.0, progressDetails: [], state: 'PENDING', run };
      details.push(e);
    }
    fn(e);
  };
  const withEntry = (task: string, fn: (e: WorkflowTaskRecord) => void) =>
    writer.mutate(onEntry(task, fn)).then(() => undefined);
  // Written with the next write (the task's first progress line, or the run's end): a resumed run
  // only looks for SUCCESS, so nothing depends on these being durable first (status/writer.ts mutateLater).
  const withEntryLater = (task: string, fn: (e: WorkflowTaskRecord) => void) => {
    writer.mutateLater(onEntry(task, fn));
    return Promise.resolve();
  };

  const progress: ProgressRecorder = {
    start: (task) =>
      withEntryLater(task, (e) => {
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
      // SUCCESS must be durable before the next task runs (a resumed run skips what it finds SUCCESS);
      // a REVERTED goes out with the run's final status, which follows at once.
      (state === 'REVERTED' ? withEntryLater : withEntry)(task, (e) => {
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
    // Reads take a copy of one record, not of the whole status (a large host's status holds thousands).
    get: (key) => {
      const e = effectsOf(status())[key];
      return e ? structuredClone({ state: e.state, at: e.at, ...(e.data ? { data: e.data } : {}) }) : undefined;
    },
    keys: (prefix) => Object.keys(effectsOf(status())).filter((k) => k.startsWith(prefix)),
  };

  return { progress, vmoves, effects };
}
