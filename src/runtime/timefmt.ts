// Kubernetes wire formats for time.

/** metav1.Time: RFC 3339 in UTC with second precision. */
export const metaTime = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * metav1.MicroTime (Lease renewTime, Event eventTime): RFC 3339 with exactly
 * six fractional digits; the API server parses it with a fixed layout and
 * rejects other precisions. JavaScript clocks have milliseconds, so the last
 * three digits are zero.
 */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
