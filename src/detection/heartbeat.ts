// Whether a recovered host's nova-compute reports again. While forced_down is
// set Nova shows the service down whatever it does, but every report of a
// running nova-compute still writes the service row (report_count, nova's
// servicegroup/drivers/db.py), so updated_at advances about every
// report_interval. A person's `openstack compute service set` writes the row
// once too, and without forced_down Nova then shows the service up for
// service_down_time (nova/servicegroup/drivers/db.py is_up compares updated_at
// with now): neither `state: up` nor one move of updated_at tells a running
// nova-compute from one edit. A service counts as reporting at a look where
// its updated_at moved, once it has moved at REPORTS_NEEDED looks since the
// recovery finished (the recovery's own writes, disable and force down, all
// come before that). Comparing Nova's own timestamps with each other needs no
// agreement between Nova's clock and ours.
import type { NovaService } from '../openstack/types.ts';

/** Looks at which updated_at must have moved: more than one person's edit, as a running nova-compute does. */
export const REPORTS_NEEDED = 2;

interface Seen {
  /** Which recovery (notification uuid) the previous look belongs to. */
  recovery: string;
  updatedAt: string | null | undefined;
  /** Looks of this recovery at which updated_at had moved since the look before. */
  moves: number;
}

export class Heartbeats {
  private readonly seen = new Map<string, Seen>();

  /** Records this look at `host`'s service for the recovery `recovery`; true when it reports. */
  reporting(host: string, recovery: string, service: NovaService): boolean {
    const prev = this.seen.get(host);
    const same = prev?.recovery === recovery;
    const moved = same && !!service.updated_at && service.updated_at !== prev.updatedAt;
    const moves = (same ? prev.moves : 0) + (moved ? 1 : 0);
    this.seen.set(host, { recovery, updatedAt: service.updated_at, moves });
    return moved && moves >= REPORTS_NEEDED;
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
