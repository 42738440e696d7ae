// Components wait for their caches' first sync before they serve, and the
// informers retry that sync for as long as it takes (an API server outage at
// pod start must not leave a pod that never works: it becomes ready once the
// API server is back). The one thing that ends the wait is a shutdown.

/** Resolves once `caches.start()` has; on `signal` (SIGTERM during start-up), stops them, so start() rejects. */
export async function untilSyncedOrShutdown(
  caches: { start(): Promise<void>; stop(): unknown },
  signal: AbortSignal,
): Promise<void> {
  const onAbort = (): void => void caches.stop();
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await caches.start();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
