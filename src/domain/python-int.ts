// Python's int(text) in base 10, which oslo strutils.validate_integer applies
// to the `limit` and `page_size` query parameters: surrounding whitespace, one
// optional sign, decimal digits of any script (Unicode category Nd, e.g. '١'
// or '１'), and single underscores between digits ('1_000').

const PYTHON_INT = /^[+-]?\p{Nd}+(?:_\p{Nd}+)*$/u;
const DECIMAL_DIGIT = /^\p{Nd}$/u;

/**
 * The value of a decimal digit of any script. Unicode allocates every Nd
 * digit in a contiguous run that starts at its zero, so the value is the
 * distance from the start of the run (runs of several scripts can touch, as
 * the mathematical digits do, hence modulo 10).
 */
function digitValue(digit: string): number {
  const cp = digit.codePointAt(0)!;
  let start = cp;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/** int(text) for base 10; undefined where Python raises ValueError. */
export function parsePythonInt(text: string): number | undefined {
  const t = text.trim();
  if (!PYTHON_INT.test(t)) return undefined;
  let n = 0;
  for (const ch of t) {
    if (ch === '+' || ch === '-' || ch === '_') continue;
    n = n * 10 + (ch >= '0' && ch <= '9' ? ch.charCodeAt(0) - 48 : digitValue(ch));
  }
  return t.startsWith('-') && n !== 0 ? -n : n;
}
