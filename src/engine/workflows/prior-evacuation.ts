// Asking Nova what became of an evacuate this run may already have sent: the
// exactly-once half of one instance's evacuation (evacuate-instance.ts, whose
// header gives the whole contract). Kept apart from the procedure because it
// answers one question, "did Nova take an evacuate from us?", from Nova's own
// records (the server's host and task_state, the `evacuation` migrations),
// never from this process's clock, and both the resumed run and the evacuate
// call that got no answer ask it.

import type { NovaMigration, NovaServer } from '../../openstack/types.ts';
import { NovaError } from '../../openstack/types.ts';
import type { WorkflowContext } from './context.ts';
import { errorText, InstanceEvacuateFailed, migrationKey, serviceHost } from './evacuation-rules.ts';
import type { EvacuateIntent } from './evacuation-rules.ts';

/** How many times Nova is asked whether it accepted an evacuate whose answer was lost. */
const LOST_ANSWER_LOOKS = 3;

/** What Nova's records say about an evacuation we may have sent. */
export type PriorEvacuation = 'moved' | 'in-progress' | 'failed' | 'not-started';

/** The request id and the run's signal that every Nova call of the procedure carries. */
export interface NovaCall {
  requestId: string;
  signal: AbortSignal;
}

/** Nova's evacuation migrations of the server from the source host. */
export async function evacuationMigrations(
  ctx: WorkflowContext,
  call: NovaCall,
  uuid: string,
  sourceHost: string,
): Promise<NovaMigration[]> {
  const listed = await ctx.nova.listMigrations(
    { instanceUuid: uuid, migrationType: 'evacuation', sourceCompute: sourceHost },
    call,
  );
  return listed.filter(
    (m) => m.instance_uuid === uuid && m.migration_type === 'evacuation' && m.source_compute === sourceHost,
  );
}

/**
 * What Nova says about an evacuation we may have sent before (see
 * evacuate-instance.ts's header): only migrations not listed before the prior intent count, the
 * newest (highest id, Nova's own order) deciding.
 */
export function inspectPriorEvacuation(
  server: NovaServer,
  sourceHost: string,
  prior: EvacuateIntent | undefined,
  migrations: NovaMigration[],
): PriorEvacuation {
  const host = serviceHost(server);
  if (host !== null && host !== sourceHost) return 'moved';
  if (!prior) return 'not-started';
  if ((server['OS-EXT-STS:task_state'] ?? '').startsWith('rebuild')) return 'in-progress';
  const before = new Set(prior.priorMigrations ?? []);
  const latest = migrations.filter((m) => !before.has(migrationKey(m))).sort((a, b) => b.id - a.id)[0];
  if (!latest) return 'not-started';
  if (['failed', 'error', 'cancelled'].includes(latest.status)) return 'failed';
  return latest.status === 'done' || latest.status === 'completed' ? 'moved' : 'in-progress';
}

/**
 * After an evacuate that got no answer (a timeout or dropped connection once
 * the request was sent, or a 5xx from a proxy that may have forwarded it),
 * asks Nova whether it accepted the request before the move is failed. Nova
 * records an accepted evacuation before it answers (nova/compute/api.py
 * API.evacuate: an `evacuation` migration in status accepted, then
 * task_state rebuilding), so a server on another host, rebuilding, or with
 * a migration not listed before our intent means it did. A request still on
 * its way through Nova's API may not show yet, hence a few looks,
 * verify_interval apart. A 409 is asked about too, once: after a takeover
 * the deposed leader's evacuate may have reached Nova just before ours, and
 * Nova refuses ours because of it (task_state rebuilding); its state is
 * already visible when Nova answers. True: confirm as usual; false: the
 * move fails with the original error. A failed migration fails the move.
 */
export async function acceptedDespite(
  ctx: WorkflowContext,
  call: NovaCall,
  err: unknown,
  uuid: string,
  sourceHost: string,
  intent: EvacuateIntent,
): Promise<boolean> {
  if (!(err instanceof NovaError) || ctx.signal.aborted) return false;
  const conflict = err.status === 409;
  if (err.status !== 0 && err.status < 500 && !conflict) return false;
  const looks = conflict ? 1 : LOST_ANSWER_LOOKS;
  for (let look = 1; look <= looks; look++) {
    let seen: PriorEvacuation;
    try {
      const [server, migrations] = await Promise.all([
        ctx.nova.getServer(uuid, call),
        evacuationMigrations(ctx, call, uuid, sourceHost),
      ]);
      seen = inspectPriorEvacuation(server, sourceHost, intent, migrations);
    } catch (lookErr) {
      if (ctx.signal.aborted) throw lookErr;
      ctx.log.warn(
        { instance: uuid, err: errorText(lookErr) },
        'Could not ask Nova about a refused or unanswered evacuate',
      );
      return false;
    }
    if (seen === 'failed') throw new InstanceEvacuateFailed(uuid);
    if (seen !== 'not-started') {
      ctx.log.warn(
        { instance: uuid, err: errorText(err), seen },
        conflict
          ? 'Evacuate refused with 409 while an evacuation of the server is under way in Nova; confirming that one'
          : 'Evacuate got no answer, but Nova accepted it; confirming the evacuation',
      );
      return true;
    }
    if (look < looks) await ctx.clock.sleep(ctx.config.DEFAULT.verify_interval * 1000, ctx.signal);
  }
  return false;
}
