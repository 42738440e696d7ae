// Listing rules shared by segments, hosts, notifications and vmoves:
// api/openstack/common.py (limit, marker, sort params from the query string)
// and db/sqlalchemy/api.py + oslo.db paginate_query (default keys, direction
// checks, marker semantics). Applied in Masakari's order: limit 0 short-cuts
// everything, then directions, then the marker lookup, then the sort keys.

import { BadRequest, InvalidSortKey, MarkerNotFound } from './errors.ts';
import * as msg from './messages.ts';
import { parsePythonInt } from './python-int.ts';
import { queryBoolean } from './request-values.ts';

/** A query string with repeatable keys (the parts of URLSearchParams we use). */
export interface QueryParams {
  has(name: string): boolean;
  get(name: string): string | null;
  getAll(name: string): string[];
}

/** webob's MultiDict[name] returns the last value given. */
export function lastValue(q: QueryParams, name: string): string | undefined {
  const all = q.getAll(name);
  return all.length ? all[all.length - 1] : undefined;
}

/**
 * The rows each filter the query names keeps: the field equals the query's
 * value (its last one). Boolean fields read that value with the strict query
 * vocabulary, after the text fields, so a bad one fails as it does in Masakari.
 */
export function filterRows<R>(
  rows: R[],
  q: QueryParams,
  fields: { text: (keyof R & string)[]; boolean?: (keyof R & string)[] },
): R[] {
  for (const field of fields.text) {
    const value = lastValue(q, field);
    if (value !== undefined) rows = rows.filter((r) => r[field] === value);
  }
  for (const field of fields.boolean ?? []) {
    const value = lastValue(q, field);
    if (value === undefined) continue;
    const want = queryBoolean(field, value);
    rows = rows.filter((r) => r[field] === want);
  }
  return rows;
}

export interface ListParams {
  limit: number;
  marker: string | undefined;
  sortKeys: string[];
  sortDirs: string[];
}

/** oslo strutils.validate_integer(value, name, min_value=0) as Masakari words its failure. */
function parseNonNegativeInt(value: string, name: string): number {
  const n = parsePythonInt(value);
  if (n === undefined) throw new BadRequest(msg.notAnInteger(name));
  if (n < 0) throw new BadRequest(msg.integerTooSmall(name, 0));
  return n;
}

/** common.get_limit_and_marker + common.get_sort_params. */
export function parseListParams(q: QueryParams, maxLimit: number): ListParams {
  let limit = maxLimit;
  const rawLimit = lastValue(q, 'limit');
  if (rawLimit !== undefined) limit = Math.min(maxLimit, parseNonNegativeInt(rawLimit, 'limit'));
  const rawPageSize = lastValue(q, 'page_size');
  if (rawPageSize !== undefined) parseNonNegativeInt(rawPageSize, 'page_size');
  const sortKeys = q.getAll('sort_key').map((k) => k.trim());
  const sortDirs = q.getAll('sort_dir').map((d) => d.trim());
  if (sortKeys.length === 0) sortKeys.push('created_at');
  if (sortDirs.length === 0) sortDirs.push('desc');
  return { limit, marker: lastValue(q, 'marker'), sortKeys, sortDirs };
}

/** db/sqlalchemy/api.py _process_sort_params: fills directions and appends created_at, id. */
export function processSortParams(
  sortKeys: string[],
  sortDirs: string[],
): { keys: string[]; dirs: ('asc' | 'desc')[] } {
  const defaultDir = sortDirs.length ? sortDirs[0] : 'desc';
  const keys = [...sortKeys];
  let dirs: string[];
  if (sortDirs.length) {
    for (const d of sortDirs) if (d !== 'asc' && d !== 'desc') throw new BadRequest(msg.unknownSortDirection());
    dirs = [...sortDirs];
  } else {
    dirs = keys.map(() => defaultDir as string);
  }
  while (dirs.length < keys.length) dirs.push(defaultDir as string);
  if (dirs.length > keys.length) throw new BadRequest(msg.sortDirectionSizeExceeds());
  for (const key of ['created_at', 'id']) {
    if (!keys.includes(key)) {
      keys.push(key);
      dirs.push(defaultDir as string);
    }
  }
  return { keys, dirs: dirs as ('asc' | 'desc')[] };
}

export type SortValue = string | number | boolean | null;

/** How to read a row's database columns (sortable keys are the model's columns). */
export interface ColumnSet<T> {
  columns: Record<string, (row: T) => SortValue>;
  id: (row: T) => number;
}

/** SQL ordering: NULL sorts first ascending (MySQL, SQLite), booleans as 0/1. */
export function compare(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  const x = typeof a === 'boolean' ? Number(a) : a;
  const y = typeof b === 'boolean' ? Number(b) : b;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  const sx = String(x);
  const sy = String(y);
  return sx < sy ? -1 : sx > sy ? 1 : 0;
}

/** SQL comparison where NULL on either side is never true. */
function sqlLess(a: SortValue, b: SortValue): boolean {
  return a !== null && b !== null && compare(a, b) < 0;
}
function sqlEqual(a: SortValue, b: SortValue): boolean {
  return a !== null && b !== null && compare(a, b) === 0;
}

/** The integer id a marker names, as the database would coerce it; undefined when it names none. */
export function markerId(marker: string): number | undefined {
  const text = marker.trim();
  return /^[+-]?\d+$/.test(text) ? Number(text) : undefined;
}

/**
 * Sorts, applies the marker and the limit. `rows` are the filtered rows;
 * `markerPool` the rows the marker is looked up in (Masakari looks it up
 * among all live rows of the table, ignoring the filters).
 */
export function paginate<T>(rows: T[], markerPool: T[], p: ListParams, cols: ColumnSet<T>): T[] {
  if (p.limit === 0) return [];
  const { keys, dirs } = processSortParams(p.sortKeys, p.sortDirs);
  let markerRow: T | undefined;
  if (p.marker !== undefined) {
    const id = markerId(p.marker);
    markerRow = id === undefined ? undefined : markerPool.find((r) => cols.id(r) === id);
    if (!markerRow) throw new MarkerNotFound(p.marker);
  }
  const getters = keys.map((k) => {
    const g = Object.hasOwn(cols.columns, k) ? cols.columns[k] : undefined;
    if (!g) throw new InvalidSortKey(k);
    return g;
  });
  // Each row's sort values once, not per comparison: a payload column renders JSON text per call, and
  // a list of 100,000 notifications in another order compares each row about 17 times.
  const keyed = rows.map((row, at) => ({ row, at, values: getters.map((g) => g(row)) }));
  const order = (a: Keyed<T>, b: Keyed<T>): number => {
    for (let i = 0; i < dirs.length; i++) {
      const c = compare(a.values[i]!, b.values[i]!);
      if (c !== 0) return dirs[i] === 'desc' ? -c : c;
    }
    return a.at - b.at; // the sort was stable: ties keep the rows' order
  };
  let candidates = keyed;
  if (markerRow) {
    // oslo.db paginate_query: OR over i of (keys before i equal AND key i strictly past the marker),
    // skipping marker values that are NULL.
    const mv = getters.map((g) => g(markerRow as T));
    candidates = keyed.filter(({ values: v }) =>
      mv.some((m, i) => {
        if (m === null) return false;
        for (let j = 0; j < i; j++) {
          if (mv[j] !== null && !sqlEqual(v[j]!, mv[j]!)) return false;
        }
        return dirs[i] === 'desc' ? sqlLess(v[i]!, m) : sqlLess(m, v[i]!);
      }),
    );
  }
  return smallest(candidates, p.limit, order).map((k) => k.row);
}

interface Keyed<T> {
  row: T;
  /** Place in the input: the last tiebreak, so the order is total. */
  at: number;
  values: SortValue[];
}

/**
 * The `limit` smallest items in `order` (a total order), sorted: a bounded
 * max-heap instead of sorting every item for one page, O(n log limit).
 */
function smallest<X>(items: X[], limit: number, order: (a: X, b: X) => number): X[] {
  if (!(limit < items.length)) return [...items].sort(order);
  const heap: X[] = []; // max-heap: heap[0] is the largest kept
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && order(heap[l]!, heap[top]!) > 0) top = l;
      if (r < heap.length && order(heap[r]!, heap[top]!) > 0) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top]!, heap[i]!];
      i = top;
    }
  };
  for (const x of items) {
    if (heap.length < limit) {
      heap.push(x);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (order(heap[i]!, heap[parent]!) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (limit > 0 && order(x, heap[0]!) < 0) {
      heap[0] = x;
      down(0);
    }
  }
  return heap.sort(order);
}
