// Whether a recovered host's nova-compute reports again. While forced_down is
// set Nova shows the service down whatever it does, but every report of a
// running nova-compute still writes the service row (report_count, nova's
// servicegroup/drivers/db.py), so updated_at advances about every
// report_interval. A service counts as reporting when it is up, or when its
// updated_at changed between two looks taken after its recovery finished:
// the recovery's own writes (disable, force down) all come before that, and
// comparing two of Nova's own timestamps needs no agreement between Nova's
// clock and ours.
import type { NovaService } from '../openstack/types.ts';

interface Seen {
  /** Which recovery (notification uuid) the previous look belongs to. */
  recovery: string;
  updatedAt: string | null | undefined;
}

export class Heartbeats {
  private readonly seen = new Map<string, Seen>();

  /** Records this look at `host`'s service for the recovery `recovery`; true when it reports. */
  reporting(host: string, recovery: string, service: NovaService): boolean {
    if (service.state === 'up') return true;
    const prev = this.seen.get(host);
    this.seen.set(host, { recovery, updatedAt: service.updated_at });
    if (!prev || prev.recovery !== recovery) return false;
    return !!service.updated_at && service.updated_at !== prev.updatedAt;
  }

  /** The host is no longer waiting to come back (returned, or no longer a candidate). */
  forget(host: string): void {
    this.seen.delete(host);
  }

  /** Forgets every host not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const host of [...this.seen.keys()]) if (!keep.has(host)) this.seen.delete(host);
  }
}
