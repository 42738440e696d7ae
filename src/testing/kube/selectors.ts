// Label and field selectors as the API server evaluates them, for FakeKube's
// list and watch. Labels: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`,
// `a notin (x,y)` (k8s.io/apimachinery/pkg/labels). Fields: `path=v`,
// `path==v`, `path!=v` over a dotted path such as status.phase or
// metadata.name (k8s.io/apimachinery/pkg/fields); a missing field reads as ''.
import { KubeError } from '../../k8s/client.ts';

type Matcher = (read: (key: string) => string | undefined) => boolean;

/** Splits on commas outside parentheses ("a in (x,y),b" is two terms). */
function terms(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter(Boolean);
}

function labelTerm(term: string): Matcher {
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = list.split(',').map((v) => v.trim());
    return (read) => {
      const v = read(key);
      return op === 'in' ? v !== undefined && values.includes(v) : v === undefined || !values.includes(v);
    };
  }
  const cmp = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (cmp) {
    const [, key = '', op, value] = cmp;
    return (read) => (op === '!=' ? read(key) !== value : read(key) === value);
  }
  if (/^![^!=\s]+$/.test(term)) return (read) => read(term.slice(1)) === undefined;
  if (/^[^!=\s]+$/.test(term)) return (read) => read(term) !== undefined;
  throw new KubeError(400, 'BadRequest', `unable to parse requirement: "${term}"`);
}

function fieldTerm(term: string): Matcher {
  const cmp = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (!cmp) throw new KubeError(400, 'BadRequest', `invalid field selector: "${term}"`);
  const [, key = '', op, value] = cmp;
  return (read) => (op === '!=' ? (read(key) ?? '') !== value : (read(key) ?? '') === value);
}

function fieldValue(obj: unknown, path: string): string | undefined {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur === undefined || cur === null ? undefined : String(cur);
}

/** A predicate for objects matching both selectors (either may be empty); a malformed one is a 400. */
export function selectorMatcher(labelSelector = '', fieldSelector = ''): (obj: unknown) => boolean {
  const labels = terms(labelSelector).map(labelTerm);
  const fields = terms(fieldSelector).map(fieldTerm);
  return (obj) => {
    const objLabels = (obj as { metadata?: { labels?: Record<string, string> } }).metadata?.labels ?? {};
    return labels.every((m) => m((k) => objLabels[k])) && fields.every((m) => m((path) => fieldValue(obj, path)));
  };
}
