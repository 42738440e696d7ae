// Request bodies decoded as Python's json module decodes them. JSON.parse
// turns 1.0 and 1e5 into the integers 1 and 100000 and rounds integers
// beyond 2^53, but Masakari's validation messages print the value Python
// holds ("Value: 1.0. 1.0 is not of type 'string'"), so such literals are
// kept as PyFloat / PyBigInt, read from the literal's source text.

import { PyBigInt, PyFloat } from './python-repr.ts';

type Reviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

const keepPythonNumbers: Reviver = (_key, value, context) => {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  const source = context.source;
  if (/[.eE]/.test(source)) return new PyFloat(value);
  if (!Number.isSafeInteger(value)) return new PyBigInt(BigInt(source).toString());
  return value;
};

/** JSON.parse of a request body; throws SyntaxError on malformed text, as JSON.parse does. */
export function parseJsonBody(text: string): unknown {
  return JSON.parse(text, keepPythonNumbers as (key: string, value: unknown) => unknown);
}
