// One run of a recovery workflow: set the source host on maintenance when the
// decision says so (every (re)processing does, whatever the outcome, as
// Masakari), build the workflow's context — its journal written through the
// run's status writer — and call the driver's workflow. How it ended maps to
// an outcome (src/engine/run/outcomes.ts); only a cancelled or fenced-off run
// escapes as an exception.

import type { Logger } from 'pino';
import type { NovaClient } from '../../openstack/types.ts';
import type { AdmittedNotification } from '../intake/admitted-notification.ts';
import type { Plan } from '../intake/decisions.ts';
import { EVENT_REASONS } from '../telemetry/event-reasons.ts';
import { HaHostFlags } from './ha-host-flags.ts';
import { createRunJournal } from './journal.ts';
import { outcomeOf } from './outcomes.ts';
import type { Outcome } from './outcomes.ts';
import { segmentOf, sourceHostOf } from '../deps/lookups.ts';
import type { ProcessorDeps } from '../deps/processor-deps.ts';
import { runRecoveryWorkflow } from '../workflows/recovery-driver.ts';
import { JournalWriteError, NotOwnerError } from '../status/writer.ts';
import type { NotificationStatusWriter } from '../status/writer.ts';
import type { StartFallbackRun, WorkflowContext } from '../workflows/context.ts';

export interface WorkflowRun {
  n: AdmittedNotification;
  plan: Extract<Plan, { kind: 'workflow' }>;
  run: number;
  writer: NotificationStatusWriter;
  requestId: string;
  signal: AbortSignal;
  log: Logger;
  nova: NovaClient;
}

export async function runWorkflow(d: ProcessorDeps, r: WorkflowRun): Promise<Outcome> {
  const { n, plan, writer, signal, log } = r;
  const uuid = n.status.uuid;
  const flags = new HaHostFlags({
    kube: d.kube,
    namespace: d.namespace,
    hosts: d.hosts,
    clock: d.clock,
    log,
    signal,
  });
  const hostName = sourceHostOf(d, n)?.spec.name ?? n.spec.hostname;
  if (plan.maintenance !== 'none') {
    await flags.setOnMaintenance(hostName, plan.maintenance === 'on-and-unreserve');
    const h = sourceHostOf(d, n);
    if (h)
      d.events.onHost(
        h,
        'Normal',
        EVENT_REASONS.hostOnMaintenance,
        `Set host ${hostName} on maintenance (notification ${uuid}).`,
      );
  }
  const recoveryMethod = segmentOf(d, n)?.spec.recoveryMethod ?? 'auto';
  const contextOf = (run: number): WorkflowContext => ({
    notification: {
      uuid,
      type: n.spec.type,
      hostname: hostName,
      payload: n.spec.payload ?? {},
      generatedTime: n.spec.generatedTime,
      segmentUuid: n.status.failoverSegmentUuid,
      recoveryMethod,
    },
    run,
    nova: r.nova,
    config: d.config,
    clock: d.clock,
    log: log.child({ run }),
    signal,
    requestId: r.requestId,
    ...createRunJournal(writer, run, d.vmoveIds, d.clock),
    hosts: flags,
  });
  const startFallbackRun: StartFallbackRun = async () => {
    const stored = await writer.mutate((s) => {
      s.runs = (s.runs ?? 0) + 1;
    });
    const next = (stored.status?.runs ?? 1) - 1;
    log.warn({ run: next }, 'starting a priority fallback run');
    return contextOf(next);
  };
  try {
    await runRecoveryWorkflow(d.driver, plan.workflow, contextOf(r.run), startFallbackRun);
    return outcomeOf(plan.workflow, uuid, undefined);
  } catch (err) {
    if (signal.aborted || err instanceof NotOwnerError || err instanceof JournalWriteError) throw err;
    return outcomeOf(plan.workflow, uuid, err);
  }
}
