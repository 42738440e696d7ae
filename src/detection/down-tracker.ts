// Since when each watched host has been seen down, and which ones were
// already raised, across looks. A host's grace period starts at the first
// look that saw it down and ends with the first look that saw it up; a blind
// look (observation problem) forgets everything, so a host that was down
// during the blind period starts its grace period afresh once looks can be
// trusted again: what was seen before the blindness may be what caused it.
import type { HostState, WatchedHost } from './observe.ts';

interface Down {
  sinceMs: number;
  /** Raised (or found already handled): not raised again until it has been seen up. */
  handled: boolean;
}

export interface Due {
  host: string;
  why: string;
  downForSeconds: number;
}

export class DownTracker {
  private readonly down = new Map<string, Down>();

  /** Records one trusted look; returns the hosts whose grace period has run out and are not handled yet. */
  observe(nowMs: number, hosts: readonly WatchedHost[], states: ReadonlyMap<string, HostState>): Due[] {
    const due: Due[] = [];
    const watched = new Set<string>();
    for (const h of hosts) {
      watched.add(h.name);
      const st = states.get(h.name);
      if (st?.state !== 'down') {
        // Up forgets the host; unknown (no service listed) neither starts nor ends a grace period.
        if (st?.state === 'up') this.down.delete(h.name);
        continue;
      }
      let d = this.down.get(h.name);
      if (!d) {
        d = { sinceMs: nowMs, handled: false };
        this.down.set(h.name, d);
      }
      const downForMs = nowMs - d.sinceMs;
      if (!d.handled && downForMs >= h.graceSeconds * 1000) {
        due.push({ host: h.name, why: st.why, downForSeconds: Math.floor(downForMs / 1000) });
      }
    }
    // A host no longer watched (segment's detection off, host removed or on maintenance) is forgotten.
    for (const name of [...this.down.keys()]) if (!watched.has(name)) this.down.delete(name);
    return due;
  }

  markHandled(host: string): void {
    const d = this.down.get(host);
    if (d) d.handled = true;
  }

  /** A blind look: nothing seen so far counts. */
  forget(): void {
    this.down.clear();
  }

  /** Hosts seen down now, for the metric. */
  size(): number {
    return this.down.size;
  }
}
