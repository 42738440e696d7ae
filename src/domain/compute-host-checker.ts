// Masakari's host-name check (compute/nova.py find_compute_service): a host
// may be registered only if Nova has a nova-compute service whose host equals
// the name exactly (case-sensitive). The domain owns the port; the Nova
// adapter (src/openstack/compute-host-checker.ts) implements it and turns
// Nova's failures into Masakari's errors.

import { UnexpectedApiError } from './errors.ts';

export interface ComputeHostChecker {
  /** True when Nova knows a nova-compute service on exactly this host. Throws MasakariError on Nova failures. */
  exists(name: string, o?: { requestId?: string }): Promise<boolean>;
}

/** Used when no Nova is configured: every name is refused, as Masakari would refuse an unknown compute service. */
export class NoComputeHostChecker implements ComputeHostChecker {
  async exists(): Promise<boolean> {
    throw new UnexpectedApiError('masakari.exception.MasakariException');
  }
}
