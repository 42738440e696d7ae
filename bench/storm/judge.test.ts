import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accepted, MAX_SERVER_ERRORS, serverErrors, stormStopReason } from './judge.ts';

test('serverErrors counts every 5xx and nothing else; accepted counts 202', () => {
  const statuses = { 202: 40, 409: 3, 500: 2, 503: 5, 0: 1 };
  assert.is(serverErrors({ statuses }), 7);
  assert.is(accepted({ statuses }), 40);
  assert.is(accepted({ statuses: {} }), 0);
});

test('stormStopReason stops the storm at the error limit only', () => {
  assert.is(stormStopReason({ 202: 10_000, 500: MAX_SERVER_ERRORS - 1 }), undefined);
  assert.match(stormStopReason({ 500: MAX_SERVER_ERRORS })!, /server errors/);
});

test.run();
