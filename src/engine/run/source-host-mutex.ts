// Per-source-host serialisation inside the leader: Masakari's in-process lock
// `masakari-<source_host_uuid>` (engine/manager.py), without blocking a
// worker. A notification that finds its host busy parks its key; releasing
// the host hands back every parked key so the controller re-enqueues them.

export class SourceHostMutex {
  private readonly holders = new Map<string, string>();
  private readonly parked = new Map<string, Set<string>>();

  /** True when `key` now holds `host` (or already did); otherwise the key is parked. */
  tryAcquire(host: string, key: string): boolean {
    const holder = this.holders.get(host);
    if (holder === undefined || holder === key) {
      this.holders.set(host, key);
      return true;
    }
    let set = this.parked.get(host);
    if (!set) this.parked.set(host, (set = new Set()));
    set.add(key);
    return false;
  }

  /** Releases `host` if `key` holds it; returns the keys that were waiting for it. */
  release(host: string, key: string): string[] {
    if (this.holders.get(host) !== key) return [];
    this.holders.delete(host);
    const waiting = [...(this.parked.get(host) ?? [])];
    this.parked.delete(host);
    return waiting;
  }

  holder(host: string): string | undefined {
    return this.holders.get(host);
  }

  /** Forgets everything (leadership lost: the next leader starts from the stored state). */
  clear(): void {
    this.holders.clear();
    this.parked.clear();
  }
}
