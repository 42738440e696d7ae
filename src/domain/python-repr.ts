// Python's repr()/str() for JSON values. Masakari's validation messages embed
// the offending value as Python prints it ('abc', True, None, {'a': 1}), and
// clients compare those texts, so we print values the same way.

import { isPythonPrintable } from './printable.ts';

/** Arrays registered here print as Python tuples: ('a', 'b'). Masakari's enums are tuples. */
const tuples = new WeakSet<readonly unknown[]>();

/** Marks an array as a Python tuple for pyRepr (the array itself is returned). */
export function pyTuple<T extends readonly unknown[]>(items: T): T {
  tuples.add(items);
  return items;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** repr() of a Python str. */
export function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (isPythonPrintable(ch)) out += ch;
    else if (cp < 0x100) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + quote;
}

/** A number Python holds as a float (prints 1.0, not 1): a JSON literal with a fraction or an exponent. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A JSON integer literal beyond 2^53: Python keeps every digit, a JavaScript number would not. */
export class PyBigInt {
  constructor(readonly digits: string) {}
}

/** repr() of a Python float: shortest round-trip digits, '.0' on whole numbers, exponent form below 1e-4 and from 1e16. */
export function reprFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Object.is(n, -0)) return '-0.0';
  const [mant, e] = n.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? '-' : '+';
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const fixed = String(n);
  return Number.isInteger(n) ? `${fixed}.0` : fixed;
}

/** repr() of a Python float or int decoded from JSON. */
export function reprNumber(n: number): string {
  if (Number.isInteger(n)) return Math.abs(n) < 1e16 ? String(n) : BigInt(n).toString();
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 16) {
    // Python: 1e-05, 1.5e+16 (two-digit exponent at least).
    const [mant, e] = n.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '').padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return String(n);
}

/** Python repr() of a JSON value. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return reprNumber(value);
  if (value instanceof PyFloat) return reprFloat(value.value);
  if (value instanceof PyBigInt) return value.digits;
  if (typeof value === 'string') return reprString(value);
  if (Array.isArray(value)) {
    const items = value.map(pyRepr);
    if (tuples.has(value)) return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
    return `[${items.join(', ')}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${reprString(k)}: ${pyRepr(v)}`);
    return `{${entries.join(', ')}}`;
  }
  return String(value);
}

/** Python str(): strings print bare, everything else as repr(). */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}
