// Every time format the process reads or writes, in one place.
//
// Reading: oslo_utils.timeutils.parse_isotime (the iso8601 library's grammar;
// a time without zone is UTC). Masakari's records: created_at/updated_at at
// second precision (masakari/db/sqlalchemy/models.py MasakariTimestampMixin
// strips microseconds), and on the wire oslo.serialization's JSON encoder
// prints datetimes as '%Y-%m-%dT%H:%M:%S.%f' (always six fraction digits, no
// zone). progress_details timestamps are Python's str(datetime). Status and
// Kubernetes times are RFC 3339: metav1.Time at second precision, and
// metav1.MicroTime (Lease renewTime, Event eventTime) with exactly six
// fraction digits, since the API server parses it with a fixed layout.
// JavaScript clocks have milliseconds, so written microseconds are ms * 1000.

import { systemClock } from './clock.ts';

/** The iso8601 library's grammar (YYYY, YYYY-MM, YYYY-MM-DD, then [ T]hh[:mm[:ss[.f]]][zone]). */
const ISO8601 =
  /^(?<year>[0-9]{4})(?:(?:-(?<monthdash>[0-9]{1,2})|(?<month>[0-9]{2})(?!$))(?:(?:-(?<daydash>[0-9]{1,2})|(?<day>[0-9]{2}))(?:[ T](?<hour>[0-9]{2})(?::?(?<minute>[0-9]{2}))?(?::?(?<second>[0-9]{1,2})(?:[.,](?<fraction>[0-9]+))?)?(?<timezone>Z|(?<tzsign>[-+])(?<tzhour>[0-9]{2}):?(?<tzminute>[0-9]{2})?)?)?)?)?(?:\n)?$/;

/** A parsed instant. */
export interface Instant {
  /** Microseconds since the Unix epoch (UTC). */
  micros: bigint;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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

/**
 * Microseconds since the epoch for an ISO 8601 time (surrounding blanks
 * ignored); a naive time is UTC, as Masakari's validators take it.
 * Microsecond precision matters for the duplicate window, which compares
 * generated_time values exactly. Undefined for text that is not such a time.
 */
export function toEpochMicros(iso: string): bigint | undefined {
  return parseIsoTime(iso.trim())?.micros;
}

/**
 * The RFC 3339 UTC form the API server and our status writes use
 * (2026-12-02T19:21:42Z, optionally with a fraction): read by Date.parse,
 * which allocates nothing, where parseIsoTime builds a match object, a Date
 * and BigInts. Date.parse rolls impossible days over (February 30 is March
 * 2), so the day is checked against its month.
 */
const RFC3339_UTC =
  /^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?Z$/;

const digits = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + s.charCodeAt(i) - 48;
  return n;
};

/**
 * Whole seconds since the epoch (floored, so times before 1970 keep their
 * order) for an ISO 8601 time, as toEpochMicros reads it; undefined when it
 * is not one. Built for indexing many stored times: the common RFC 3339 UTC
 * form takes a path that allocates nothing.
 */
export function toEpochSeconds(iso: string): number | undefined {
  if (RFC3339_UTC.test(iso)) {
    const year = digits(iso, 0, 4);
    // Year 0 is no time for Python's datetime (parseIsoTime refuses it too).
    if (year >= 1 && digits(iso, 8, 10) <= daysInMonth(year, digits(iso, 5, 7)))
      return Math.floor(Date.parse(iso) / 1000);
  }
  const micros = toEpochMicros(iso);
  if (micros === undefined) return undefined;
  const seconds = micros / 1_000_000n;
  // BigInt division truncates toward zero; the floor keeps times before 1970 in order.
  return Number(micros < 0n && seconds * 1_000_000n !== micros ? seconds - 1n : seconds);
}

/**
 * Parses a notification's generated_time for its expiry. Masakari treats
 * naive times as UTC, so a string without a zone designator gets `Z` appended
 * before parsing. NaN for unparseable input, which callers treat as "not expired".
 */
export function parseGeneratedTime(s: string): number {
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(s.trim());
  return Date.parse(hasZone ? s : `${s}Z`);
}

function pad(n: number | bigint, width = 2): string {
  return String(n).padStart(width, '0');
}

/** 'YYYY-MM-DD<sep>hh:mm:ss' in UTC. */
function dateAndTime(d: Date, sep = 'T'): string {
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `${sep}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** The six fraction digits of a JavaScript time. */
const microsOf = (d: Date): string => pad(d.getUTCMilliseconds() * 1000, 6);

/** Splits microseconds since the epoch into a Date (floored to whole seconds) and the micro part. */
function split(micros: bigint): { seconds: Date; micro: bigint } {
  let micro = micros % 1_000_000n;
  if (micro < 0n) micro += 1_000_000n;
  return { seconds: new Date(Number((micros - micro) / 1000n)), micro };
}

/** Naive UTC ISO text with microseconds, '2026-01-02T03:04:05.123456' (the records' format). */
export function formatNaive(i: Instant, withMicros = true): string {
  const { seconds, micro } = split(i.micros);
  const base = dateAndTime(seconds);
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

/** Now, as a record time: UTC, second precision (Masakari strips microseconds from created_at/updated_at). */
export function nowRecordTime(now: Date = systemClock.now()): string {
  return dateAndTime(now);
}

/**
 * created_at/updated_at as the records carry them ('2026-01-02T03:04:05'):
 * UTC, microseconds dropped. Accepts what the API server and our writers
 * produce ('…Z', '…+00:00', with or without fractions); null stays null.
 */
export function toRecordTime(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const micros = toEpochMicros(iso);
  return micros === undefined ? null : formatNaive({ micros }, false);
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
  const { seconds, micro } = split(i.micros);
  return `${dateAndTime(seconds)}.${pad(micro, 6)}`;
});

/** Masakari's wire format for a stored time: '%Y-%m-%dT%H:%M:%S.%f'; null stays null. */
export function formatWireTime(stored: string | null | undefined): string | null {
  if (stored === null || stored === undefined) return null;
  return wireTime(stored);
}

const storedMicros = memo((stored: string): bigint => parseIsoTime(stored.replace(/Z$/, ''))?.micros ?? 0n);

/** Microseconds since the epoch of a stored time (for comparisons); 0 when unparseable. */
export function toMicros(stored: string): bigint {
  return storedMicros(stored);
}

/**
 * RFC 3339 in UTC at second precision, '2026-01-02T03:04:05Z': metav1.Time,
 * and status createdAt/updatedAt (Masakari's models strip the fraction).
 */
export function rfc3339Seconds(d: Date = systemClock.now()): string {
  return `${dateAndTime(d)}Z`;
}

/**
 * RFC 3339 with exactly six fraction digits, '2026-01-02T03:04:05.006000Z':
 * metav1.MicroTime, and vmove start/end times (Masakari keeps their fraction).
 */
export function rfc3339Micro(d: Date): string {
  return `${dateAndTime(d)}.${microsOf(d)}Z`;
}

/**
 * Python's `str(datetime.utcnow())`, the progress_details timestamp format:
 * `2019-03-07 13:54:28.842031`, space separator, no zone, and the fraction
 * omitted entirely when it is zero (that is how Python prints it).
 */
export function pythonStrDatetime(d: Date): string {
  const base = dateAndTime(d, ' ');
  return d.getUTCMilliseconds() === 0 ? base : `${base}.${microsOf(d)}`;
}
