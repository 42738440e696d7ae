// Reads a LIST answer one item at a time: each item is parsed, handed to
// `keep` and dropped before the next is parsed.
//
// Why not JSON.parse of the whole page: a page of 500 notifications is 1-2
// MB of text and several MB of objects (managedFields and all), all alive
// together until the last item is reduced, and the caller's async paging loop
// may keep the last page reachable while the next request is in flight. Read
// this way, one full object at a time is alive, whatever the page size.
// The gain is small and measured in docs/benchmarks.md ("Scale"): the api's
// peak is set by what it keeps, not by the pages.
//
// The scanner only finds where the top-level "items" array and each of its
// elements start and end (strings skipped with their escapes); JSON.parse
// still reads every value. Anything it does not recognise falls back to one
// JSON.parse of the whole text, so a malformed answer fails exactly as before.
import type { KubeList } from './client.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string starting at `i` (a quote), or -1. */
function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index after the JSON value starting at `i` (not a space), or -1. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === QUOTE) {
        j = skipString(text, j) - 1;
        if (j < 0) return -1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number or a literal: up to the next delimiter.
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    j++;
  }
  return j > i ? j : -1;
}

/**
 * Calls `each` with the text span of every element of the array starting at
 * `i` (a bracket); returns the index after the array, or -1.
 */
function forEachElement(text: string, i: number, each: (start: number, end: number) => void): number {
  let j = skipSpace(text, i + 1);
  if (text.charCodeAt(j) === CLOSE_BRACKET) return j + 1;
  for (;;) {
    const end = skipValue(text, j);
    if (end < 0) return -1;
    each(j, end);
    j = skipSpace(text, end);
    const c = text.charCodeAt(j);
    if (c === CLOSE_BRACKET) return j + 1;
    if (c !== COMMA) return -1;
    j = skipSpace(text, j + 1);
  }
}

/** `keep` applied to each item; the items it returns undefined for are dropped. */
export function keepAll<T, U>(items: T[], keep: (item: T) => U | undefined): U[] {
  const kept: U[] = [];
  for (const item of items) {
    const k = keep(item);
    if (k !== undefined) kept.push(k);
  }
  return kept;
}

/**
 * A LIST answer with `keep` applied to each item as it is parsed (undefined
 * drops the item). Throws SyntaxError for text that is not JSON, as
 * JSON.parse does.
 */
export function parseListKept<T, U>(text: string, keep: (item: T) => U | undefined): KubeList<U> {
  const kept: U[] = [];
  const add = (item: T) => {
    const k = keep(item);
    if (k !== undefined) kept.push(k);
  };
  const span = scanItems(text, (start, end) => add(JSON.parse(text.slice(start, end)) as T));
  if (!span) {
    // Not the shape expected (or not JSON): one parse, which throws if it must.
    const whole = JSON.parse(text) as KubeList<T>;
    return { ...whole, items: keepAll(Array.isArray(whole?.items) ? whole.items : [], keep) };
  }
  const envelope = JSON.parse(text.slice(0, span.start) + '[]' + text.slice(span.end)) as KubeList<U>;
  envelope.items = kept;
  return envelope;
}

/**
 * Finds the top-level "items" array of a JSON object and hands each element's
 * span to `each`; its own span, or undefined when the text is not an object
 * with an "items" array, or is malformed where the scanner looked.
 */
function scanItems(
  text: string,
  each: (start: number, end: number) => void,
): { start: number; end: number } | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipSpace(text, i + 1);
  let found: { start: number; end: number } | undefined;
  while (text.charCodeAt(i) !== CLOSE_BRACE) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const key = text.slice(i, keyEnd);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = skipSpace(text, i + 1);
    let end: number;
    // A repeated "items" (JSON.parse keeps the last) is left to the fallback.
    if (key === '"items"' && found) return undefined;
    if (key === '"items"' && text.charCodeAt(i) === OPEN_BRACKET) {
      end = forEachElement(text, i, each);
      if (end < 0) return undefined;
      found = { start: i, end };
    } else {
      end = skipValue(text, i);
      if (end < 0) return undefined;
    }
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === COMMA) i = skipSpace(text, i + 1);
    else if (text.charCodeAt(i) !== CLOSE_BRACE) return undefined;
  }
  // Only whitespace may follow the object.
  if (skipSpace(text, i + 1) !== text.length) return undefined;
  return found;
}
