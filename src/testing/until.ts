// Polling for an asynchronous effect in a unit test (a watch event reaching a
// cache, a retry loop coming round): resolves once cond holds, fails after ms.
export async function until(cond: () => boolean | Promise<boolean>, ms = 2000, intervalMs = 2): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
