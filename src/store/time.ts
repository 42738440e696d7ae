// Timestamps as Masakari stores them: UTC, no zone suffix, and (for created_at
// and updated_at) no microseconds, because its models strip them before the
// row is written (masakari/db/sqlalchemy/models.py MasakariTimestampMixin).

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** '2026-01-02T03:04:05' for a Date (UTC, second precision). */
export function formatSeconds(d: Date): string {
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** Now, as written into status.updatedAt: RFC 3339 UTC with second precision. */
export function nowRfc3339(now: Date = new Date()): string {
  return `${formatSeconds(now)}Z`;
}

/**
 * Microseconds since the epoch for an ISO 8601 time; a naive time is UTC (as
 * Masakari's validators take it). Microsecond precision matters for the
 * duplicate window, which compares generated_time values exactly. Returns
 * undefined for text that is not such a time.
 */
export function toEpochMicros(iso: string): bigint | undefined {
  const m = ISO_RE.exec(iso.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms)) return undefined;
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  }
  const micros = frac ? BigInt(frac.padEnd(6, '0').slice(0, 6)) : 0n;
  return BigInt(ms) * 1000n + micros;
}

/**
 * created_at/updated_at as the records carry them ('2026-01-02T03:04:05'):
 * UTC, microseconds dropped. Accepts what the API server and our writers
 * produce ('…Z', '…+00:00', with or without fractions); null stays null.
 */
export function toRecordTime(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const micros = toEpochMicros(iso);
  if (micros === undefined) return null;
  return formatSeconds(new Date(Number(micros / 1000n)));
}
