// The highest resourceVersion an informer has seen (its own writes included),
// and the callers waiting for it to reach one: read-your-writes for a cache
// (Informer.waitForResourceVersion, src/store/caches.ts). etcd revisions
// compare as integers (resource-version.ts); a version that does not parse
// is reached only when seen exactly.
import { compareResourceVersions, maxResourceVersion } from './resource-version.ts';

export class VersionWaiters {
  private seenRv: string | undefined;
  private waiters: Array<{ rv: string; resolve: (ok: boolean) => void }> = [];
  private stopped = false;

  get seen(): string | undefined {
    return this.seenRv;
  }

  /** A version seen (from the server or a local write): never moves back. */
  observe(rv: string | undefined): void {
    if (rv === undefined) return;
    this.seenRv = maxResourceVersion(this.seenRv, rv);
    this.wake();
  }

  /** etcd's history went backwards (a restore): start again from `rv`. */
  rewind(rv: string | undefined): void {
    this.seenRv = rv;
    this.wake();
  }

  /** Resolves true once `rv` is reached, false after timeoutMs or on stop. */
  wait(rv: string, timeoutMs: number): Promise<boolean> {
    if (this.reached(rv)) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.waiters) w.resolve(false);
    this.waiters = [];
  }

  private reached(rv: string): boolean {
    const c = compareResourceVersions(this.seenRv, rv);
    return c === 0 || c === 1;
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.reached(w.rv)) w.resolve(true);
      else still.push(w);
    }
    this.waiters = still;
  }
}
