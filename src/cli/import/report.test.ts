import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ItemResult } from './execute.ts';
import type { PlanItem } from './plan.ts';
import { NOT_IMPORTED, planReport, renderJson, renderTable, resultReport } from './report.ts';

const items: PlanItem[] = [
  {
    kind: 'segment',
    name: 'seg-a',
    uuid: 'u-seg-a',
    sourceId: 1,
    id: 7,
    action: 'create',
    details: ['id 1 is already used in the namespace: new id 7'],
  },
  {
    kind: 'host',
    name: 'compute-1',
    uuid: 'u-h1',
    segmentName: 'seg-a',
    sourceId: 3,
    id: 3,
    action: 'update',
    details: ['reserved: true -> false'],
  },
  {
    kind: 'host',
    name: 'compute-2',
    uuid: 'u-h2',
    segmentName: 'seg-a',
    sourceId: 4,
    action: 'fail',
    details: [],
    reason: 'invalid record from Masakari: reserved is missing',
  },
  {
    kind: 'segment',
    name: 'local',
    uuid: 'u-local',
    id: 2,
    action: 'leave',
    details: ['only in the namespace, not in Masakari: left alone'],
  },
];

test('the dry-run table shows the plan, the id mapping and what cannot be imported', () => {
  const text = renderTable(planReport({ items }, 'http://m/v1', 'ha'));
  const lines = text.split('\n');
  assert.is(lines[0], 'Plan for importing http://m/v1 into namespace ha (dry run: nothing written)');
  assert.match(lines[2] ?? '', /^KIND +NAME +SEGMENT +UUID +ID +PLAN +DETAIL$/);
  assert.match(text, /segment +seg-a +- +u-seg-a +1->7 +create +id 1 is already used/);
  assert.match(text, /host +compute-2 +seg-a +u-h2 +4 +error +invalid record from Masakari/);
  assert.match(text, /segments: 1 create, 1 leave alone\nhosts {3}: 1 update, 1 error\n/);
  assert.ok(text.includes(NOT_IMPORTED));
  assert.match(text, /1 object\(s\) cannot be imported/);
});

test('the result table and JSON report outcomes and count failures', () => {
  const results: ItemResult[] = [
    { item: items[0] as PlanItem, outcome: 'created', id: 7 },
    { item: items[1] as PlanItem, outcome: 'failed', id: 3, error: 'hahosts/x: 10 conflicting updates' },
    { item: items[2] as PlanItem, outcome: 'failed', error: 'invalid record from Masakari: reserved is missing' },
    { item: items[3] as PlanItem, outcome: 'left alone', id: 2 },
  ];
  const report = resultReport(results, 'http://m/v1', 'ha');
  assert.is(report.failed, 2);
  const text = renderTable(report);
  assert.match(text, /host +compute-1 +seg-a +u-h1 +3 +failed +hahosts\/x: 10 conflicting updates/);
  assert.match(text, /2 object\(s\) failed; see the DETAIL column\. Fix the cause and run the import again/);
  const json = JSON.parse(renderJson(report)) as { summary: unknown; rows: Array<{ id: number | null }> };
  assert.equal(json.summary, { segment: { created: 1, 'left alone': 1 }, host: { failed: 2 } });
  assert.equal(
    json.rows.map((r) => r.id),
    [7, 3, null, 2],
  );
});

test.run();
