import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { NotificationStatusBlock, VMoveRecord } from '../../model/types.ts';
import { assembleStatus } from '../../store/journal-pages.ts';
import type { JournalPage } from '../../store/journal-pages.ts';
import { jsonBytes, spill, storedStatus } from './budget.ts';
import type { StatusBudget } from './budget.ts';

const BUDGET: StatusBudget = { maxObjectBytes: 4_000, targetObjectBytes: 1_000, maxPageBytes: 3_000 };

const vmove = (i: number, status: VMoveRecord['status'] = 'succeeded'): VMoveRecord => ({
  id: i + 1,
  uuid: `vm-${i}`,
  instanceUuid: `server-${i}`,
  instanceName: `s${i}`,
  sourceHost: 'compute-0',
  destHost: status === 'succeeded' ? 'compute-1' : null,
  startTime: null,
  endTime: null,
  type: 'evacuation',
  status,
  message: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: null,
  run: 0,
});

function whole(n: number): NotificationStatusBlock {
  return {
    phase: 'running',
    runs: 1,
    recoveryWorkflowDetails: [
      {
        name: 'EvacuateInstancesTask',
        progress: 0.5,
        state: 'RUNNING',
        run: 0,
        progressDetails: Array.from({ length: n }, (_, i) => ({
          timestamp: '2026-01-01 00:00:00.000000',
          progress: '0.5',
          message: `Evacuation of instance started: 'server-${i}'`,
        })),
      },
    ],
    vmoves: Array.from({ length: n }, (_, i) => vmove(i, i < n - 3 ? 'succeeded' : 'ongoing')),
    engine: {
      owner: 'me',
      effects: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [
          `evacuate:server-${i}`,
          { state: 'done', at: 'x', seq: i, data: { target: null } },
        ]),
      ),
    },
  };
}

/** Spills until under budget, as the status writer does write after write; returns the stored status and pages. */
function store(status: NotificationStatusBlock, pages: JournalPage[]) {
  const r = spill(storedStatus(status, pages), 200, BUDGET);
  return { stored: r.status, pages: [...pages, ...r.pages] };
}

test('a status over budget moves its settled history into pages and assembles back to the same whole', () => {
  const w = whole(60);
  assert.ok(jsonBytes(w) > BUDGET.maxObjectBytes);
  const { stored, pages } = store(w, []);
  assert.ok(pages.length >= 2, 'history was split into pages of bounded size');
  for (const p of pages) assert.ok(jsonBytes(p) <= BUDGET.maxPageBytes + 400);
  assert.ok(200 + jsonBytes(stored) <= BUDGET.targetObjectBytes + 400, `stored ${jsonBytes(stored)} bytes`);
  assert.equal(assembleStatus(stored, pages), { ...w, engine: { ...w.engine, journalPages: pages.length } });
  // nulls survive the round trip (they live in pages as JSON)
  assert.equal(
    (assembleStatus(stored, pages)?.engine as { effects: Record<string, { data: unknown }> }).effects[
      'evacuate:server-0'
    ]?.data,
    { target: null },
  );
});

test('unsettled vmoves stay in the status; a changed move overrides its page copy; order is kept', () => {
  const w = whole(60);
  const first = store(w, []);
  const ongoing = first.stored.vmoves?.map((v) => v.uuid) ?? [];
  assert.ok(ongoing.includes('vm-59'), 'the ongoing moves are still in the status');
  // the engine changes a move a page already holds, and adds lines
  const next = assembleStatus(first.stored, first.pages) as NotificationStatusBlock;
  const changed = structuredClone(next);
  (changed.vmoves as VMoveRecord[])[0] = { ...vmove(0), status: 'pending', destHost: null };
  changed.recoveryWorkflowDetails?.[0]?.progressDetails.push({ timestamp: 't', progress: '0.7', message: 'more' });
  const second = store(changed, first.pages);
  const back = assembleStatus(second.stored, second.pages) as NotificationStatusBlock;
  assert.equal(back.vmoves?.[0]?.status, 'pending');
  assert.equal(
    back.vmoves?.map((v) => v.uuid),
    w.vmoves?.map((v) => v.uuid),
  );
  const lines = back.recoveryWorkflowDetails?.[0]?.progressDetails ?? [];
  assert.is(lines.length, 61);
  assert.is(lines.at(-1)?.message, 'more');
  assert.is(lines[0]?.message, "Evacuation of instance started: 'server-0'");
});

test('under budget nothing moves and the status is stored as is', () => {
  const w = whole(2);
  const r = spill(storedStatus(w, []), 200, BUDGET);
  assert.is(r.pages.length, 0);
  assert.is(r.status, w);
});

test.run();
