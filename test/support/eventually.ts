// Polling for asynchronous effects (reconcilers, the engine, watches).

/**
 * Polls `probe` until `ok(value)` holds and returns that value; after
 * timeoutMs fails with what it saw last, so a failing test says why.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!ok(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
    last = await probe();
  }
  return last;
}
