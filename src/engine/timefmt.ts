// Timestamp formats the engine writes into Notification status. Masakari's
// wire formats come from Python, so they are reproduced here rather than
// using Date#toISOString directly.

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function dateAndTime(d: Date, sep: string): string {
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `${sep}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** JavaScript clocks have millisecond resolution; microseconds are ms * 1000. */
const micros = (d: Date): string => pad(d.getUTCMilliseconds() * 1000, 6);

/**
 * Python's `str(datetime.utcnow())`, the progress_details timestamp format:
 * `2019-03-07 13:54:28.842031`, space separator, no zone, and the fraction
 * omitted entirely when it is zero (that is how Python prints it).
 */
export function pythonStrDatetime(d: Date): string {
  const base = dateAndTime(d, ' ');
  return d.getUTCMilliseconds() === 0 ? base : `${base}.${micros(d)}`;
}

/** RFC 3339 with microseconds, for vmove start/end times (Masakari keeps their fraction). */
export function rfc3339Micro(d: Date): string {
  return `${dateAndTime(d, 'T')}.${micros(d)}Z`;
}

/** RFC 3339 at second precision, for created/updated times (Masakari's models strip the fraction). */
export function rfc3339Seconds(d: Date): string {
  return `${dateAndTime(d, 'T')}Z`;
}

/**
 * Parses a notification's generated_time. Masakari treats naive times as UTC,
 * so a string without a zone designator gets `Z` appended before parsing.
 * Returns NaN for unparseable input, which callers treat as "not expired".
 */
export function parseGeneratedTime(s: string): number {
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(s.trim());
  return Date.parse(hasZone ? s : `${s}Z`);
}
