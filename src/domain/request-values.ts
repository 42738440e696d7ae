// Values of a request as Masakari's API layer reads them: query-string and
// body booleans, the fields of a patch that change something, and free text
// the database requires.

import { BadRequest } from './errors.ts';
import { boolFromStringStrict, InvalidBooleanString } from './booleans.ts';
import * as msg from './messages.ts';

/** Query-string booleans of the hosts filters: strutils strict, worded as hosts.py words it. */
export function queryBoolean(field: string, value: string): boolean {
  try {
    return boolFromStringStrict(value);
  } catch (e) {
    if (e instanceof InvalidBooleanString) throw new BadRequest(msg.invalidFilterBoolean(field, e.message));
    throw e;
  }
}

/** Body booleans already accepted by the schema. */
export function bodyBoolean(value: unknown): boolean {
  return boolFromStringStrict(value as string | boolean);
}

/**
 * The fields of a patch that change something. Masakari's database layer
 * writes nothing (and keeps updated_at) when an update sets equal values.
 */
export function changes<T extends object>(current: T, patch: Partial<T>): Partial<T> {
  return Object.fromEntries(
    Object.entries(patch).filter(([k, v]) => v !== undefined && current[k as keyof T] !== v),
  ) as Partial<T>;
}

/** Free-text fields the schema lets be null but the database requires; Masakari would fail with a 500 there. */
export function text(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}
