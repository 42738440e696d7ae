// A test that wants a call to fail, and then looks at the error: the
// try / catch / instance check / "it did not fail" dance in one place.

import * as assert from 'uvu/assert';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** The error p rejects with, asserted to be a `type`; the test fails when p resolves. */
export async function rejection<E>(p: Promise<unknown>, type: ErrorClass<E>): Promise<E> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, type);
    return err as E;
  }
  throw notThrown(type, 'resolved');
}

/** The error fn throws, asserted to be a `type`; the test fails when fn returns. */
export function thrown<E>(fn: () => unknown, type: ErrorClass<E>): E {
  try {
    fn();
  } catch (err) {
    assert.instance(err, type);
    return err as E;
  }
  throw notThrown(type, 'returned');
}

function notThrown(type: { name: string }, what: string): assert.Assertion {
  return new assert.Assertion({
    message: `expected a ${type.name}, but it ${what}`,
    operator: 'unreachable',
    expects: type.name,
    actual: what,
  });
}
