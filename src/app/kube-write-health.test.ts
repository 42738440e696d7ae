import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeWriteHealth } from './kube-write-health.ts';

test('writes failing with none succeeding make the process unready after the threshold; reads do not count', () => {
  let now = 0;
  const h = new KubeWriteHealth(() => now, 30_000);
  assert.ok(h.ready());
  h.observe({ method: 'POST', code: 0 });
  now = 10_000;
  h.observe({ method: 'GET', code: 200 });
  h.observe({ method: 'PATCH', code: 504 });
  assert.is(h.failingForMs(), 10_000, 'timed from the first failure');
  now = 29_999;
  assert.ok(h.ready());
  now = 30_000;
  assert.not.ok(h.ready());
  h.observe({ method: 'DELETE', code: 404 });
  assert.ok(h.ready(), 'any answer a working API server decides ends it');
  assert.is(h.failingForMs(), 0);
});

test('500, 503 and 504 count as not committed; 409, 422 and 429 are answers', () => {
  for (const code of [500, 503, 504]) {
    let now = 0;
    const h = new KubeWriteHealth(() => now, 1);
    h.observe({ method: 'PUT', code });
    now = 5;
    assert.not.ok(h.ready(), String(code));
  }
  for (const code of [409, 422, 429]) {
    let now = 0;
    const h = new KubeWriteHealth(() => now, 1);
    h.observe({ method: 'PUT', code });
    now = 5;
    assert.ok(h.ready(), String(code));
  }
});

test.run();
