// Times as Masakari reads and writes them.
// Reading: oslo_utils.timeutils.parse_isotime (the iso8601 library's grammar;
// a time without zone is UTC). Writing: oslo.serialization's JSON encoder
// prints datetimes as '%Y-%m-%dT%H:%M:%S.%f' (always six fraction digits, no
// zone), so '2026-01-02T03:04:05' goes out as '2026-01-02T03:04:05.000000'.

/** The iso8601 library's grammar (YYYY, YYYY-MM, YYYY-MM-DD, then [ T]hh[:mm[:ss[.f]]][zone]). */
const ISO8601 =
  /^(?<year>[0-9]{4})(?:(?:-(?<monthdash>[0-9]{1,2})|(?<month>[0-9]{2})(?!$))(?:(?:-(?<daydash>[0-9]{1,2})|(?<day>[0-9]{2}))(?:[ T](?<hour>[0-9]{2})(?::?(?<minute>[0-9]{2}))?(?::?(?<second>[0-9]{1,2})(?:[.,](?<fraction>[0-9]+))?)?(?<timezone>Z|(?<tzsign>[-+])(?<tzhour>[0-9]{2}):?(?<tzminute>[0-9]{2})?)?)?)?)?(?:\n)?$/;

/** A parsed instant: milliseconds since the epoch plus the sub-millisecond microseconds. */
export interface Instant {
  /** Microseconds since the Unix epoch (UTC). */
  micros: bigint;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * parse_isotime: undefined when the text is not an ISO 8601 time Masakari
 * accepts (including impossible dates such as month 13).
 */
export function parseIsoTime(text: string): Instant | undefined {
  const m = ISO8601.exec(text);
  const g = m?.groups;
  if (!g) return undefined;
  const year = Number(g.year);
  const month = Number(g.monthdash ?? g.month ?? 1);
  const day = Number(g.daydash ?? g.day ?? 1);
  const hour = Number(g.hour ?? 0);
  const minute = Number(g.minute ?? 0);
  const second = Number(g.second ?? 0);
  if (year < 1 || month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = g.fraction ? BigInt(g.fraction.slice(0, 6).padEnd(6, '0')) : 0n;
  let offsetMinutes = 0;
  if (g.tzsign) {
    const tzh = Number(g.tzhour);
    const tzm = Number(g.tzminute ?? 0);
    if (tzh > 23 || tzm > 59) return undefined;
    offsetMinutes = (g.tzsign === '-' ? -1 : 1) * (tzh * 60 + tzm);
  }
  // setUTCFullYear, unlike Date.UTC, keeps years 1..99 as they are.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const ms = d.getTime() - offsetMinutes * 60_000;
  return { micros: BigInt(ms) * 1000n + fraction };
}

/** Splits microseconds since the epoch into a Date (whole milliseconds floored to seconds) and the micro part. */
function split(micros: bigint): { d: Date; micro: bigint } {
  let micro = micros % 1_000_000n;
  if (micro < 0n) micro += 1_000_000n;
  return { d: new Date(Number((micros - micro) / 1000n)), micro };
}

function formatDate(d: Date): string {
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

function pad(n: number | bigint, width = 2): string {
  return String(n).padStart(width, '0');
}

/** Naive UTC ISO text with microseconds, '2026-01-02T03:04:05.123456' (the records' format). */
export function formatNaive(i: Instant, withMicros = true): string {
  const { d, micro } = split(i.micros);
  const base = formatDate(d);
  return withMicros && micro !== 0n ? `${base}.${pad(micro, 6)}` : base;
}

/**
 * Normalises a client-supplied time to the records' format: UTC, no zone,
 * microseconds kept when present. Undefined when unparseable.
 */
export function normaliseTime(text: string): string | undefined {
  const i = parseIsoTime(text);
  return i ? formatNaive(i) : undefined;
}

/**
 * Bounded memo for the pure conversions below: list responses render the same
 * stored timestamps over and over, and parsing dominated their CPU time.
 */
function memo<T>(f: (s: string) => T, max = 20_000): (s: string) => T {
  const cache = new Map<string, T>();
  return (s) => {
    const hit = cache.get(s);
    if (hit !== undefined || cache.has(s)) return hit as T;
    const v = f(s);
    if (cache.size >= max) cache.clear();
    cache.set(s, v);
    return v;
  };
}

const wireTime = memo((stored: string): string => {
  const i = parseIsoTime(stored.replace(/(?:Z|[+-]00:?00)$/, ''));
  if (!i) return stored;
  const { d, micro } = split(i.micros);
  return `${formatDate(d)}.${pad(micro, 6)}`;
});

/** Masakari's wire format for a stored time: '%Y-%m-%dT%H:%M:%S.%f'; null stays null. */
export function formatWireTime(stored: string | null | undefined): string | null {
  if (stored === null || stored === undefined) return null;
  return wireTime(stored);
}

const micros = memo((stored: string): bigint => parseIsoTime(stored.replace(/Z$/, ''))?.micros ?? 0n);

/** Microseconds since the epoch of a stored time (for comparisons). */
export function toMicros(stored: string): bigint {
  return micros(stored);
}

/** Now, as a record time: UTC, second precision (Masakari strips microseconds from created_at/updated_at). */
export function nowRecordTime(now: Date = new Date()): string {
  return formatNaive({ micros: BigInt(Math.floor(now.getTime() / 1000)) * 1_000_000n }, false);
}
