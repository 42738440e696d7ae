// Small network helpers for end-to-end tests (loopback only).
// Free ports: the one picker, outside the kernel's ephemeral range.
export { freePort } from '../../../tools/controlplane/ports.ts';

/** Polls url until it answers (any status below 500), or throws after timeoutMs. */
export async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status < 500) return;
      last = `status ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last})`);
}
