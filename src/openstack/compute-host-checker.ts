// The Nova adapter of the domain's ComputeHostChecker port (Masakari's
// compute/nova.py find_compute_service): a host may be registered only if Nova
// has a nova-compute service whose host equals the name exactly
// (case-sensitive). Nova's failures surface as Masakari surfaces them: 403
// stays 403, everything else becomes the API's 500. The one file of this
// library that knows the operator's domain (its error types).

import { NoComputeHostChecker, type ComputeHostChecker } from '../domain/compute-host-checker.ts';
import { Forbidden, UnexpectedApiError } from '../domain/errors.ts';
import type { NovaClient } from './types.ts';
import { NovaBadRequest, NovaConflict, NovaError, NovaForbidden, NovaNotFound } from './types.ts';

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

/** The checker for a process: Nova's when one is configured, else one that refuses every name. */
export function computeHostCheckerFor(nova: NovaClient | undefined): ComputeHostChecker {
  return nova ? new NovaComputeHostChecker(nova) : new NoComputeHostChecker();
}
