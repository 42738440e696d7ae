// The byte budget of a Notification (see src/store/journal-pages.ts for the
// pages the overflow goes to). Before each status write the engine measures
// the object it is about to store; above STATUS_BUDGET.maxObjectBytes it moves
// settled history into new pages until the object is back under
// targetObjectBytes, and it never writes an object above HARD_OBJECT_LIMIT.
//
// The budget is small on purpose: etcd stores the whole object at every
// write, so the bytes written per recovery are about (number of writes) ×
// (object size). A small ceiling keeps a large recovery's etcd writes an
// order of magnitude below those of an unbounded status (docs/benchmarks.md,
// "Journal write volume").

import type { NotificationStatusBlock, VMoveRecord, WorkflowTaskRecord } from '../../model/types.ts';
import type { JournalPage, PageLines } from '../../store/index.ts';
import { countedPages } from '../../store/index.ts';

export interface StatusBudget {
  /** Above this (whole object, JSON bytes) history moves to pages before the write. */
  maxObjectBytes: number;
  /** Moving stops once the object is under this. */
  targetObjectBytes: number;
  /** A page is closed at about this size (one item larger than this gets a page of its own). */
  maxPageBytes: number;
}

export const STATUS_BUDGET: StatusBudget = {
  maxObjectBytes: 32 * 1024,
  targetObjectBytes: 8 * 1024,
  maxPageBytes: 256 * 1024,
};

/** Never write an object above this: etcd's request limit is 1.5 MiB, and Kubernetes adds its own fields. */
export const HARD_OBJECT_LIMIT = 1024 * 1024;

export const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

type Effects = Record<string, unknown>;
const effectsOf = (s: NotificationStatusBlock): Effects =>
  ((s.engine as { effects?: Effects } | undefined)?.effects ?? {}) as Effects;

const entryKey = (name: string, run: number | undefined): string => `${run ?? 0}\u0000${name}`;

export interface PageIndex {
  vmoves: Map<string, string>;
  effects: Map<string, string>;
  lines: Map<string, number>;
}

/** What the counted pages hold, newest copy of each item (as JSON, to compare). */
export function pageIndex(pages: readonly JournalPage[], counted: number): PageIndex {
  const vmoves = new Map<string, string>();
  const effects = new Map<string, string>();
  const lines = new Map<string, number>();
  for (const p of [...pages].filter((x) => x.seq < counted).sort((a, b) => a.seq - b.seq)) {
    for (const v of p.vmoves ?? []) vmoves.set(v.uuid, JSON.stringify(v));
    for (const [k, e] of Object.entries(p.effects ?? {})) effects.set(k, JSON.stringify(e));
    for (const l of p.lines ?? []) {
      const k = entryKey(l.name, l.run);
      lines.set(k, (lines.get(k) ?? 0) + l.details.length);
    }
  }
  return { vmoves, effects, lines };
}

/**
 * The status as stored, given the whole (assembled) status and the pages:
 * everything a page already holds unchanged is left out. The inverse of
 * assembleStatus (src/store/journal-pages.ts).
 */
export function storedStatus(
  whole: NotificationStatusBlock,
  pages: readonly JournalPage[],
  index?: PageIndex,
): NotificationStatusBlock {
  const counted = countedPages(whole);
  if (counted === 0) return whole;
  const idx = index ?? pageIndex(pages, counted);
  const out: NotificationStatusBlock = { ...whole };
  if (whole.vmoves) out.vmoves = whole.vmoves.filter((v) => idx.vmoves.get(v.uuid) !== JSON.stringify(v));
  if (whole.recoveryWorkflowDetails) {
    out.recoveryWorkflowDetails = whole.recoveryWorkflowDetails.map((e) => {
      const n = idx.lines.get(entryKey(e.name, e.run)) ?? 0;
      return n === 0 ? e : { ...e, progressDetails: e.progressDetails.slice(n) };
    });
  }
  if (whole.engine) {
    const effects: Effects = {};
    for (const [k, e] of Object.entries(effectsOf(whole))) {
      if (idx.effects.get(k) !== JSON.stringify(e)) effects[k] = e;
    }
    out.engine = { ...whole.engine, effects };
  }
  return out;
}

export interface SpillResult {
  status: NotificationStatusBlock;
  /** New pages, seq from the status's current count on; status.engine.journalPages counts them. */
  pages: JournalPage[];
}

const SETTLED_VMOVE = new Set(['succeeded', 'failed', 'ignored']);

/**
 * Moves history out of `stored` (a stored-form status) into new pages until
 * the object (`overheadBytes` for metadata and spec, plus the status) is
 * under the target. Order of preference: progress lines (never change once
 * written), settled vmoves and done effect records, then anything else. Only
 * a prefix of each entry's lines and of the vmoves list moves, so the
 * assembled order is the recorded one.
 */
export function spill(
  stored: NotificationStatusBlock,
  overheadBytes: number,
  budget: StatusBudget = STATUS_BUDGET,
): SpillResult {
  const size = overheadBytes + jsonBytes(stored);
  if (size <= budget.maxObjectBytes) return { status: stored, pages: [] };
  let excess = size - budget.targetObjectBytes;

  const firstSeq = countedPages(stored);
  const pages: JournalPage[] = [];
  let page: JournalPage = { seq: firstSeq };
  let pageBytes = 0;
  const room = (bytes: number) => {
    if (pageBytes > 0 && pageBytes + bytes > budget.maxPageBytes) {
      pages.push(page);
      page = { seq: firstSeq + pages.length };
      pageBytes = 0;
    }
    pageBytes += bytes;
    excess -= bytes;
  };

  // 1. progress lines, oldest first within each entry.
  const details: WorkflowTaskRecord[] = (stored.recoveryWorkflowDetails ?? []).map((e) => ({
    ...e,
    progressDetails: [...e.progressDetails],
  }));
  for (const e of details) {
    let moved = 0;
    while (excess > 0 && moved < e.progressDetails.length) {
      const line = e.progressDetails[moved] as WorkflowTaskRecord['progressDetails'][number];
      const before = page;
      room(jsonBytes(line) + 1);
      if (page !== before) {
        // the page filled up: close this entry's share of the old page
        if (moved > 0) addLines(before, e, e.progressDetails.slice(0, moved));
        e.progressDetails.splice(0, moved);
        moved = 0;
      }
      moved++;
    }
    if (moved > 0) {
      addLines(page, e, e.progressDetails.slice(0, moved));
      e.progressDetails.splice(0, moved);
    }
  }

  // 2 and 3. effect records and vmoves: settled ones first, then the rest.
  const effects: Effects = { ...effectsOf(stored) };
  const vmoves: VMoveRecord[] = [...(stored.vmoves ?? [])];
  for (const settledOnly of [true, false]) {
    for (const [k, e] of Object.entries(effects)) {
      if (excess <= 0) break;
      if (settledOnly && (e as { state?: string }).state !== 'done') continue;
      room(jsonBytes(e) + k.length + 4);
      (page.effects ??= {})[k] = e;
      delete effects[k];
    }
    // a prefix only: moves a page holds come first when assembled
    while (excess > 0 && vmoves.length > 0) {
      const v = vmoves[0] as VMoveRecord;
      if (settledOnly && !SETTLED_VMOVE.has(v.status)) break;
      room(jsonBytes(v) + 1);
      (page.vmoves ??= []).push(v);
      vmoves.shift();
    }
  }
  if (pageBytes > 0) pages.push(page);
  if (pages.length === 0) return { status: stored, pages: [] };

  const status: NotificationStatusBlock = { ...stored };
  if (stored.recoveryWorkflowDetails) status.recoveryWorkflowDetails = details;
  if (stored.vmoves) status.vmoves = vmoves;
  status.engine = { ...(stored.engine ?? {}), effects, journalPages: firstSeq + pages.length };
  return { status, pages };
}

function addLines(page: JournalPage, e: WorkflowTaskRecord, details: PageLines['details']): void {
  const lines = (page.lines ??= []);
  const run = e.run ?? 0;
  const last = lines.find((l) => l.name === e.name && l.run === run);
  if (last) last.details.push(...details);
  else lines.push({ name: e.name, run, details });
}
