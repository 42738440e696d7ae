import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  e2eRuns,
  extraOverUnfenced,
  fencingLabel,
  formatWrites,
  keepHandWritten,
  median,
  netOfBackground,
  parseFencing,
  summarizeExtras,
  writeVolumeSection,
  writesByResource,
} from './write-volume.ts';
import type { E2eResult, FencingVariant } from './write-volume.ts';

const NONE: FencingVariant = { driver: 'none', failures: 0 };
const REDFISH: FencingVariant = { driver: 'redfish', failures: 0 };

function result(instances: number, fencing: FencingVariant, o: Partial<E2eResult> = {}): E2eResult {
  return {
    instances,
    latencyMs: 200,
    fencing,
    round: 1,
    measuredMs: 5_000,
    evacuateCalls: instances / 2,
    etcd: { dbGrowthBytes: 2 * 2 ** 20, receivedBytes: 100 * 1024, puts: 50 },
    background: { seconds: 10, receivedBytes: 10 * 1024, puts: 5 },
    writes: { notifications: 30, events: 7, leases: 4 },
    notificationBytes: 8 * 1024,
    journalPages: 0,
    journalPageBytes: 0,
    events: 4,
    eventReasons: { Started: 2, Finished: 2 },
    bmcRequests: 0,
    load1: 3.5,
    ...o,
  };
}

test('parseFencing reads none, redfish and redfish:N, and refuses anything else', () => {
  assert.equal(parseFencing('none'), [NONE]);
  assert.equal(parseFencing('none, redfish,redfish:2'), [NONE, REDFISH, { driver: 'redfish', failures: 2 }]);
  for (const bad of ['ipmi', 'none:1', 'redfish:', 'redfish:-1', '']) {
    assert.throws(() => parseFencing(bad), /--fencing/, bad);
  }
});

test('fencingLabel names each variant', () => {
  assert.is(fencingLabel(NONE), 'unfenced');
  assert.is(fencingLabel(REDFISH), 'fenced (Redfish)');
  assert.is(fencingLabel({ driver: 'redfish', failures: 2 }), 'fenced (Redfish), 2 failed power-off(s) first');
});

test('e2eRuns runs every variant of a size and round next to each other, sizes in order', () => {
  const runs = e2eRuns(
    [
      { instances: 10, latencyMs: 2000 },
      { instances: 60, latencyMs: 200 },
    ],
    [NONE, REDFISH],
  );
  assert.equal(
    runs.map((r) => [r.instances, r.latencyMs, r.round, r.fencing.driver]),
    [
      [10, 2000, 1, 'none'],
      [10, 2000, 1, 'redfish'],
      [60, 200, 1, 'none'],
      [60, 200, 1, 'redfish'],
    ],
  );
  const twice = e2eRuns([{ instances: 10, latencyMs: 0 }], [NONE, REDFISH], 2);
  assert.equal(
    twice.map((r) => [r.round, r.fencing.driver]),
    [
      [1, 'none'],
      [1, 'redfish'],
      [2, 'none'],
      [2, 'redfish'],
    ],
  );
});

test('netOfBackground takes the idle rate times the recovery time out, never below 0', () => {
  // 1 KiB/s and 0.5 revisions/s over 5 s.
  assert.equal(netOfBackground(result(10, NONE)), { receivedBytes: 95 * 1024, puts: 47.5 });
  const longer = result(10, NONE, { measuredMs: 20_000 });
  assert.equal(netOfBackground(longer), { receivedBytes: 80 * 1024, puts: 40 });
  const quiet = result(10, NONE, { measuredMs: 1_000_000 });
  assert.equal(netOfBackground(quiet), { receivedBytes: 0, puts: 0 });
  const noWindow = result(10, NONE, { background: { seconds: 0, receivedBytes: 0, puts: 0 } });
  assert.equal(netOfBackground(noWindow), { receivedBytes: 100 * 1024, puts: 50 });
});

test('extraOverUnfenced subtracts the unfenced run of the same size, latency and round, net of background', () => {
  const unfenced10 = result(10, NONE);
  const unfenced60 = result(60, NONE, { etcd: { dbGrowthBytes: 0, receivedBytes: 0, puts: 0 } });
  const fenced10 = result(10, REDFISH, {
    etcd: { dbGrowthBytes: 2 * 2 ** 20, receivedBytes: 110 * 1024, puts: 53 },
    notificationBytes: 9 * 1024,
    events: 5,
    writes: { notifications: 31, events: 9, leases: 4, secrets: 1 },
  });
  const all = [unfenced60, unfenced10, fenced10];
  assert.equal(extraOverUnfenced(fenced10, all), {
    receivedBytes: 10 * 1024,
    puts: 3,
    keptBytes: 1024,
    events: 1,
    writes: { notifications: 1, events: 2, leases: 0, secrets: 1 },
  });
  // 10 s longer at the same background rate: 10 KiB and 5 revisions of it are background.
  const slower = { ...fenced10, measuredMs: 15_000 };
  assert.equal(extraOverUnfenced(slower, all)?.receivedBytes, 0);
  assert.equal(extraOverUnfenced(slower, all)?.puts, -2);
  const spilled = { ...fenced10, notificationBytes: 2 * 1024, journalPages: 1, journalPageBytes: 20 * 1024 };
  assert.is(extraOverUnfenced(spilled, all)?.keptBytes, 14 * 1024, 'a page counts with its Notification');
  assert.is(extraOverUnfenced(unfenced10, all), undefined, 'an unfenced row has no extra');
  assert.is(extraOverUnfenced(fenced10, [fenced10]), undefined, 'no unfenced row of its size');
  const otherLatency = result(10, NONE, { latencyMs: 0 });
  assert.is(extraOverUnfenced(fenced10, [otherLatency, fenced10]), undefined, 'another latency is another size');
  const round2 = result(10, NONE, { round: 2, etcd: { dbGrowthBytes: 0, receivedBytes: 0, puts: 0 } });
  assert.is(extraOverUnfenced(fenced10, [round2, unfenced10, fenced10])?.puts, 3, 'the unfenced run of its own round');
  assert.is(extraOverUnfenced({ ...fenced10, round: 2 }, all), undefined, 'no unfenced run in its round');
});

test('writesByResource sums the write verbs of each resource between two readings, reads left out', () => {
  const before = new Map([
    ['PATCH notifications', 10],
    ['LIST notifications', 5],
    ['POST events', 2],
  ]);
  const after = new Map([
    ['PATCH notifications', 14],
    ['PUT notifications', 3],
    ['LIST notifications', 50],
    ['WATCH hahosts', 1],
    ['POST events', 4],
    ['DELETE configmaps', 1],
    ['APPLY leases', 0],
  ]);
  assert.equal(writesByResource(before, after), { notifications: 7, events: 2, configmaps: 1 });
});

test('formatWrites lists the largest first, names break ties, an extra is signed', () => {
  assert.is(formatWrites({ events: 9, notifications: 31, configmaps: 9 }), 'notifications 31, configmaps 9, events 9');
  assert.is(formatWrites({ events: 2, leases: 0, notifications: -1 }, true), 'events +2, notifications -1');
  assert.is(formatWrites({ notifications: 1.5 }, true), 'notifications +1.5');
  assert.is(formatWrites({}), '0');
  assert.is(formatWrites({ leases: 0 }, true), '±0');
});

test('median of odd and even counts, whatever the order', () => {
  assert.is(median([3]), 3);
  assert.is(median([5, 1, 3]), 3);
  assert.is(median([4, 1, 3, 2]), 2.5);
  assert.is(median([-2, 7]), 2.5);
});

test('summarizeExtras gives the median extra per size and fenced variant over the rounds', () => {
  const FAILING: FencingVariant = { driver: 'redfish', failures: 2 };
  const runs: E2eResult[] = [];
  for (const [round, fencedPuts, failingPuts] of [
    [1, 51, 70],
    [2, 60, 72],
    [3, 49, 90],
  ] as const) {
    runs.push(result(10, NONE, { round }));
    runs.push(
      result(10, REDFISH, {
        round,
        etcd: { dbGrowthBytes: 0, receivedBytes: 100 * 1024, puts: fencedPuts },
        writes: { notifications: 30 + round, events: 9, leases: 4 },
      }),
    );
    runs.push(result(10, FAILING, { round, etcd: { dbGrowthBytes: 0, receivedBytes: 100 * 1024, puts: failingPuts } }));
  }
  runs.push(result(60, NONE), result(60, REDFISH, { events: 6 }));
  const summary = summarizeExtras(runs);
  assert.equal(
    summary.map((x) => [x.instances, x.fencing.failures, x.rounds, x.median.puts, x.median.events]),
    [
      [10, 0, 3, 1, 0],
      [10, 2, 3, 22, 0],
      [60, 0, 1, 0, 2],
    ],
  );
  assert.equal(summary[0]?.median.writes, { notifications: 2, events: 2, leases: 0 });
  assert.equal(summarizeExtras([result(10, NONE)]), [], 'no fenced runs, no summary');
});

test('writeVolumeSection has the median table, a row per run with its extra, commit and load in the text', () => {
  const section = writeVolumeSection(
    [
      result(10, NONE),
      result(10, REDFISH, {
        etcd: { dbGrowthBytes: 2 * 2 ** 20, receivedBytes: 112 * 1024, puts: 53 },
        notificationBytes: 7 * 1024,
        journalPages: 1,
        journalPageBytes: 2 * 1024,
        events: 5,
        bmcRequests: 3,
        writes: { notifications: 31, events: 9, leases: 4 },
        load1: 4.25,
      }),
    ],
    {
      when: new Date('2026-12-05T02:00:00Z'),
      revision: 'abc1234',
      loadAtStart: 2.5,
      args: '--mode e2e --section write-volume --fencing none,redfish',
    },
  );
  assert.ok(section.startsWith('## Journal write volume\n'));
  assert.match(section, 'bench/recovery/run.ts --mode e2e --section write-volume --fencing none,redfish`');
  assert.match(section, '(commit abc1234, 2026-12-05 02:00 UTC');
  assert.match(section, 'load average 2.5 at the start and 3.5–4.3 at the end');
  const rows = section.split('\n').filter((l) => /^\| \d/.test(l));
  assert.equal(rows, [
    '| 10 | 0.2 | fenced (Redfish) | 1 | +12.0 | +3 | +1.0 | +1 | events +2, notifications +1 |',
    '| 10 | 0.2 | 1 | unfenced | 5.0 | 3.5 | 2.00 | 100.0 | 50 | 1.0 / 0.5 | 95.0 | 48 | 8.0 | 0 | 4 | 0 | notifications 30, events 7, leases 4 | — | — | — | — | — |',
    '| 10 | 0.2 | 1 | fenced (Redfish) | 5.0 | 4.3 | 2.00 | 112.0 | 53 | 1.0 / 0.5 | 107.0 | 51 | 7.0 | 1 (2.0 KiB) | 5 | 3 | notifications 31, events 9, leases 4 | +12.0 | +3 | +1.0 | +1 | events +2, notifications +1 |',
  ]);
  assert.not.match(section, '### ');
});

test('keepHandWritten keeps the hand-written part of the section it replaces (from its first ###), and only that', () => {
  const previous =
    '## Journal write volume\n\nold intro\n\n| old | table |\n\n### Reading\n\nmine\n\n### Earlier measurements\n\nhistory\n';
  assert.is(
    keepHandWritten('## Journal write volume\n\nnew\n', previous),
    '## Journal write volume\n\nnew\n\n### Reading\n\nmine\n\n### Earlier measurements\n\nhistory\n',
  );
  assert.is(
    keepHandWritten('## Journal write volume\n\nnew\n', '## Journal write volume\n\nold\n'),
    '## Journal write volume\n\nnew\n',
  );
  assert.is(keepHandWritten('## Journal write volume\n\nnew\n', undefined), '## Journal write volume\n\nnew\n');
});

test.run();
