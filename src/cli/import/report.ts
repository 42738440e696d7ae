// What `masakari-operator import` prints: one row per object (the plan with
// --dry-run, the results otherwise), a count per kind and outcome, and what
// an import never copies. --output json prints the same as one JSON document.
import type { ItemResult } from './execute.ts';
import type { ImportPlan, PlanItem, PlannedAction } from './plan.ts';

export interface ReportRow {
  kind: 'segment' | 'host';
  name: string;
  segment: string | null;
  uuid: string;
  source_id: number | null;
  id: number | null;
  /** Dry run: create, update, skip, error, leave alone. Run: created, updated, unchanged, failed, left alone. */
  action: string;
  detail: string;
}

export interface ImportReport {
  source: string;
  namespace: string;
  dry_run: boolean;
  rows: ReportRow[];
  /** kind → action → count */
  summary: Record<'segment' | 'host', Record<string, number>>;
  failed: number;
}

export const NOT_IMPORTED =
  'Not imported: notifications and their recovery history (they stay in Masakari). ' +
  'Host names were not re-checked against Nova unless --verify-hosts was given.';

const PLANNED: Record<PlannedAction, string> = {
  create: 'create',
  update: 'update',
  skip: 'skip',
  fail: 'error',
  leave: 'leave alone',
};

function row(item: PlanItem, action: string, id: number | undefined, detail: string): ReportRow {
  return {
    kind: item.kind,
    name: item.name,
    segment: item.kind === 'host' ? (item.segmentName ?? item.segmentUuid ?? null) : null,
    uuid: item.uuid,
    source_id: item.sourceId ?? null,
    id: id ?? null,
    action,
    detail,
  };
}

function summarise(source: string, namespace: string, dryRun: boolean, rows: ReportRow[], failedAction: string) {
  const summary: ImportReport['summary'] = { segment: {}, host: {} };
  // Counted in a fixed order (plan words, then result words) so summaries read alike run after run.
  const order = [...Object.values(PLANNED), 'created', 'updated', 'unchanged', 'failed', 'left alone'];
  for (const action of order) {
    for (const kind of ['segment', 'host'] as const) {
      const n = rows.filter((r) => r.kind === kind && r.action === action).length;
      if (n > 0) summary[kind][action] = n;
    }
  }
  const failed = rows.filter((r) => r.action === failedAction).length;
  return { source, namespace, dry_run: dryRun, rows, summary, failed };
}

export function planReport(plan: ImportPlan, source: string, namespace: string): ImportReport {
  const rows = plan.items.map((item) =>
    row(item, PLANNED[item.action], item.id, item.action === 'fail' ? (item.reason ?? '') : item.details.join('; ')),
  );
  return summarise(source, namespace, true, rows, PLANNED.fail);
}

export function resultReport(results: ItemResult[], source: string, namespace: string): ImportReport {
  const rows = results.map((r) =>
    row(r.item, r.outcome, r.id, r.outcome === 'failed' ? (r.error ?? '') : r.item.details.join('; ')),
  );
  return summarise(source, namespace, false, rows, 'failed');
}

function idText(r: ReportRow): string {
  if (r.id === null) return r.source_id === null ? '-' : String(r.source_id);
  if (r.source_id !== null && r.source_id !== r.id) return `${r.source_id}->${r.id}`;
  return String(r.id);
}

/** Aligned columns; the detail column is last so long texts do not push the others. */
export function renderTable(report: ImportReport): string {
  const header = ['KIND', 'NAME', 'SEGMENT', 'UUID', 'ID', report.dry_run ? 'PLAN' : 'RESULT', 'DETAIL'];
  const cells = report.rows.map((r) => [r.kind, r.name, r.segment ?? '-', r.uuid, idText(r), r.action, r.detail]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [
    report.dry_run
      ? `Plan for importing ${report.source} into namespace ${report.namespace} (dry run: nothing written)`
      : `Imported ${report.source} into namespace ${report.namespace}`,
    '',
    line(header),
    ...cells.map(line),
    '',
  ];
  for (const kind of ['segment', 'host'] as const) {
    const counts = Object.entries(report.summary[kind]).map(([action, n]) => `${n} ${action}`);
    out.push(`${kind === 'segment' ? 'segments' : 'hosts   '}: ${counts.length ? counts.join(', ') : 'none'}`);
  }
  out.push(NOT_IMPORTED);
  if (report.failed > 0) {
    out.push(
      report.dry_run
        ? `${report.failed} object(s) cannot be imported; see the DETAIL column.`
        : `${report.failed} object(s) failed; see the DETAIL column. Fix the cause and run the import again (it is idempotent).`,
    );
  }
  return `${out.join('\n')}\n`;
}

export function renderJson(report: ImportReport): string {
  return `${JSON.stringify({ ...report, not_imported: NOT_IMPORTED }, null, 2)}\n`;
}
