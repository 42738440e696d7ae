import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejection, thrown } from './expect-error.ts';

class Wanted extends Error {}

test('the error of the wanted class is handed back', async () => {
  const err = new Wanted('w');
  assert.is(await rejection(Promise.reject(err), Wanted), err);
  assert.is(
    thrown(() => {
      throw err;
    }, Wanted),
    err,
  );
});

test('a call that does not fail, or fails with another class, fails the test', async () => {
  // uvu's own assert.throws passes an Assertion on, so the failures are caught here by hand
  const failed = async (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );
  const failedSync = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return undefined;
  };
  const other = new Error('other');
  for (const e of [
    await failed(rejection(Promise.resolve(1), Wanted)),
    await failed(rejection(Promise.reject(other), Wanted)),
    failedSync(() => thrown(() => 1, Wanted)),
    failedSync(() =>
      thrown(() => {
        throw other;
      }, Wanted),
    ),
  ]) {
    assert.instance(e, assert.Assertion);
  }
  assert.match(String(await failed(rejection(Promise.resolve(1), Wanted))), 'expected a Wanted, but it resolved');
  assert.match(String(failedSync(() => thrown(() => 1, Wanted))), 'expected a Wanted, but it returned');
});

test.run();
