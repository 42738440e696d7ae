// paginate() picks one page without sorting every row: for random rows (ties,
// NULLs, booleans), sort keys, directions, markers and limits it answers
// exactly what sorting everything, then applying the marker and the limit,
// answers (oslo.db paginate_query over a stable sort).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prng } from './testing/fuzz.ts';
import { compare, paginate, processSortParams, type ColumnSet, type ListParams, type SortValue } from './pagination.ts';

interface Row {
  id: number;
  name: string | null;
  size: number;
  on: boolean;
}

const COLUMNS: ColumnSet<Row> = {
  id: (r) => r.id,
  columns: {
    id: (r) => r.id,
    name: (r) => r.name,
    size: (r) => r.size,
    on: (r) => r.on,
    created_at: (r) => `2026-11-29T12:00:0${r.size % 3}`,
  },
};

/** Sort everything (stable), then the marker's OR-of-ANDs filter, then the limit. */
function sortEverything(rows: Row[], pool: Row[], p: ListParams): Row[] {
  if (p.limit === 0) return [];
  const { keys, dirs } = processSortParams(p.sortKeys, p.sortDirs);
  const getters = keys.map((k) => COLUMNS.columns[k]!);
  const sorted = [...rows].sort((a, b) => {
    for (let i = 0; i < getters.length; i++) {
      const c = compare(getters[i]!(a), getters[i]!(b));
      if (c !== 0) return dirs[i] === 'desc' ? -c : c;
    }
    return 0;
  });
  let page = sorted;
  if (p.marker !== undefined) {
    const m = pool.find((r) => r.id === Number(p.marker))!;
    const mv = getters.map((g) => g(m));
    const less = (a: SortValue, b: SortValue) => a !== null && b !== null && compare(a, b) < 0;
    const equal = (a: SortValue, b: SortValue) => a !== null && b !== null && compare(a, b) === 0;
    page = sorted.filter((row) =>
      getters.some((g, i) => {
        if (mv[i] === null) return false;
        for (let j = 0; j < i; j++) if (mv[j] !== null && !equal(getters[j]!(row), mv[j]!)) return false;
        return dirs[i] === 'desc' ? less(g(row), mv[i]!) : less(mv[i]!, g(row));
      }),
    );
  }
  return page.slice(0, p.limit);
}

test('one page without sorting every row: the rows, in the order, that sorting everything gives', () => {
  const r = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  for (let round = 0; round < 400; round++) {
    const n = Math.floor(r() * 60);
    const pool: Row[] = Array.from({ length: n }, (_, i) => ({
      // duplicate ids now and then: ties on every key, broken by the rows' order
      id: r() < 0.05 && i > 0 ? i - 1 : i,
      name: r() < 0.2 ? null : pick(['a', 'b', 'c', 'ab']),
      size: Math.floor(r() * 5),
      on: r() < 0.5,
    }));
    const rows = pool.filter(() => r() < 0.8);
    const sortKeys = Array.from({ length: Math.floor(r() * 3) }, () => pick(['name', 'size', 'on', 'id']));
    const sortDirs = r() < 0.5 ? [] : sortKeys.map(() => pick(['asc', 'desc']));
    const p: ListParams = {
      limit: pick([0, 1, 2, 5, 10, 1000]),
      marker: n && r() < 0.5 ? String(pick(pool).id) : undefined,
      sortKeys,
      sortDirs,
    };
    assert.equal(paginate(rows, pool, p, COLUMNS), sortEverything(rows, pool, p), JSON.stringify({ round, p }));
  }
});

test('a column is read once per row, not per comparison', () => {
  let reads = 0;
  const cols: ColumnSet<Row> = { ...COLUMNS, columns: { ...COLUMNS.columns, name: (row) => (reads++, row.name) } };
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `n${(i * 7919) % 1000}`, size: 0, on: false }));
  const page = paginate(rows, rows, { limit: 10, marker: undefined, sortKeys: ['name'], sortDirs: ['asc'] }, cols);
  assert.is(reads, 1000);
  assert.equal(
    page.map((x) => x.name),
    ['n0', 'n1', 'n10', 'n100', 'n101', 'n102', 'n103', 'n104', 'n105', 'n106'],
  );
});

test.run();
