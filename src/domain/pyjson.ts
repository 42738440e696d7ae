// JSON text as Python's json.dumps writes it (Masakari serialises with
// oslo.serialization's jsonutils.dumps): ', ' and ': ' separators, every
// non-ASCII character escaped as \uXXXX, floats printed by repr().

import { reprNumber } from './python-repr.ts';

/** A number Python holds as a float (prints 1.0, not 1). */
export class PyFloat {
  constructor(readonly value: number) {}
}

function escapeString(s: string): string {
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
  const r = reprNumber(n);
  return Number.isInteger(n) && Math.abs(n) < 1e16 ? `${r}.0` : r;
}

export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof PyFloat) return floatText(value.value);
  if (typeof value === 'number') return Number.isInteger(value) ? reprNumber(value) : floatText(value);
  if (typeof value === 'string') return escapeString(value);
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${escapeString(k)}: ${pyJsonDumps(v)}`);
    return `{${parts.join(', ')}}`;
  }
  return escapeString(String(value));
}
