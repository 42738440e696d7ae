import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeError } from './client.ts';
import { backoffDelays, CONFLICT_BACKOFF, lostRace, retryOnConflict, retryOnConflictOr } from './retry-on-conflict.ts';

const conflict = () => new KubeError(409, 'Conflict', 'the object has been modified');
const recordSleeps = () => {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms: number) => void sleeps.push(ms) };
};

test('a conflict is retried after a delay until fn succeeds', async () => {
  const { sleeps, sleep } = recordSleeps();
  let runs = 0;
  const got = await retryOnConflict(
    CONFLICT_BACKOFF,
    async (attempt) => {
      runs++;
      if (attempt < 3) throw conflict();
      return 'written';
    },
    { sleep, random: () => 0 },
  );
  assert.is(got, 'written');
  assert.is(runs, 3);
  assert.equal(sleeps, [5, 10]);
});

test('after backoff.steps runs the last conflict is thrown, as client-go returns it', async () => {
  const { sleeps, sleep } = recordSleeps();
  let runs = 0;
  const last = conflict();
  const err = await retryOnConflict(
    CONFLICT_BACKOFF,
    async () => {
      runs++;
      throw runs === CONFLICT_BACKOFF.steps ? last : conflict();
    },
    { sleep },
  ).catch((e: unknown) => e);
  assert.is(err, last);
  assert.is(runs, CONFLICT_BACKOFF.steps);
  assert.is(sleeps.length, CONFLICT_BACKOFF.steps - 1);
});

test('any other error, AlreadyExists included, ends the loop at once', async () => {
  for (const e of [new KubeError(409, 'AlreadyExists', 'taken'), new KubeError(500, 'InternalError', 'x')]) {
    let runs = 0;
    const err = await retryOnConflict(CONFLICT_BACKOFF, async () => {
      runs++;
      throw e;
    }).catch((x: unknown) => x);
    assert.is(err, e);
    assert.is(runs, 1);
  }
});

test('lostRace is retried like a 409 from the API server', async () => {
  let runs = 0;
  await retryOnConflict(
    CONFLICT_BACKOFF,
    async () => {
      if (++runs === 1) throw lostRace('claim vanished between create and read');
    },
    { sleep: async () => {} },
  );
  assert.is(runs, 2);
});

test('retryOnConflictOr turns the exhausted conflict into the caller’s error and passes others through', async () => {
  const opts = { sleep: async () => {} };
  const exhausted = await retryOnConflictOr(
    { ...CONFLICT_BACKOFF, steps: 2 },
    async () => {
      throw conflict();
    },
    (last) => new Error(`gave up: ${(last as Error).message}`),
    opts,
  ).catch((e: Error) => e.message);
  assert.is(exhausted, 'gave up: the object has been modified');
  const other = new KubeError(404, 'NotFound', 'gone');
  const passed = await retryOnConflictOr(
    CONFLICT_BACKOFF,
    async () => {
      throw other;
    },
    () => new Error('no'),
    opts,
  ).catch((e: unknown) => e);
  assert.is(passed, other);
});

test('the delays double from delayMs up to capMs, each stretched by up to jitter', () => {
  assert.equal(
    backoffDelays(CONFLICT_BACKOFF, () => 0),
    [5, 10, 20, 40, 80, 160, 320, 500, 500],
  );
  assert.equal(
    backoffDelays(CONFLICT_BACKOFF, () => 0.999999),
    [10, 20, 40, 80, 160, 320, 640, 1000, 1000],
  );
  const total = backoffDelays(CONFLICT_BACKOFF, () => 0.999999).reduce((a, b) => a + b, 0);
  assert.ok(total <= 3300, `at most about 3.3 s of waiting, got ${total}`);
});

test.run();
