// Reading one sample out of a Prometheus text exposition (format 0.0.4), e.g.
// etcd's etcd_mvcc_db_total_size_in_bytes from its /metrics.

/** The labels of a sample line's `{...}` part; values keep their escapes resolved. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/**
 * The value of the first sample of `name` whose labels include `labels`, or
 * undefined when there is none. Comments (# HELP, # TYPE) and other metrics
 * are skipped; `name` must match exactly (etcd_x does not match etcd_x_total).
 */
export function sampleValue(exposition: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const raw of exposition.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || !line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    let labelText = '';
    let valueText: string;
    if (rest.startsWith('{')) {
      const close = rest.lastIndexOf('}');
      if (close < 0) continue;
      labelText = rest.slice(1, close);
      valueText = rest.slice(close + 1);
    } else if (/^\s/.test(rest)) {
      valueText = rest;
    } else {
      continue; // a longer metric name with this prefix
    }
    const have = parseLabels(labelText);
    if (!Object.entries(labels).every(([k, v]) => have[k] === v)) continue;
    const value = valueText.trim().split(/\s+/)[0] ?? '';
    return value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : Number(value);
  }
  return undefined;
}

/**
 * The samples of `name` summed by the values of the labels `by` (joined with
 * a space), e.g. apiserver_request_total by verb and resource: "LIST hahosts" → 12.
 */
export function sampleSums(exposition: string, name: string, by: string[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const raw of exposition.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    if (close < 0) continue;
    const labels = parseLabels(line.slice(name.length + 1, close));
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(/\s+/)[0],
    );
    if (!Number.isFinite(value)) continue;
    const key = by.map((l) => labels[l] ?? '').join(' ');
    sums.set(key, (sums.get(key) ?? 0) + value);
  }
  return sums;
}

/** Fetches `url` (a /metrics endpoint) and reads one sample; throws when it is missing. */
export async function scrape(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}`);
  const value = sampleValue(await r.text(), name, labels);
  if (value === undefined) throw new Error(`${url}: no sample ${name}`);
  return value;
}

/** A histogram's per-series totals: the `_count` and `_sum` samples of `name`, keyed by their labels. */
export function histogramTotals(exposition: string, name: string): Map<string, { count: number; sum: number }> {
  const out = new Map<string, { count: number; sum: number }>();
  for (const raw of exposition.split('\n')) {
    const line = raw.trim();
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const which = m[1] === `${name}_count` ? 'count' : m[1] === `${name}_sum` ? 'sum' : undefined;
    if (!which) continue;
    const labels = parseLabels(m[2] ?? '');
    const key = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const entry = out.get(key) ?? { count: 0, sum: 0 };
    entry[which] = Number(m[3]);
    out.set(key, entry);
  }
  return out;
}

/** What each series of a histogram gained between two scrapes (series with no new samples left out). */
export function histogramDelta(
  before: Map<string, { count: number; sum: number }>,
  after: Map<string, { count: number; sum: number }>,
): Map<string, { count: number; sum: number }> {
  const out = new Map<string, { count: number; sum: number }>();
  for (const [key, a] of after) {
    const b = before.get(key) ?? { count: 0, sum: 0 };
    if (a.count > b.count) out.set(key, { count: a.count - b.count, sum: a.sum - b.sum });
  }
  return out;
}
