// Which characters Masakari counts as printable, from Python's Unicode tables
// (3.11, Unicode 14) rather than Node's newer ICU tables, so names, the
// description check and repr() of values in messages all agree with Masakari
// also for characters assigned since. The Basic Multilingual Plane comes from
// the exact text of Masakari's description pattern; the planes beyond from a
// table generated on the same Python.

import { MASAKARI_DESCRIPTION_PATTERN } from './generated/description-pattern.ts';
import { PYTHON_ASTRAL_PRINTABLE_RANGES } from './generated/astral-printable.ts';

/** The description pattern's class without its leading newline (JavaScript syntax, no unicode flag). */
export const PRINTABLE_RANGES = MASAKARI_DESCRIPTION_PATTERN.slice('^[\n'.length, -']*$'.length);

/** Unicode's space separators (Zs), unchanged since long before Unicode 14. */
export const SPACE_SEPARATORS = String.raw`\u0020\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000`;

const PRINTABLE_BMP = new RegExp(`^[${PRINTABLE_RANGES}]$`);
const SPACE_SEPARATOR = new RegExp(`^[${SPACE_SEPARATORS}]$`);
const PRINTABLE_ASTRAL = new RegExp(`^[${PYTHON_ASTRAL_PRINTABLE_RANGES}]$`, 'u');

/** Python's str.isprintable() for one character: neither 'Other' nor 'Separator', except the ASCII space. */
export function isPythonPrintable(ch: string): boolean {
  if (ch === ' ') return true;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp <= 0xffff) return PRINTABLE_BMP.test(ch) && !SPACE_SEPARATOR.test(ch);
  return PRINTABLE_ASTRAL.test(ch);
}
