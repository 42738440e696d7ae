import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { compactHeap } from './heap-compaction.ts';

test('compacting the heap frees garbage the ordinary collections have not reached yet', async () => {
  // Garbage old enough to have been promoted: kept across a few turns of the event loop, then dropped.
  let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, text: `item ${i}` }));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const before = process.memoryUsage().heapUsed;
  assert.ok(garbage.length);
  garbage = undefined;
  const result = await compactHeap(pino({ level: 'silent' }));
  assert.ok(result, 'the inspector is available');
  assert.ok(result.ms >= 0);
  assert.ok(
    process.memoryUsage().heapUsed < before - 5 * 1048576,
    'at least the 200,000 dropped objects are gone from the heap',
  );
});

test.run();
