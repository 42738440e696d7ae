// Masakari's host-name check (compute/nova.py find_compute_service): a host
// may be registered only if Nova has a nova-compute service whose host equals
// the name exactly (case-sensitive). Nova's failures surface as Masakari
// surfaces them: 403 stays 403, everything else becomes the API's 500.

import type { NovaClient } from '../openstack/types.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaForbidden, NovaNotFound } from '../openstack/types.ts';
import { Forbidden, UnexpectedApiError } from './errors.ts';

export interface ComputeHostChecker {
  /** True when Nova knows a nova-compute service on exactly this host. Throws MasakariError on Nova failures. */
  exists(name: string, o?: { requestId?: string }): Promise<boolean>;
}

/**
 * The Python class Masakari names in its 500 message for each failure,
 * after its translate_nova_exception decorator has run.
 */
function masakariClassFor(e: NovaError): string {
  if (e instanceof NovaBadRequest) return 'masakari.exception.InvalidInput';
  if (e instanceof NovaNotFound) return 'masakari.exception.NotFound';
  if (e instanceof NovaConflict) return 'masakari.exception.Conflict';
  if (e.status === 0) return 'masakari.exception.MasakariException';
  return 'novaclient.exceptions.ClientException';
}

export class NovaComputeHostChecker implements ComputeHostChecker {
  constructor(private readonly nova: NovaClient) {}

  async exists(name: string, o: { requestId?: string } = {}): Promise<boolean> {
    try {
      const services = await this.nova.listServices({ binary: 'nova-compute', host: name }, o);
      // Nova filters by host itself; equality here keeps the check case-sensitive whatever its database collation.
      return services.some((s) => s.host === name);
    } catch (e) {
      if (e instanceof NovaForbidden) throw new Forbidden(`${e.message} (HTTP 403)`);
      if (e instanceof NovaError) throw new UnexpectedApiError(masakariClassFor(e));
      throw e;
    }
  }
}

/** Used when no Nova is configured: every name is refused, as Masakari would refuse an unknown compute service. */
export class NoComputeHostChecker implements ComputeHostChecker {
  async exists(): Promise<boolean> {
    throw new UnexpectedApiError('masakari.exception.MasakariException');
  }
}
