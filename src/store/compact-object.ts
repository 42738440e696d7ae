// Plain objects as small as V8 makes them. An object literal written in code
// gets exactly its properties in the object itself; an object built by spread,
// rest destructuring or assignment starts with room for four and keeps the
// rest in a second array, a few words more each. The caches hold several
// objects per notification, so that grows with the stored notifications
// (docs/benchmarks.md, "Scale").
//
// compact() copies an object through a literal made once per set of keys:
// same keys, same order, same values, a plain object (deep-equal to the
// input, prototype Object.prototype).

/** Shapes kept; beyond this, objects are returned as they are (a cache of the cache's shapes, not of its data). */
const SHAPE_LIMIT = 256;
/** Longer objects gain little and would make long functions. */
const KEY_LIMIT = 32;

type Copier = (o: Record<string, unknown>) => Record<string, unknown>;
const copiers = new Map<string, Copier>();
/** False once code generation was refused (node --disallow-code-generation-from-strings): objects stay as built. */
let canGenerate = true;

function copierFor(keys: string[]): Copier | undefined {
  const signature = keys.join('\u0000');
  let copier = copiers.get(signature);
  if (copier) return copier;
  if (!canGenerate || copiers.size >= SHAPE_LIMIT) return undefined;
  // Keys are quoted with JSON.stringify, so any key is a string literal
  // here, never code. A quoted "__proto__" in a literal would set the
  // prototype instead of a property, so objects with that key are not copied.
  const fields = keys.map((k) => `${JSON.stringify(k)}: o[${JSON.stringify(k)}]`).join(',\n');
  try {
    copier = new Function('o', `return {\n${fields}\n};`) as Copier;
  } catch {
    canGenerate = false; // EvalError: the process forbids it; a few bytes per object are not worth more
    return undefined;
  }
  copiers.set(signature, copier);
  return copier;
}

/** `o` as a literal-built copy (see the header), or `o` itself when it is not worth it or cannot be. */
export function compact<T extends object>(o: T): T {
  const keys = Object.keys(o);
  if (keys.length <= 4 || keys.length > KEY_LIMIT || keys.includes('__proto__')) return o;
  const copier = copierFor(keys);
  return copier ? (copier(o as Record<string, unknown>) as T) : o;
}
