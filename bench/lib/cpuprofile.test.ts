import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { frameCosts } from './cpuprofile.ts';

const frame = (id: number, functionName: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url: 'file:///x/dist/src/a.js', lineNumber: functionName.length },
  children,
});

test('self time goes to the sampled frame, inclusive time to each frame on its stack once (recursion too)', () => {
  // root → outer → inner → outer (recursion); samples: inner, outer (the recursive one), root.
  const profile = {
    nodes: [frame(1, '(root)', [2]), frame(2, 'outer', [3]), frame(3, 'inner', [4]), frame(4, 'outer')],
    samples: [3, 4, 1],
    timeDeltas: [0, 1000, 2000, 4000],
    startTime: 0,
    endTime: 7000,
  };
  const byName = (by: 'selfMs' | 'totalMs') =>
    Object.fromEntries(frameCosts(profile, by).map((f) => [f.frame.split(' ')[0], [f.selfMs, f.totalMs]]));
  const costs = byName('totalMs');
  assert.equal(costs['inner'], [1, 3], 'inner: sampled once (1 ms), on the stack of two samples');
  assert.equal(costs['outer'], [2, 3], 'outer: counted once per sample even when it recurses');
  assert.equal(costs['(root)'], [4, 7]);
  assert.is(frameCosts(profile, 'selfMs')[0]!.frame.split(' ')[0], '(root)', 'heaviest first');
});

test.run();
