// Value parsers for configuration options. Each parser turns a raw value from
// the YAML file or from an environment variable (always a string) into the
// option's type, or throws InvalidValue with the "must be ..." half of the
// startup error; the loader adds the group, the option and the offending value.
// Strings are coerced the way oslo.config reads masakari.conf, so values copied
// from an INI file ("3", "True") keep working.

import { isIP } from 'node:net';

export class InvalidValue extends Error {
  constructor(readonly requirement: string) {
    super(requirement);
    this.name = 'InvalidValue';
  }
}

/** A YAML map (not null, not a list). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface Parser<T> {
  /** Type as shown in docs/configuration.md, e.g. "integer >= 1". */
  readonly describe: string;
  parse(raw: unknown): T;
}

function describeRange(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `an integer between ${min} and ${max}`;
  if (min !== undefined) return `an integer >= ${min}`;
  if (max !== undefined) return `an integer <= ${max}`;
  return 'an integer';
}

export function integer(bounds: { min?: number; max?: number } = {}): Parser<number> {
  const requirement = `must be ${describeRange(bounds.min, bounds.max)}`;
  return {
    describe: describeRange(bounds.min, bounds.max).replace(/^an /, ''),
    parse(raw) {
      let value: number;
      if (typeof raw === 'number') value = raw;
      else if (typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw)) value = Number(raw);
      else throw new InvalidValue(requirement);
      if (!Number.isSafeInteger(value)) throw new InvalidValue(requirement);
      if (bounds.min !== undefined && value < bounds.min) throw new InvalidValue(requirement);
      if (bounds.max !== undefined && value > bounds.max) throw new InvalidValue(requirement);
      return value;
    },
  };
}

// oslo.config's BoolOpt accepts these words, case-insensitively.
const TRUE_WORDS = new Set(['true', '1', 'on', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'off', 'no']);

export function parseBoolean(raw: unknown): boolean | undefined {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw !== 'string') return undefined;
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

export function boolean(): Parser<boolean> {
  return {
    describe: 'boolean',
    parse(raw) {
      const value = parseBoolean(raw);
      if (value === undefined) throw new InvalidValue('must be a boolean (true or false)');
      return value;
    },
  };
}

function asString(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  // YAML turns `region: 1` or `key: 2.53` into numbers; the option still means text.
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  return undefined;
}

/** Text (a YAML number read as text too) that `accepts` takes, kept as `keep` says; anything else fails `requirement`. */
function checkedText(
  describe: string,
  requirement: string,
  accepts: (value: string) => boolean,
  keep: (value: string) => string = (value) => value,
): Parser<string> {
  return {
    describe,
    parse(raw) {
      const value = asString(raw);
      if (value === undefined || !accepts(value)) throw new InvalidValue(requirement);
      return keep(value);
    },
  };
}

export function string(opts: { nonEmpty?: boolean } = {}): Parser<string> {
  return checkedText(
    opts.nonEmpty ? 'non-empty string' : 'string',
    opts.nonEmpty ? 'must be a non-empty string' : 'must be a string',
    (value) => !opts.nonEmpty || value.trim() !== '',
  );
}

/** Unset (null, or an empty string as oslo.config reads `option =`) or a value. */
export function optional<T>(inner: Parser<T>): Parser<T | null> {
  return {
    describe: `${inner.describe}, or unset`,
    parse(raw) {
      if (raw === null || raw === undefined || raw === '') return null;
      return inner.parse(raw);
    },
  };
}

export function oneOf<const T extends string>(choices: readonly T[]): Parser<T> {
  return checkedText(`one of ${choices.join(', ')}`, `must be one of ${choices.join(', ')}`, (value) =>
    (choices as readonly string[]).includes(value),
  ) as Parser<T>;
}

export function matching(re: RegExp, what: string): Parser<string> {
  return checkedText(what, `must be ${what}`, (value) => re.test(value));
}

export function url(): Parser<string> {
  return checkedText(
    'http(s) URL',
    'must be an http or https URL',
    (value) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol),
  );
}

// RFC 1123 host name, as oslo.config's HostAddressOpt accepts besides IPs.
const HOSTNAME = /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;

export function isHostAddress(value: string): boolean {
  return isIP(value) !== 0 || HOSTNAME.test(value);
}

export function hostAddress(): Parser<string> {
  return checkedText('IP address or host name', 'must be an IP address or a host name', isHostAddress);
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** Splits "host:port" or "[v6]:port"; undefined when it is neither. */
export function splitHostPort(value: string): ListenAddress | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim());
  if (!m) return undefined;
  const host = m[1] ?? m[2] ?? '';
  const port = Number(m[3]);
  if (!isHostAddress(host) || port < 1 || port > 65535) return undefined;
  return { host, port };
}

export function hostPort(): Parser<string> {
  return checkedText(
    'host:port',
    'must be host:port with a port between 1 and 65535',
    (value) => splitHostPort(value) !== undefined,
    (value) => value.trim(),
  );
}

/** A set of names from a YAML list or a comma-separated string; no repeats, at least one. */
export function nameList<const T extends string>(choices: readonly T[]): Parser<T[]> {
  const requirement = `must be a non-empty comma-separated list of ${choices.join(', ')}`;
  return {
    describe: `comma-separated list of ${choices.join(', ')}`,
    parse(raw) {
      let items: unknown[];
      if (typeof raw === 'string') items = raw.split(',').map((s) => s.trim());
      else if (Array.isArray(raw)) items = raw.map((s) => (typeof s === 'string' ? s.trim() : s));
      else throw new InvalidValue(requirement);
      if (items.length === 0) throw new InvalidValue(requirement);
      const seen = new Set<T>();
      for (const item of items) {
        if (typeof item !== 'string' || !(choices as readonly string[]).includes(item)) {
          throw new InvalidValue(requirement);
        }
        if (seen.has(item as T)) throw new InvalidValue(`${requirement}, each named once`);
        seen.add(item as T);
      }
      return [...seen];
    },
  };
}
