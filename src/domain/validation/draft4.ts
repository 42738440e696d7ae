// The request-body validator, with jsonschema's Draft4Validator semantics as
// Masakari uses it (masakari/api/validation/validators.py): the FIRST error in
// jsonschema's iteration order is reported (not a "best" one), keywords are
// visited in the schema's key order, and the message is jsonschema's, with
// values printed as Python prints them. ajv (see schemas.ts) checks the
// schemas themselves; it cannot reproduce this order or these texts.
//
// Only the keywords Masakari's schemas use are implemented: type, enum,
// properties, patternProperties, additionalProperties, required, minLength,
// maxLength, pattern, format, anyOf.

import { PyBigInt, PyFloat, pyRepr, pyStr } from '../python-repr.ts';

export type JsonSchema = Record<string, unknown>;

/** A format check; returns false (or throws FormatCause) when the value does not conform. */
export type FormatChecker = (value: unknown) => boolean;

/** Thrown by a format checker to replace the whole message (Masakari's InvalidName). */
export class FormatCause extends Error {}

export interface SchemaError {
  /** jsonschema's message. */
  message: string;
  /** Path of the failing value inside the instance. */
  path: (string | number)[];
  instance: unknown;
  keyword: string;
  cause?: FormatCause;
}

export interface Draft4Options {
  formats: Record<string, FormatChecker>;
  /** Compiles a pattern with Python re.search semantics. */
  regex: (pattern: string) => RegExp;
}

/** A JSON number as decoded: a plain number, or a literal Python keeps more exactly (PyFloat, PyBigInt). */
function isNumberLiteral(v: unknown): boolean {
  return typeof v === 'number' || v instanceof PyFloat || v instanceof PyBigInt;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isNumberLiteral(v);
}

function isType(v: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'integer':
      return (typeof v === 'number' && Number.isInteger(v)) || v instanceof PyBigInt;
    case 'number':
      return isNumberLiteral(v);
    default:
      return false;
  }
}

function numericValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof PyFloat) return v.value;
  if (v instanceof PyBigInt) return Number(v.digits);
  return undefined;
}

/** jsonschema's `equal`: booleans never equal numbers; 1.0 equals 1. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const [x, y] = [numericValue(a), numericValue(b)];
  if (x !== undefined || y !== undefined) return x === y;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Python's len() of a str counts code points. */
function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export class Draft4Validator {
  private readonly regexCache = new Map<string, RegExp>();

  constructor(private readonly opts: Draft4Options) {}

  private re(pattern: string): RegExp {
    let r = this.regexCache.get(pattern);
    if (!r) {
      r = this.opts.regex(pattern);
      this.regexCache.set(pattern, r);
    }
    return r;
  }

  /** The first error jsonschema would raise, or undefined when the instance is valid. */
  firstError(schema: JsonSchema, instance: unknown): SchemaError | undefined {
    const it = this.iterErrors(schema, instance, []);
    const first = it.next();
    return first.done ? undefined : first.value;
  }

  private *iterErrors(schema: JsonSchema, instance: unknown, path: (string | number)[]): Generator<SchemaError> {
    for (const [keyword, value] of Object.entries(schema)) {
      yield* this.keyword(keyword, value, schema, instance, path);
    }
  }

  private err(keyword: string, message: string, instance: unknown, path: (string | number)[]): SchemaError {
    return { keyword, message, instance, path };
  }

  private *keyword(
    keyword: string,
    value: unknown,
    schema: JsonSchema,
    instance: unknown,
    path: (string | number)[],
  ): Generator<SchemaError> {
    switch (keyword) {
      case 'type': {
        const types = Array.isArray(value) ? (value as string[]) : [value as string];
        if (!types.some((t) => isType(instance, t))) {
          yield this.err(
            keyword,
            `${pyRepr(instance)} is not of type ${types.map((t) => pyRepr(t)).join(', ')}`,
            instance,
            path,
          );
        }
        return;
      }
      case 'enum': {
        const values = value as unknown[];
        if (!values.some((v) => jsonEqual(v, instance))) {
          yield this.err(keyword, `${pyRepr(instance)} is not one of ${pyRepr(values)}`, instance, path);
        }
        return;
      }
      case 'properties': {
        if (!isObject(instance)) return;
        for (const [prop, sub] of Object.entries(value as Record<string, JsonSchema>)) {
          if (Object.hasOwn(instance, prop)) yield* this.iterErrors(sub, instance[prop], [...path, prop]);
        }
        return;
      }
      case 'patternProperties': {
        if (!isObject(instance)) return;
        for (const [pattern, sub] of Object.entries(value as Record<string, JsonSchema>)) {
          for (const [k, v] of Object.entries(instance)) {
            if (this.re(pattern).test(k)) yield* this.iterErrors(sub, v, [...path, k]);
          }
        }
        return;
      }
      case 'additionalProperties': {
        if (!isObject(instance) || value !== false) return;
        const props = (schema.properties ?? {}) as Record<string, unknown>;
        const patterns = Object.keys((schema.patternProperties ?? {}) as Record<string, unknown>);
        const extras = Object.keys(instance).filter(
          (k) => !Object.hasOwn(props, k) && !patterns.some((p) => this.re(p).test(k)),
        );
        if (extras.length === 0) return;
        extras.sort();
        if (patterns.length > 0) {
          const verb = extras.length === 1 ? 'does' : 'do';
          const regexes = [...patterns].sort().map((p) => pyRepr(p));
          yield this.err(
            keyword,
            `${extras.map((e) => pyRepr(e)).join(', ')} ${verb} not match any of the regexes: ${regexes.join(', ')}`,
            instance,
            path,
          );
        } else {
          const verb = extras.length === 1 ? 'was' : 'were';
          yield this.err(
            keyword,
            `Additional properties are not allowed (${extras.map((e) => pyRepr(e)).join(', ')} ${verb} unexpected)`,
            instance,
            path,
          );
        }
        return;
      }
      case 'required': {
        if (!isObject(instance)) return;
        for (const prop of value as string[]) {
          if (!Object.hasOwn(instance, prop))
            yield this.err(keyword, `${pyRepr(prop)} is a required property`, instance, path);
        }
        return;
      }
      case 'minLength': {
        if (typeof instance === 'string' && pyLen(instance) < (value as number)) {
          const text = value === 1 ? 'should be non-empty' : 'is too short';
          yield this.err(keyword, `${pyRepr(instance)} ${text}`, instance, path);
        }
        return;
      }
      case 'maxLength': {
        if (typeof instance === 'string' && pyLen(instance) > (value as number)) {
          const text = value === 0 ? 'is expected to be empty' : 'is too long';
          yield this.err(keyword, `${pyRepr(instance)} ${text}`, instance, path);
        }
        return;
      }
      case 'pattern': {
        if (typeof instance === 'string' && !this.re(value as string).test(instance)) {
          yield this.err(keyword, `${pyRepr(instance)} does not match ${pyRepr(value)}`, instance, path);
        }
        return;
      }
      case 'format': {
        const check = this.opts.formats[value as string];
        if (!check) return;
        let ok: boolean;
        let cause: FormatCause | undefined;
        try {
          ok = check(instance);
        } catch (e) {
          if (!(e instanceof FormatCause)) throw e;
          ok = false;
          cause = e;
        }
        if (!ok) {
          const error = this.err(keyword, `${pyRepr(instance)} is not a ${pyRepr(value)}`, instance, path);
          if (cause) error.cause = cause;
          yield error;
        }
        return;
      }
      case 'anyOf': {
        const subs = value as JsonSchema[];
        if (!subs.some((sub) => this.firstError(sub, instance) === undefined)) {
          yield this.err(keyword, `${pyRepr(instance)} is not valid under any of the given schemas`, instance, path);
        }
        return;
      }
      default:
        return;
    }
  }
}

/**
 * Masakari's ValidationError detail (validators.py _SchemaValidator.validate):
 * the format cause's own text, or "Invalid input for field/attribute <last
 * path element>. Value: <str(value)>. <message>", or the bare message at the
 * top level.
 */
export function masakariDetail(error: SchemaError): string {
  if (error.cause) return error.cause.message;
  if (error.path.length > 0) {
    const field = error.path[error.path.length - 1];
    return `Invalid input for field/attribute ${String(field)}. Value: ${pyStr(error.instance)}. ${error.message}`;
  }
  return error.message;
}
