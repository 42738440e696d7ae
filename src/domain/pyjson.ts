// JSON text as Python's json.dumps writes it (Masakari serialises with
// oslo.serialization's jsonutils.dumps): ', ' and ': ' separators, every
// non-ASCII character escaped as \uXXXX, floats printed by repr().

import { PyBigInt, PyFloat, reprFloat, reprNumber } from './python-repr.ts';

export { PyFloat };

/** Printable ASCII except '"' and '\\': such strings are written as they are. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON text rendered earlier (e.g. a cached view), written verbatim. */
export class RawJson {
  constructor(readonly text: string) {}
}

function escapeString(s: string): string {
  // Fast path: nearly every name, uuid and timestamp needs no escaping.
  if (PLAIN.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c >= 0x20 && c <= 0x7e) out += ch;
    else out += `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return out + '"';
}

function floatText(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  return reprFloat(n);
}

export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof PyFloat) return floatText(value.value);
  if (value instanceof PyBigInt) return value.digits;
  if (value instanceof RawJson) return value.text;
  if (typeof value === 'number') return Number.isInteger(value) ? reprNumber(value) : floatText(value);
  if (typeof value === 'string') return escapeString(value);
  // Arrays and objects append to one string rather than building
  // intermediate arrays: list responses spend most of their time here.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ', ' : '') + pyJsonDumps(value[i]);
    return out + ']';
  }
  if (typeof value === 'object') {
    let out = '{';
    let first = true;
    for (const k in value as Record<string, unknown>) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined || !Object.hasOwn(value, k)) continue;
      out += (first ? '' : ', ') + escapeString(k) + ': ' + pyJsonDumps(v);
      first = false;
    }
    return out + '}';
  }
  return escapeString(String(value));
}
