// A LIST answer read one item at a time gives what JSON.parse of the whole
// answer and a map over its items give, for any JSON, and fails as JSON.parse
// fails.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseListKept } from './list-items.ts';
import { prng } from '../domain/testing/fuzz.ts';

type Item = { metadata?: { name?: string }; [k: string]: unknown };

const keepNames = (item: Item) => (item?.metadata?.name?.startsWith('drop') ? undefined : { item });

function whole(text: string) {
  const parsed = JSON.parse(text);
  const items = Array.isArray(parsed?.items) ? parsed.items : [];
  const kept = items.map(keepNames).filter((k: unknown) => k !== undefined);
  return { ...parsed, items: kept };
}

function agrees(text: string, what: string) {
  let expected: unknown;
  let expectedError: unknown;
  try {
    expected = whole(text);
  } catch (e) {
    expectedError = e;
  }
  if (expectedError) {
    assert.throws(() => parseListKept(text, keepNames), SyntaxError, what);
    return;
  }
  assert.equal(parseListKept(text, keepNames), expected, what);
}

test('an API server list answer: items read one by one, the envelope kept, undefined dropped', () => {
  const text = JSON.stringify({
    apiVersion: 'masakari.openkeel.io/v1alpha1',
    items: [
      { metadata: { name: 'a', labels: { x: '}' } }, spec: { payload: { event: 'STOPPED' } } },
      { metadata: { name: 'drop-me' } },
      { metadata: { name: 'b' }, status: { conditions: [{ message: 'quote " and ] and \\ slash' }] } },
    ],
    kind: 'NotificationList',
    metadata: { continue: 'abc', resourceVersion: '42' },
  });
  const list = parseListKept(text, keepNames);
  assert.equal(
    list.items.map((k) => k.item.metadata?.name),
    ['a', 'b'],
  );
  assert.is(list.metadata.continue, 'abc');
  assert.is(list.metadata.resourceVersion, '42');
  assert.is((list as unknown as { kind: string }).kind, 'NotificationList');
  agrees(text, 'api server shape');
});

test('each item is parsed on its own, after the one before it was kept', () => {
  const seen: string[] = [];
  const text = JSON.stringify({ items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }], metadata: {} });
  const original = JSON.parse;
  const parsed: number[] = [];
  JSON.parse = ((t: string, r?: Parameters<typeof JSON.parse>[1]) => {
    parsed.push(t.length);
    return original(t, r);
  }) as typeof JSON.parse;
  try {
    parseListKept(text, (item: Item) => seen.push(`${item.metadata?.name} after ${parsed.length} parses`));
  } finally {
    JSON.parse = original;
  }
  assert.equal(seen, ['a after 1 parses', 'b after 2 parses']);
  assert.ok(Math.max(...parsed) < text.length, 'no parse of the whole answer');
});

test('tricky JSON: key order, spacing, escapes, nesting, a nested "items", repeated or missing items', () => {
  const cases = [
    '{"items":[]}',
    ' { "metadata" : { "continue" : "" } , "items" : [ ] } ',
    '{"kind":"L","items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"1"}}',
    '{"items":[{"a":"\\\\"},{"b":"\\\\\\""},{"c":"\\u005d\\u007d"}]}',
    '{"items":[{"metadata":{"name":"x","items":[1,2,{"items":[]}]}}],"x":{"items":[5]}}',
    '{"items":[1,"two",null,true,false,-3.5e2,[{"n":[]}],{"metadata":{"name":"drop"}}]}',
    '{"items":[{"a":1}],"items":[{"b":2}]}',
    '{"items":null,"metadata":{}}',
    '{"metadata":{}}',
    '{"items":{"not":"an array"}}',
    '\n{\n\t"items": [\n\t\t{"metadata": {"name": "ünïcødé ✓"}}\n\t]\n}\n',
    '{"it\\u0065ms":[{"a":1}]}',
    '[]',
    'null',
  ];
  for (const text of cases) agrees(text, text);
});

test('malformed answers fail as JSON.parse fails', () => {
  for (const text of [
    '',
    '{',
    '{"items":[{"a":1},]}',
    '{"items":[{"a":1}}',
    '{"items":[{"a":"unterminated}]}',
    '{"items":[{"a":1}]} trailing',
    '{"items":[{"a":1}] "b":2}',
    '<html>502 Bad Gateway</html>',
  ]) {
    assert.throws(() => parseListKept(text, keepNames), SyntaxError, text);
  }
});

test('random documents agree with JSON.parse', () => {
  const r = prng(20261202);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const chars = ['a', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'é', '\n', 'items'];
  const str = () => Array.from({ length: Math.floor(r() * 6) }, () => pick(chars)).join('');
  const value = (depth: number): unknown => {
    const roll = r();
    if (depth > 3 || roll < 0.3) return pick([str(), Math.floor(r() * 100), null, true, r() - 0.5]);
    if (roll < 0.6) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let k = Math.floor(r() * 4); k > 0; k--) o[pick([str(), 'items', 'metadata', 'name'])] = value(depth + 1);
    return o;
  };
  for (let n = 0; n < 400; n++) {
    const doc: Record<string, unknown> = {};
    for (let k = Math.floor(r() * 3); k > 0; k--) doc[str()] = value(1);
    doc.items = Array.from({ length: Math.floor(r() * 5) }, () =>
      r() < 0.5 ? { metadata: { name: pick(['a', 'drop', str()]) }, spec: value(1) } : value(1),
    );
    for (let k = Math.floor(r() * 3); k > 0; k--) doc[str()] = value(1);
    const text = JSON.stringify(doc, null, r() < 0.3 ? 2 : undefined);
    agrees(text, text);
  }
});

test.run();
