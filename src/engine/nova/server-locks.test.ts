import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Notification } from '../../model/types.ts';
import { NovaError } from '../../openstack/types.ts';
import { sweepLeftoverServerLocks, UNLOCK_ATTEMPTS, unlockWithRetry, unreleasedServerLocks } from './server-locks.ts';
import { FakeClock } from '../../testing/fake-clock.ts';
import type { EffectRecord } from '../status/writer.ts';
import { FakeNova, makeServer } from '../../testing/fake-nova.ts';
import { notification, quietLog } from '../testing/fixtures.ts';

const withEffects = (effects: Record<string, EffectRecord>): Notification => {
  const n = notification('n', 'COMPUTE_HOST', {});
  return { ...n, status: { ...n.status, engine: { effects } } };
};
const rec = (state: EffectRecord['state'], seq: number): EffectRecord => ({ state, seq, at: 't' });

test('a lock still intended is unreleased unless a newer unlock record is done', () => {
  const n = withEffects({
    'lock:a': rec('intended', 1),
    'lock:b': rec('done', 2),
    'lock:c': rec('intended', 3),
    'unlock:c': rec('done', 4),
    'lock:d': rec('intended', 6),
    'unlock:d': rec('done', 5),
    'evacuate:a': rec('intended', 7),
  });
  assert.equal(unreleasedServerLocks(n), ['a', 'd']);
});

test('the sweep unlocks only servers Nova still shows locked, retries, and reports what still fails without throwing', async () => {
  const nova = new FakeNova();
  nova.addServer(makeServer('a', { locked: true }));
  nova.addServer(makeServer('b', { locked: false }));
  nova.addServer(makeServer('c', { locked: true }));
  const recorded: string[] = [];
  nova.failNext('unlockServer', new NovaError(503, 'busy'));
  nova.fault = (method, args) => (method === 'unlockServer' && args[0] === 'a' ? new NovaError(500, 'no') : undefined);
  const n = withEffects({
    'lock:a': rec('intended', 1),
    'lock:b': rec('intended', 2),
    'lock:c': rec('intended', 3),
    'lock:gone': rec('intended', 4),
  });
  const clock = new FakeClock();
  const r = await sweepLeftoverServerLocks(n, nova, async (s) => void recorded.push(s), quietLog, {
    requestId: 'r',
    signal: new AbortController().signal,
    clock,
  });
  assert.equal(
    r.failed.map((f) => f.server),
    ['a'],
  );
  assert.equal(r.unlocked, ['c']);
  assert.equal(r.alreadyUnlocked, ['b', 'gone']);
  assert.equal(recorded, ['b', 'c', 'gone']);
  assert.is(nova.servers.get('a')?.locked, true);
  assert.is(nova.calls.filter((c) => c.method === 'unlockServer' && c.args[0] === 'a').length, UNLOCK_ATTEMPTS);
  assert.is(clock.sleeps.length, UNLOCK_ATTEMPTS - 1);
  assert.ok(
    clock.sleeps.every((ms) => ms <= 5_000),
    'backoff is capped',
  );
});

test('unlockWithRetry stops once the run is cancelled', async () => {
  const nova = new FakeNova();
  nova.addServer(makeServer('a', { locked: true }));
  const abort = new AbortController();
  nova.fault = (method) => {
    if (method !== 'unlockServer') return undefined;
    abort.abort(new Error('cancelled'));
    return new NovaError(500, 'no');
  };
  await unlockWithRetry(nova, 'a', new FakeClock(), { requestId: 'r', signal: abort.signal }).then(
    () => assert.unreachable('resolved'),
    (err: Error) => assert.is(err.message, 'no'),
  );
  assert.is(nova.count('unlockServer'), 1);
});

test("lease fencing per HTTP attempt: the cleanup unlock ends with the run's signal, not only its own timeout", async () => {
  const nova = new FakeNova();
  nova.addServer(makeServer('a', { locked: true }));
  const run = new AbortController();
  let attemptSignal: AbortSignal | undefined;
  nova.unlockServer = (_id, o) => {
    attemptSignal = o?.signal;
    return new Promise((_, reject) => o?.signal?.addEventListener('abort', () => reject(o.signal!.reason)));
  };
  const pending = unlockWithRetry(nova, 'a', new FakeClock(), { requestId: 'r', signal: run.signal });
  run.abort(new Error('lease lost'));
  const err = await pending.catch((e: unknown) => e);
  assert.is((err as Error).message, 'lease lost');
  assert.ok(attemptSignal?.aborted);
});

test.run();
