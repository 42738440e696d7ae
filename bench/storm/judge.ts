// Counting a storm's answers (pure, so it is unit-tested).
import type { CountedResult } from '../lib/load.ts';

/** Stop after this many 5xx: once etcd is out of space every later write fails the same way. */
export const MAX_SERVER_ERRORS = 100;

export function serverErrors(r: Pick<CountedResult, 'statuses'>): number {
  return Object.entries(r.statuses).reduce((n, [code, count]) => (Number(code) >= 500 ? n + count : n), 0);
}

/** Notifications the facade took: 202 Accepted. */
export function accepted(r: Pick<CountedResult, 'statuses'>): number {
  return r.statuses[202] ?? 0;
}

export function stormStopReason(statuses: Record<number, number>): string | undefined {
  const errors = serverErrors({ statuses });
  return errors >= MAX_SERVER_ERRORS ? `${errors} server errors` : undefined;
}
